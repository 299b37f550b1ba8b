"""How help texts read: placeholders instead of Python types, no name broken across lines.

Every command is a :class:`ReplicateCommand` (``ReplicateTyper.command`` makes it so)
and every group a ``ReplicateGroup`` (``replicate.cli.base``) calling :func:`tidy_params`:

- an argument shows its name alone (``FILE...``, not ``FILE <list[Path]>``);
- an option without a metavar gets one: ``FILE`` for paths, else its name in capitals;
- help text wraps at spaces only, never inside ``umbrela-fallback@1`` or ``--per-item``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption, _TyperParameter

#: Stands in for "-" while help text is wrapped, so that no line breaks inside a
#: name (``umbrela-fallback@1``, ``--per-item``); same width, put back afterwards.
_HYPHEN = "\u2011"


# Typer's own Click classes (recent Typer versions carry their own copy of Click).
_Context: Any = TyperCommand.context_class
_Formatter: Any = _Context.formatter_class


class HelpFormatter(_Formatter):
    """Click's help formatter, wrapping at spaces only (never inside a hyphenated name)."""

    def write_text(self, text: str) -> None:
        super().write_text(text.replace("-", _HYPHEN))

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = [(a.replace("-", _HYPHEN), b.replace("-", _HYPHEN)) for a, b in rows]
        super().write_dl(rows, col_max, col_spacing)

    def getvalue(self) -> str:
        return str(super().getvalue()).replace(_HYPHEN, "-")


class ReplicateContext(_Context):
    formatter_class = HelpFormatter


def long_name(option: Any) -> str:
    """An option's long name (``--parser`` for ``-p/--parser``), else its first name."""
    return next((o for o in option.opts if o.startswith("--")), option.opts[0])


def _option_metavar(option: TyperOption) -> str | None:
    """A placeholder for an option given none: FILE for paths, else the option's name
    in capitals (``--seed SEED``); never a Python type (``<int>``, ``<list[str]>``)."""
    desc = getattr(option, "type_descriptor", None)
    if desc is not None:
        choice, path = bool(desc.is_choice), bool(desc.is_path)
    else:  # older Typer: a Click parameter type
        kind = getattr(getattr(option, "type", None), "name", "")
        choice, path = kind == "choice", kind == "path"
    if choice:
        return None  # choices list their values
    if path:
        return "FILE"
    return long_name(option).lstrip("-").replace("-", "_").upper()


def plain_runtime_param(param: Any) -> Any:
    """:meth:`get_runtime_param` of our parameters: a plain value converted without pydantic
    (:mod:`replicate.cli.coerce`), else Typer's own converter."""
    if param._runtime_param is None:
        from replicate.cli.coerce import plain_param

        param._runtime_param = plain_param(param.type_descriptor)
    if param._runtime_param is None:
        return _TyperParameter.get_runtime_param(param)
    return param._runtime_param


class ReplicateArgument(TyperArgument):
    """An argument shown by its name alone: ``FILE...``, never ``FILE <list[Path]>``; its numbers checked by
    :func:`check_number`; a plain value converted without pydantic (:func:`plain_runtime_param`)."""

    get_runtime_param = plain_runtime_param

    def process_value(self, ctx: Any, value: Any) -> Any:
        value = super().process_value(ctx, value)
        check_number(self, ctx, value)
        return value

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        if self.nargs != 1 and not name.endswith("...") and " " not in name:
            name += "..."
        if not self.required and not name.startswith("["):
            name = f"[{name}]"
        return name


#: The largest whole number an option takes: the largest a float holds exactly (a count beyond it is not
#: exact in any rate), far below where numpy's 64-bit integers overflow deep inside a computation
#: (``cells 10**23 ...``). A seed may be any 64-bit number (:data:`MAX_SEED`).
MAX_INT = 2**53 - 1
MAX_SEED = 2**64 - 1


def check_number(param: Any, ctx: Any, value: Any) -> None:
    """Refuse, as Click refuses a bad option, what no computation takes: a whole number beyond
    :data:`MAX_INT`, a negative seed, a number that is NaN or infinite (each of a repeated option too)."""
    for v in value if isinstance(value, (list, tuple)) else (value,):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if isinstance(v, float) and not math.isfinite(v):
            raise typer.BadParameter(f"{v} is not a finite number", ctx=ctx, param=param)
        if param.name == "seed" and not 0 <= v <= MAX_SEED:
            raise typer.BadParameter(f"{v}: a seed is a whole number from 0 to {MAX_SEED}", ctx=ctx, param=param)
        if param.name != "seed" and isinstance(v, int) and abs(v) > MAX_INT:
            raise typer.BadParameter(f"{v} is larger than {MAX_INT} in size", ctx=ctx, param=param)


class ReplicateOption(TyperOption):
    """An option whose numbers are checked by :func:`check_number`; a plain value converted without pydantic
    (:func:`plain_runtime_param`)."""

    get_runtime_param = plain_runtime_param

    def process_value(self, ctx: Any, value: Any) -> Any:
        value = super().process_value(ctx, value)
        check_number(self, ctx, value)
        return value


def tidy_params(params: list[Any]) -> None:
    for p in params:
        if isinstance(p, TyperArgument):
            p.__class__ = ReplicateArgument  # same fields; only how it is displayed and checked differs
        elif isinstance(p, TyperOption):
            p.__class__ = ReplicateOption
            if p.metavar is None and not p.is_flag and not p.count:
                p.metavar = _option_metavar(p)


class ReplicateCommand(TyperCommand):
    """A command whose help wraps at spaces only and names placeholders, not types."""

    context_class = ReplicateContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tidy_params(self.params)

    def get_params(self, ctx: Any) -> list[Any]:
        """Also the help option Typer adds after ``__init__``, as ours."""
        params = super().get_params(ctx)
        tidy_params(params)
        return params

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """Arguments, then the options in the panels of :data:`replicate.cli.panels.OPTION_PANELS`."""
        from replicate.cli.panels import option_panel, option_panels

        command = " ".join(ctx.command_path.split()[1:])
        args: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {title: [] for title in option_panels()}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append(record)
            elif param.param_type_name == "option":
                panels[option_panel(command, long_name(param))].append(record)
        sections = [("Arguments", args), *panels.items()]
        for title, rows in sections:
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class ReplicateTyper(typer.Typer):
    """A Typer application whose commands are :class:`ReplicateCommand` unless told otherwise."""

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(name, cls=cls or ReplicateCommand, **kwargs)


