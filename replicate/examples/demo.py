"""`replicate demo`: the chain of the bundled synthetic release, explained."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from replicate.diagnostics import Diagnostics, summary_text
from replicate.errors import UsageError
from replicate.output import Format, FormatArg, pct

if TYPE_CHECKING:
    from replicate.judge.compare import Comparison

INTRO = """\
replicate demo: a SYNTHETIC release of an LLM relevance judge, {versions} versions of
one model ("alpha"), each judging the same {items} query-passage pairs
(a DL 2019-like and a DL 2020-like split, pooled per version). The replies
come in the odd shapes real ones take, so the parser is named: {parser}.
Data: {where}

Each numbered row is one upgrade (old -> new), over the items every version
has; the first block counts items, the second gives the rates.
  both / only_old / only_new / neither: the four cells (only_old = the new
    version breaks an item the old one got right: a regression)
  unparsed           = outputs the parser could not read (old/new side)
  EM old, EM new     = share of items each version labels right
  regr.              = only_old / n, the rate most papers print
  regr./old-correct  = only_old / (both + only_old): the share of what the old
                       version got right that the upgrade loses
  backward           = only_new / n; regr. - backward = EM old - EM new, always
  change             = share of items whose label changed, right or wrong
  indep. ratio       = regr. / (EM old x (1 - EM new)); near 0: the new version
                       repeats the old one's mistakes; 1: errors unrelated AND
                       every item equally hard (items differ, so unrelated
                       judges already score below 1: see the baselines)
  McNemar p          = exact test of whether the two accuracies differ
"""

OUTRO = """\
The same data read by {other} (regression rate per edge):
{diff}
The parser is part of the result: every output names it.

Next:
{next}"""

NEXT = """\
  replicate compare {a} \\
      {b} --parser {parser}
  replicate chain --runs {toml} --parser {parser} --unparsed wrong
  replicate cells 6252 5776 1455 7163      (figures from a table printed in a paper)
"""

NEXT_GENERATED = """\
  replicate demo example/       (writes the example release to example/ and keeps it,
                                 to try 'replicate compare' and 'replicate chain' on)
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


@dataclass(frozen=True)
class Demo:
    """What the demo shows: the chain of the example release, and its explanation as text.

    ``data`` is where the release lies (None for a temporary copy, gone after
    the demo); ``text`` is the table or markdown explanation (it lists the
    load's warnings itself); JSON is :meth:`to_json` plus the warnings.
    """

    data: str | None
    edges: list[Comparison]
    diagnostics: Diagnostics
    text: str

    def to_json(self) -> dict:
        return {"data": self.data, "edges": [e.to_json() for e in self.edges]}


def run_demo(path: Path | None, *, parser: str, fmt: FormatArg = Format.table) -> Demo:
    """The demo of the release in ``path``, its text rendered in ``fmt`` (table or markdown).

    ``path`` None: the bundled fixtures/example, or, when the package was
    installed without it, the same release rebuilt into a temporary directory
    that is removed afterwards. A ``path`` that does not exist yet (or is an
    empty directory) gets the example release written to it and kept.
    """
    fmt = Format(fmt)
    if path is None:
        path = bundled_example()
        if path is None:
            with tempfile.TemporaryDirectory(prefix="replicate-demo-") as tmp:
                return _demo(_write(Path(tmp) / "example"), parser, fmt, note="a temporary copy, removed afterwards", kept=False)
        return _demo(path, parser, fmt)
    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return _demo(_write(path), parser, fmt, note=f"written to {_short(path)}")
    return _demo(path, parser, fmt)


def _count_word(n: int) -> str:
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[n] if n < len(words) else str(n)


def _write(where: Path) -> Path:
    from replicate.examples.judge_release import write_example

    return write_example(where)


def _demo(where: Path, parser: str, fmt: Format, *, note: str | None = None, kept: bool = True) -> Demo:
    """``note`` says where a generated release went; ``kept`` False: it is gone after the demo."""
    from replicate.judge.api import load_runs
    from replicate.judge.compare import chain
    from replicate.judge.render import chain_text
    from replicate.judge.select import runs_from_toml
    from replicate.judge.uncertainty import Uncertainty

    toml = where / "runs.toml"
    if not toml.is_file():
        raise UsageError(f"{where} has no runs.toml: give a directory made by tools/make_example.py")
    loaded = load_runs(runs_from_toml(toml))
    edges = chain(loaded.labelled(parser), uncertainty=Uncertainty())  # the example's keys: query_id / corpus_id
    text_fmt = Format.table if fmt is Format.json else fmt
    other = "umbrela-strict@1" if parser != "umbrela-strict@1" else "umbrela-fallback@1"
    items = edges[0].shared_items if edges else 0
    place = _short(where) if note is None else f"the bundled example release ({note})"
    text = INTRO.format(versions=_count_word(len(loaded.runs)), items=items, parser=parser, where=place)
    text += "\n" + chain_text(edges, text_fmt) + "\n"
    runs = loaded.runs
    follow = NEXT_GENERATED
    if kept:
        follow = NEXT.format(
            a=_short(runs[0].files[0].provenance.path),
            b=_short(runs[1].files[0].provenance.path),
            parser=parser,
            toml=_short(toml),
        )
    text += OUTRO.format(other=other, diff=_other_reading(loaded, other), next=follow)
    warnings = summary_text(loaded.diagnostics)
    text += ("\n" + warnings) if warnings else ""
    return Demo(str(where) if kept else None, edges, loaded.diagnostics, text)


def _other_reading(loaded, other: str) -> str:
    """Regression rate per edge under the other umbrela parser (``-`` where no item is left to compare)."""
    from replicate.judge.compare import chain

    try:
        other_edges = chain(loaded.labelled(other), uncertainty=None)
    except UsageError:
        return f"  ({other} is not installed)"
    return "\n".join(
        f"  {e.old.name} -> {e.new.name}: {pct(e.cells.regression_rate, 1)}"
        f" over n = {e.cells.n} (unparsed {e.old.unparsed}/{e.new.unparsed})"
        for e in other_edges
    )
