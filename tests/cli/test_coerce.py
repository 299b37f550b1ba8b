"""Option values converted without pydantic (replicate.cli.coerce) come out as Typer's own adapter gives them.

Every parameter of every command, over plain and unusual values of its kind: the same value and type, or the
same error (type and message). Typer's adapter (pydantic) is the reference.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
import typer
from typer._click import Context
from typer._coercion import build_runtime_param
from typer.main import get_command

from replicate.cli.app import app
from replicate.cli.coerce import PlainParam, plain_param

STR = ["x", "", "umbrela-fallback@1", "a\udcff", "é\x1fz", " padded "]
INT = ["0", "7", "-3", "007", "+5", " 5", "1_000", "1.0", "1e3", "abc", "", "99999999999999999999", "20", "19",
       "65535", "65536", 5, 0, -1, True]
FLOAT = ["0.05", "1", "-1.5E-3", ".5", "5.", "nan", "inf", "1_0.0", "x", "1e400", 3, 0.5]
BOOL = [True, False, "true", "0", 1]


def _params():
    out = []

    def walk(cmd: Any, path: list[str]) -> None:
        ctx = Context(cmd, info_name=" ".join(path) or "replicate")
        for p in cmd.get_params(ctx):
            out.append(pytest.param(p, ctx, id=f"{' '.join(path) or 'root'}:{p.name}"))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return out


def _values(annotation: Any, tmp: Path) -> list[Any]:
    if get_origin(annotation) is list:
        leaf = get_args(annotation)[0]
        values = _values(leaf, tmp)
        return [values[:3], values[-2:], [], values[0], tuple(values[:2])]
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        members = list(annotation)
        return [*members, *(m.value for m in members), *(str(m.value).upper() for m in members), "nope", ""]
    if annotation is Path:
        (tmp / "file.jsonl").write_text("{}\n")
        return [str(tmp / "file.jsonl"), str(tmp), str(tmp / "missing"), "rel//dir/", "-", "", "x\x00y",
                tmp / "file.jsonl", "a\udcff"]
    return {str: STR, int: INT, float: FLOAT, bool: BOOL}.get(annotation, STR)


def _outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # noqa: BLE001 - compared as they are
        return "error", (type(exc), str(exc))
    return "value", (type(got), [(type(v), repr(v)) for v in got] if isinstance(got, list) else repr(got))


@pytest.mark.parametrize(("param", "ctx"), _params())
def test_every_option_converts_as_typers_adapter(param, ctx, tmp_path):
    descriptor = param.type_descriptor
    ours = plain_param(descriptor)
    if ours is None:
        pytest.skip(f"{descriptor.annotation!r}: converted by Typer itself")
    assert isinstance(ours, PlainParam)
    theirs = build_runtime_param(descriptor)
    for value in [None, *_values(descriptor.annotation, tmp_path)]:
        assert _outcome(ours, value, param, ctx) == _outcome(theirs, value, param, ctx), (descriptor.annotation, value)


def test_every_option_of_the_command_line_is_converted_plainly():
    # a new kind of option (another annotation, a parser=, min on a float) would import pydantic again
    kinds = {p.values[0].name: plain_param(p.values[0].type_descriptor) for p in _params()}
    assert [name for name, ours in kinds.items() if ours is None] == []


def test_a_plain_value_converts_without_the_adapter_and_an_unusual_one_goes_to_it(monkeypatch):
    import replicate.cli.coerce as coerce

    built = []
    monkeypatch.setattr(coerce, "build_runtime_param", lambda d: built.append(d) or build_runtime_param(d))
    root = get_command(app)
    parse = root.commands["parse"]
    ctx = Context(parse, info_name="parse")
    seed = next(p for p in parse.get_params(ctx) if p.name == "seed")
    seed._runtime_param = None
    assert seed.get_runtime_param().coerce("12", param=seed, ctx=ctx) == 12 and built == []
    assert seed.get_runtime_param().coerce("1_2", param=seed, ctx=ctx) == 12 and len(built) == 1


def test_an_option_of_another_kind_is_converted_by_typer():
    from replicate.cli.help import ReplicateOption, ReplicateTyper

    tiny = ReplicateTyper()

    @tiny.command()
    def when(at: datetime = typer.Option(...), n: int = 1) -> None:  # noqa: B008 - typer's idiom
        """A command with a date."""

    cmd = get_command(tiny)
    ctx = Context(cmd, info_name="when")
    at = next(p for p in cmd.get_params(ctx) if p.name == "at")
    assert isinstance(at, ReplicateOption) and plain_param(at.type_descriptor) is None
    assert not isinstance(at.get_runtime_param(), PlainParam)
    assert at.get_runtime_param().coerce("2024-05-01", param=at, ctx=ctx) == datetime(2024, 5, 1)


def test_no_default_of_any_option_goes_to_typers_converter(monkeypatch):
    # a default is converted too (--root's Path(".") once went to the adapter, importing pydantic for verify)
    import replicate.cli.coerce as coerce

    built = []
    monkeypatch.setattr(coerce, "build_runtime_param", lambda d: built.append(d) or build_runtime_param(d))
    defaults = 0
    for p in _params():
        param, ctx = p.values
        default = param.get_default(ctx, call=True)
        if default is None:
            continue
        defaults += 1
        plain_param(param.type_descriptor).coerce(default, param=param, ctx=ctx)
        assert built == [], f"{p.id}: its default {default!r} went to Typer's converter"
    assert defaults > 100  # the walk found the defaults
