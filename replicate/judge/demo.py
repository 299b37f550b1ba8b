"""`replicate demo`: the chain of the bundled synthetic release, explained."""

from __future__ import annotations

import tempfile
from pathlib import Path

from replicate.errors import UsageError
from replicate.output import Format, dumps_json

INTRO = """\
replicate demo: a SYNTHETIC release of an LLM relevance judge, four versions of
one model ("alpha"), each judging the same {items} query-passage pairs
(a DL 2019-like and a DL 2020-like split, pooled per version). The replies
come in the odd shapes real ones take, so the parser is named: {parser}.
Data: {where}

Each row below is one upgrade (old -> new), over the items every version has.
  both / only_old / only_new / neither: the four cells (only_old = the new
    version breaks an item the old one got right: a regression)
  regr.              = only_old / n, the rate most papers print
  regr./old-correct  = only_old / (both + only_old): the share of what the old
                       version got right that the upgrade loses
  backward           = only_new / n; regr. - backward = EM old - EM new, always
  indep. ratio       = regr. / (EM old x (1 - EM new)); near 0: the new version
                       repeats the old one's mistakes; near 1: a different judge
"""

OUTRO = """\
The same data read by {other} (regression rate per edge):
{diff}
The parser is part of the result: every output names it.

Next:
  replicate compare {a} {b} --parser {parser}
  replicate chain --runs {toml} --parser {parser} --unparsed wrong
  replicate cells 6252 5776 1455 7163      (figures from a table printed in a paper)
"""


def bundled_example() -> Path | None:
    """fixtures/example next to the package (an editable or source install), if present."""
    import replicate

    candidate = Path(replicate.__file__).resolve().parent.parent / "fixtures" / "example"
    return candidate if (candidate / "runs.toml").is_file() else None


def _short(path: str | Path) -> str:
    """A path relative to the working directory when it lies below it."""
    import os

    p = Path(path).resolve()
    try:
        return os.path.relpath(p) if p.is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


def run_demo(path: Path | None, *, parser: str, fmt: Format | str = Format.table) -> str:
    from replicate.judge.api import load_runs
    from replicate.judge.compare import chain
    from replicate.judge.render import chain_text, warnings_text
    from replicate.judge.runs import runs_from_toml

    fmt = Format(fmt)
    where = path if path is not None else bundled_example()
    generated = False
    if where is None:
        from replicate.judge.synth import write_example

        where = write_example(Path(tempfile.mkdtemp(prefix="replicate-demo-")) / "example")
        generated = True
    toml = Path(where) / "runs.toml"
    if not toml.is_file():
        raise UsageError(f"{where} has no runs.toml: give a directory made by fixtures/make_example.py")
    loaded = load_runs(runs_from_toml(toml))
    edges = chain(loaded.labelled(parser))
    if fmt is Format.json:
        return dumps_json({"data": str(where), "edges": [e.to_json() for e in edges], "warnings": loaded.diagnostics.to_json()})
    other = "umbrela-strict@1" if parser != "umbrela-strict@1" else "umbrela-fallback@1"
    try:
        other_edges = chain(loaded.labelled(other))
        diff = "\n".join(
            f"  {e.old.name} -> {e.new.name}: {100 * (e.cells.regression_rate or 0):.1f}%"
            f" over n = {e.cells.n} (unparsed {e.old.unparsed}/{e.new.unparsed})"
            for e in other_edges
        )
    except UsageError:
        diff = f"  ({other} is not installed)"
    items = edges[0].shared_items if edges else 0
    place = f"{_short(where)} (generated: the bundled folder was not found)" if generated else _short(where)
    text = INTRO.format(items=items, parser=parser, where=place)
    text += "\n" + chain_text(edges, fmt) + "\n"
    runs = loaded.runs
    text += OUTRO.format(
        other=other,
        diff=diff,
        a=_short(runs[0].files[0].provenance.path),
        b=_short(runs[1].files[0].provenance.path),
        parser=parser,
        toml=_short(toml),
    )
    warnings = warnings_text(loaded.diagnostics)
    return text + (("\n" + warnings) if warnings else "")
