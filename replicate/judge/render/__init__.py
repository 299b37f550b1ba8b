"""Text and markdown rendering of comparisons, chains and parse summaries (pure).

JSON output is ``to_json()`` of the values; this module writes what a person
reads: a four-cell table, the figures with their default 95% intervals, unparsed
counts per side, McNemar's p, the identity check and a one-line reading.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from replicate.diagnostics import summary_text
from replicate.judge.compare import Comparison
from replicate.judge.model import KEY_SEP, extraction_failures
from replicate.judge.uncertainty import EdgeUncertainty
from replicate.labels import LabelSet, label_name
from replicate.output import Format, FormatArg, num, pct, prose_width, table
from replicate.pairwise.layout import POSITIONS_NOTE, game_index, is_pairwise
from replicate.stats.countintervals import CellFigures
from replicate.stats.fourcell import PROPORTIONS, FourCell
from replicate.stats.paired import p_display

if TYPE_CHECKING:
    from replicate.judge.parsed import ParseIntervals
    from replicate.judge.render.errors import Intervals
    from replicate.provenance import FileProvenance


def _ci(cells: FourCell, figure: str, confidence_level: float = 0.95) -> str:
    ci = cells.confidence_interval(figure, confidence_level=confidence_level)
    return "-" if ci is None else f"[{pct(ci[0], 1)}, {pct(ci[1], 1)}]"


_p = p_display


def heading(text: str, fmt: Format, level: int = 2) -> str:
    """A section heading: ``#`` marks in markdown, an underline in plain text (``=`` for level 2, ``-`` below)."""
    if fmt is Format.markdown:
        return f"{'#' * level} {text}\n"
    return f"{text}\n{('=' if level <= 2 else '-') * len(text)}\n"


def cells_table(cells: FourCell, fmt: FormatArg, *, old: str = "old", new: str = "new") -> str:
    """The four cells as a 2x2 table with margins."""
    rows = [
        [f"{old} right", f"{cells.both} (both)", f"{cells.only_old} (only_old)", str(cells.old_correct)],
        [f"{old} wrong", f"{cells.only_new} (only_new)", f"{cells.neither} (neither)", str(cells.n - cells.old_correct)],
        ["total", str(cells.new_correct), str(cells.n - cells.new_correct), str(cells.n)],
    ]
    return table(rows, ["", f"{new} right", f"{new} wrong", "total"], fmt)


def figures_table(
    cells: FourCell,
    fmt: FormatArg,
    *,
    change_rate: float | None = None,
    from_labels: bool = False,
    error: EdgeUncertainty | None = None,
    confidence_level: float = 0.95,
    counted: CellFigures | None = None,
) -> str:
    """Every figure of one edge with its definition and its default interval (one column, the method in its header).

    ``from_labels`` (the figures of a comparison of labelled runs) adds the change rate, which the four
    cells alone cannot give; it shows ``-`` when undefined (n = 0). Without ``error`` (or with
    ``--replicates 0``) the interval is the Wilson one of each proportion; with ``error`` resampled it is the
    bootstrap interval of every figure (a proportion's never narrower than its Wilson interval), and rows
    for the paired EM difference and the clustered McNemar test follow.
    With ``counted`` (a table of counts: every interval assumes independent items) one interval column
    holds the Wilson intervals of the proportions and the item-bootstrap ones of the EM difference and the ratio.
    """
    from replicate.judge.render.errors import interval_cell, method_header

    rows = [
        ["EM old", "(both + only_old) / n", pct(cells.em_old), "em_old"],
        ["EM new", "(both + only_new) / n", pct(cells.em_new), "em_new"],
    ]
    if error is not None or counted is not None:
        rows.append(["EM difference", "EM old - EM new (paired)", pct(cells.accuracy_difference), "accuracy_difference"])
    rows += [
        ["regression rate", "only_old / n", pct(cells.regression_rate), "regression_rate"],
        [
            "regression share of old-correct",
            "only_old / (both + only_old)",
            pct(cells.regression_share_of_old_correct),
            "regression_share_of_old_correct",
        ],
        ["backward rate", "only_new / n", pct(cells.backward_rate), "backward_rate"],
    ]
    if from_labels:
        rows.append(["change rate", "labels differ / n", pct(change_rate), "change_rate"])
    rows += [
        [
            "independent regression rate", "EM old x (1 - EM new)", pct(cells.independent_regression_rate),
            "independent_regression_rate",
        ],
        ["independence ratio", "regression / independent", num(cells.independence_ratio, 2), "independence_ratio"],
        ["McNemar p (indep. items)", "only_old vs only_new, exact", _p(cells.mcnemar_p()), ""],
    ]
    if counted is not None:
        level = f"{100 * counted.confidence_level:g}%"
        out = [r[:3] + [interval_cell(counted.interval.get(r[3]), r[3]) if r[3] else ""] for r in rows]
        return table(out, ["figure", "definition", "value", f"{level} CI (independent items)"], fmt)
    if error is not None and error.resampled:  # the default interval (replicate.stats.cimap): the bootstrap's
        out = [r[:3] + [interval_cell(error.interval.get(r[3]), r[3]) if r[3] else ""] for r in rows]
        headers = ["figure", "definition", "value", method_header(error, confidence_level)]
    else:  # no bootstrap (none asked, or --replicates 0): the Wilson intervals of the proportions
        out = [r[:3] + [_ci(cells, r[3], confidence_level) if r[3] in PROPORTIONS else ""] for r in rows]
        headers = ["figure", "definition", "value", f"{100 * confidence_level:g}% CI (Wilson)"]
    if error is not None:  # the clustered test needs no resampling
        out.append(["McNemar clustered p", f"by {error.cluster or 'item'} (Durkalski)", _p(error.mcnemar_p), ""])
    return table(out, headers, fmt)


def identity_line(cells: FourCell) -> str:
    """regression - backward = EM old - EM new, shown with the numbers."""
    if cells.n == 0:
        return "identity: undefined (n = 0)"
    reg, back, em_old, em_new = cells.regression_rate, cells.backward_rate, cells.em_old, cells.em_new
    assert reg is not None and back is not None and em_old is not None and em_new is not None  # n > 0
    lhs = reg - back
    rhs = em_old - em_new
    ok = (cells.only_old - cells.only_new) == (cells.old_correct - cells.new_correct)
    return (
        f"identity: regression - backward = {pct(cells.regression_rate)} - {pct(cells.backward_rate)} = {pct(lhs)}"
        f" = EM old - EM new = {pct(cells.em_old)} - {pct(cells.em_new)} = {pct(rhs)}"
        f" ({'holds' if ok else 'FAILS'}: the asymmetry says nothing beyond the accuracy difference)"
    )


def reading(cells: FourCell, error: Intervals | None = None, no_verdict: str | None = None) -> str:
    """One plain-language sentence about an edge, claiming no more than the figures (and intervals) show.

    ``no_verdict``: why the data carry no verdict (the small-sample flag): the ratio is shown, not read.
    """
    from replicate.judge.render.errors import ratio_reading

    if cells.n == 0:
        return "Reading: no item has a usable label on both sides; nothing to compare."
    share = cells.regression_share_of_old_correct
    if share is None:
        lost = "the old version got nothing right, so there is nothing to lose"
    else:
        lost = (
            f"the new version loses {pct(share, 1)} of what the old one got right "
            f"({cells.only_old} of {cells.old_correct} items) and gains {cells.only_new} it got wrong"
        )
    return f"Reading: {lost}; {ratio_reading(cells, error, no_verdict)}."


def _small(cmp: Comparison) -> str | None:
    """The edge's small-sample flag in words (no verdict on it), else None."""
    if not cmp.small or cmp.settings is None:
        return None
    return f"only n = {cmp.cells.n} items compared, fewer than --min-items {cmp.settings.min_items}"


def _files_line(side, shared: int) -> str:
    extra = []
    rewritten = sum(f.rewritten for f in side.files)
    if rewritten:
        extra.append(f"{rewritten} rewritten by a retry script (original_output kept)")
    skipped = sum(f.skipped for f in side.files)
    if skipped:
        extra.append(f"{skipped} line(s) skipped with a warning")
    failed = extraction_failures(side.files)
    if failed is not None:
        extra.append(f"{failed} extraction failure(s): the file's own filter found no answer ([invalid]), "
                     "counted among the unparsed")
    tail = f"\n    {'; '.join(extra)}" if extra else ""
    files = ", ".join(f.provenance.path for f in side.files)
    own = side.items - shared
    only = f" ({own} not in the other run)" if own else ""
    return (
        f"  {side.name}: {side.items} items{only}, {side.unparsed} unparsed "
        f"({side.unparsed_shared} of them on shared items){tail}\n    files: {files}"
    )


def comparison_text(cmp: Comparison, fmt: FormatArg) -> str:
    """The full report of one edge (table or markdown)."""
    fmt = Format(fmt)
    c = cmp.cells
    head = f"{cmp.old.name} -> {cmp.new.name}"
    policy = (
        "intersect (items unparsed on either side are dropped)"
        if cmp.unparsed_policy == "intersect"
        else "wrong (an unparsed output counts as wrong)"
    )
    meta = [
        f"parser: {cmp.parser}; unparsed policy: {policy}",
        f"shared items: {cmp.shared_items}; compared n = {c.n}",
        "unparsed per side (over that side's items):",
        _files_line(cmp.old, cmp.shared_items),
        _files_line(cmp.new, cmp.shared_items),
    ]
    if fmt is Format.markdown:
        body = [f"## {head}", "", *(f"- {m.strip()}" for m in meta if not m.endswith(":")), ""]
    else:
        body = [head, "=" * len(head), *meta, ""]
    from replicate.judge.render.errors import error_lines

    body.append(cells_table(c, fmt, old=cmp.old.name, new=cmp.new.name))
    level = cmp.settings.confidence_level if cmp.settings is not None else 0.95
    body.append(
        figures_table(c, fmt, change_rate=cmp.change_rate, from_labels=True, error=cmp.uncertainty, confidence_level=level)
    )
    body += _prose([identity_line(c), reading(c, cmp.uncertainty, _small(cmp)), *error_lines(cmp)], fmt)
    if cmp.agreement:
        from replicate.judge.render.agreement import edge_agreement_text

        body.append(edge_agreement_text(cmp.agreement, fmt))
    if fmt is Format.markdown:
        body.append(_input_section([cmp.old, cmp.new]))
    return "\n".join(body) + "\n"


def _input_section(sides) -> str:
    """Markdown: what was read (per fetched release its source, commit and licence; every file's sha256)."""
    from replicate.provenance import provenance_markdown

    seen: dict[str, FileProvenance] = {}
    readers: dict[str, str] = {}
    for side in sides:
        for f in side.files:
            seen.setdefault(f.provenance.path, f.provenance)
            readers.setdefault(f.provenance.path, f.reader)
    return "\n### Input\n\n" + provenance_markdown(seen.values()) + "\n" + readers_line(readers)


def readers_line(readers: dict[str, str]) -> str:
    """Markdown: which reader read which files (``- Reader: `judge-jsonl@1` (every file)``)."""
    by_reader: dict[str, list[str]] = {}
    for path, name in readers.items():
        by_reader.setdefault(name, []).append(path)
    if len(by_reader) == 1:
        return f"- Reader: `{next(iter(by_reader))}` (every file)"
    parts = [f"`{name}` ({', '.join(f'`{p}`' for p in paths)})" for name, paths in by_reader.items()]
    return "- Readers: " + "; ".join(parts)


#: Plain-text prose lines are wrapped to this width (markdown lines are left whole: they reflow).
WIDTH = 100


def _prose(lines: list[str], fmt: Format) -> list[str]:
    if fmt is Format.markdown:
        return lines
    import textwrap

    width = prose_width(WIDTH)
    return [textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False) for line in lines]


def _col(attr: str, fmt=lambda v: v):
    """A chain column's value: an attribute of the edge's four cells, formatted."""
    return lambda e: fmt(getattr(e.cells, attr))


_OLD, _NEW, _N = (lambda e: e.old.name), (lambda e: e.new.name), _col("n")
_EM_OLD, _EM_NEW = _col("em_old", lambda v: pct(v, 1)), _col("em_new", lambda v: pct(v, 1))
_REGR, _SHARE = _col("regression_rate", lambda v: pct(v, 1)), _col("regression_share_of_old_correct", lambda v: pct(v, 1))
_BACKWARD, _RATIO = _col("backward_rate", lambda v: pct(v, 1)), _col("independence_ratio", lambda v: num(v, 2))
_CHANGE, _MCNEMAR = (lambda e: pct(e.change_rate, 1)), (lambda e: _p(e.cells.mcnemar_p()))
_UNPARSED = lambda e: f"{e.old.unparsed}/{e.new.unparsed}"  # noqa: E731

#: Markdown (and JSON-minded readers): one wide table, a row per edge.
_CHAIN_MARKDOWN = [
    ("old", _OLD), ("new", _NEW), ("n", _N),
    ("both/only_old/only_new/neither", lambda e: f"{e.cells.both}/{e.cells.only_old}/{e.cells.only_new}/{e.cells.neither}"),
    ("EM old", _EM_OLD), ("EM new", _EM_NEW), ("regr.", _REGR), ("regr./old-correct", _SHARE),
    ("backward", _BACKWARD), ("change", _CHANGE), ("indep. ratio", _RATIO), ("McNemar exact p (independent items)", _MCNEMAR),
    ("unparsed", _UNPARSED),
]
#: Plain text: the same figures in two blocks that each fit a 100-column terminal
#: (who and the counts, then the rates; rows matched by the edge number).
_CHAIN_TEXT_BLOCKS = [
    [("old", _OLD), ("new", _NEW), ("n", _N), ("both", _col("both")), ("only_old", _col("only_old")),
     ("only_new", _col("only_new")), ("neither", _col("neither")), ("unparsed\nold/new", _UNPARSED)],
    [("EM\nold", _EM_OLD), ("EM\nnew", _EM_NEW), ("regr.", _REGR), ("regr./\nold-correct", _SHARE),
     ("backward", _BACKWARD), ("change", _CHANGE), ("indep.\nratio", _RATIO), ("McNemar exact\np (indep.)", _MCNEMAR)],
]


def _failures_line(edges: Sequence[Comparison]) -> str | None:
    """Each run's extraction failures (among its unparsed), when its reader tells them apart."""
    told = {s.name: s.extraction_failures for e in edges for s in (e.old, e.new) if s.extraction_failures is not None}
    if not told:
        return None
    listed = ", ".join(f"{name} {n}" for name, n in told.items())
    return f"extraction failures (the file's own filter found no answer, [invalid]; among the unparsed): {listed}"


def chain_text(edges: Sequence[Comparison], fmt: FormatArg, *, flags: Sequence[Any] = ()) -> str:
    """One row per edge: one table in markdown, two narrower blocks in plain text; then intervals and flags."""
    from replicate.judge.render.errors import difficulty_table, edge_interval_table, mcnemar_table

    fmt = Format(fmt)
    if fmt is Format.markdown:
        out = table([[value(e) for _, value in _CHAIN_MARKDOWN] for e in edges], [h for h, _ in _CHAIN_MARKDOWN], fmt)
    else:
        blocks = [
            table([[k, *(value(e) for _, value in cols)] for k, e in enumerate(edges, 1)], ["#", *(h for h, _ in cols)], fmt)
            for cols in _CHAIN_TEXT_BLOCKS
        ]
        out = "\n".join(blocks)
    if edges and edges[0].uncertainty is not None:
        out += "\n" + (edge_interval_table(edges, fmt) if edges[0].uncertainty.resampled else mcnemar_table(edges, fmt))
        given = difficulty_table(edges, fmt)
        out += "\n" + given if given else ""
    if edges:
        e = edges[0]
        where = f"parser: {e.parser}; unparsed policy: {e.unparsed_policy}; items shared by all runs: {e.shared_items};"
        sep = " " if fmt is Format.markdown else "\n"  # plain text: two short lines
        out += f"\n{where}{sep}unparsed = old/new over each run's items\n"
        failed = _failures_line(edges)
        if failed:
            out += failed + "\n"
        if flags:
            prefix = "- " if fmt is Format.markdown else "  "
            out += "\nflags:\n" + "".join(f"{prefix}{f}\n" for f in flags)
        if fmt is Format.markdown:
            out += _input_section([side for e in edges for side in (e.old, e.new)]) + "\n"
    return out


def cells_text(figs: CellFigures, fmt: FormatArg, *, flag: Any = None) -> str:
    """Figures derived from a four-cell table alone (no change rate: it needs the labels), with their intervals.

    ``flag``: the table's small-sample flag (:class:`~replicate.judge.samples.CellsReport`), shown as a warning.
    """
    fmt = Format(fmt)
    cells = figs.cells
    note = (
        f"Intervals assume independent items: a table of counts has no cluster key, so where items are "
        f"clustered (passages judged for one query) they are too narrow. Wilson score intervals for the "
        f"proportions; item bootstrap from the counts ({figs.replicates} replicates, seed {figs.seed}, "
        "percentile method) for the EM difference, the independent regression rate and the ratio."
    )
    parts = [
        cells_table(cells, fmt),
        figures_table(cells, fmt, counted=figs),
        *_prose([
            identity_line(cells), reading(cells, figs, None if flag is None else flag.message), note,
            *([] if flag is None else [f"Warning: {flag.message}."]),
        ], fmt),
    ]
    return "\n".join(parts) + "\n"


@dataclass(frozen=True)
class ParseSummary:
    """What one parser made of one run's outputs."""

    run: str
    parser: str
    lines: int
    records: int
    parsed: int
    unparsed: int
    labels: dict[int, int]
    gold: dict[int, int]
    rewritten: int
    thoughts: int
    skipped: int
    output_fields: tuple[str, ...]
    files: tuple
    reader: str = "-"
    #: Bootstrap intervals of the shares (``parse --replicates N``, N > 0).
    intervals: ParseIntervals | None = None
    #: Of the unparsed, the records whose answer the file's own extraction did not find (None: not told).
    extraction_failures: int | None = None
    #: The parser's (or reader's) label set: labels and gold are shown by its names when it names them.
    label_set: LabelSet | None = None
    #: Items that are games of both-order pairwise judgments: what their labels are about (None: other items).
    positions: str | None = None
    #: For such items keyed by game (Arena-Hard): each game's label counts, the table split by game.
    by_game: dict[str, dict[int, int]] | None = None

    def name(self, code: int) -> int | str:
        """How label ``code`` is shown (:func:`~replicate.labels.label_name`)."""
        return label_name(code, self.label_set)

    @property
    def shown_labels(self) -> list[int]:
        """The labels of the distribution table: read by the parser or present in gold."""
        return sorted(set(self.labels) | set(self.gold))

    def rate(self, count: int) -> float | None:
        return count / self.records if self.records else None

    def label_share(self, label: int) -> float | None:
        return self.labels.get(label, 0) / self.parsed if self.parsed else None

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "run": self.run,
            "parser": self.parser,
            "reader": self.reader,
            "lines": self.lines,
            "records": self.records,
            "parsed": self.parsed,
            "unparsed": self.unparsed,
            **({} if self.extraction_failures is None else {"extraction_failures": self.extraction_failures}),
            "labels": {str(self.name(k)): v for k, v in sorted(self.labels.items())},
            "gold": {str(self.name(k)): v for k, v in sorted(self.gold.items())},
            "rewritten": self.rewritten,
            "thoughts": self.thoughts,
            "skipped": self.skipped,
            "output_fields": list(self.output_fields),
            "files": [f.to_json() for f in self.files],
        }
        if self.label_set is not None:
            out["label_set"] = self.label_set.to_json()
        if self.positions is not None:
            out["positions"] = self.positions
        if self.by_game is not None:
            out["labels_by_game"] = {g: {str(self.name(k)): v for k, v in sorted(c.items())} for g, c in self.by_game.items()}
        iv = self.intervals
        if iv is not None:
            out["shares"] = {
                "parsed_rate": self.rate(self.parsed),
                "unparsed_rate": self.rate(self.unparsed),
                "interval": {k: v.to_json() for k, v in iv.rates.items()},
            }
            out["label_shares"] = {
                str(self.name(k)): {"share": self.label_share(k), "interval": {"share": iv.labels[k].to_json()}}
                for k in self.shown_labels
            }
            out["uncertainty"] = {k: v for k, v in iv.settings.to_json().items() if k != "min_items"}  # no verdict here
        return out


def parse_summary(labelled, run, intervals: Callable[[Any, Sequence[int]], ParseIntervals] | None = None) -> ParseSummary:
    """What ``labelled`` (``run`` read by one parser) holds; ``intervals(labelled, labels)`` adds the shares' intervals."""
    labels = Counter(int(x) for x in labelled.labels if x >= 0)
    gold = Counter(int(x) for x in run.gold if x >= 0)  # NO_GOLD (-1): the file carries none
    ivs = None if intervals is None else intervals(labelled, sorted(set(labels) | set(gold)))
    positions, by_game = _positions(labelled)
    return ParseSummary(
        run=run.name,
        parser=labelled.parser,
        lines=sum(f.lines for f in run.files),
        records=len(run),
        parsed=len(run) - labelled.unparsed,
        unparsed=labelled.unparsed,
        labels=dict(labels),
        gold=dict(gold),
        rewritten=sum(f.rewritten for f in run.files),
        thoughts=sum(f.thoughts for f in run.files),
        skipped=sum(f.skipped for f in run.files),
        output_fields=tuple(dict.fromkeys(f.output_field for f in run.files if f.output_field)),
        files=run.files,
        reader=run.reader,
        intervals=ivs,
        extraction_failures=extraction_failures(run.files),
        label_set=labelled.label_set,
        positions=positions,
        by_game=by_game,
    )


def _positions(labelled) -> tuple[str | None, dict[str, dict[int, int]] | None]:
    """For games of both-order pairwise judgments: what their labels are about, and the counts per game."""
    names = getattr(labelled, "key_names", None)
    if not is_pairwise(names):
        return None, None
    at = game_index(names)
    if at is None:
        return POSITIONS_NOTE.format(what="both games of each record are counted here together (A is the model "
                                          "named first in each item's key)"), None
    by_game: dict[str, Counter[int]] = {}
    for key, label in zip(labelled.keys.tolist(), labelled.labels.tolist()):
        counts = by_game.setdefault(key.split(KEY_SEP)[at], Counter())
        if label >= 0:
            counts[int(label)] += 1
    note = POSITIONS_NOTE.format(what="the counts are split by game (game 1 shows the baseline as A, game 2 the model)")
    return note, {g: dict(c) for g, c in sorted(by_game.items())}


def parse_text(s: ParseSummary, fmt: FormatArg) -> str:
    from replicate.judge.render.errors import how_resampled, with_interval

    iv = s.intervals

    def share(value: float | None, key: str | int) -> str:
        """A share in percent, then its interval (``key``: a rate's name or a label) when there is one."""
        if iv is None or value is None:
            return pct(value, 1)
        return with_interval(pct(value, 1), iv.rates[key] if isinstance(key, str) else iv.labels[key], "share")

    rows: list[list[Any]] = [
        ["lines", s.lines],
        ["records (items)", s.records],
        ["parsed", f"{s.parsed} ({share(s.rate(s.parsed), 'parsed_rate')})"],
        ["unparsed", f"{s.unparsed} ({share(s.rate(s.unparsed), 'unparsed_rate')})"],
        *([] if s.extraction_failures is None else [["of unparsed: no answer found ([invalid])", s.extraction_failures]]),
        ["skipped lines (warned)", s.skipped],
        ["rewritten (original_output kept)", s.rewritten],
        ["with a non-empty thought", s.thoughts],
        ["output field", ", ".join(s.output_fields) or "-"],
    ]
    head = f"{s.run}: read with {s.parser}\n"
    if Format(fmt) is Format.markdown:
        head = f"## {head}\n"
    by_game = s.by_game or {}
    games = list(by_game)
    dist_rows = [
        [s.name(k), s.labels.get(k, 0), share(s.label_share(k), k), *(by_game[g].get(k, 0) for g in games),
         s.gold.get(k, 0)]
        for k in s.shown_labels
    ]
    dist_rows.append(["unparsed", s.unparsed, "", *([""] * len(games)), ""])
    headers = ["label", "count", "share of parsed", *(f"game {g}" for g in games), "gold count"]
    out = head + table(rows, ["", "count"], fmt) + "\n" + table(dist_rows, headers, fmt)
    if s.positions is not None:
        out += f"\nPairwise games: {s.positions}.\n"
    if iv is not None and s.records:
        out += f"\nIntervals: {how_resampled(iv.rates['unparsed_rate'])}.\n"
    return out


#: The stderr summary of the input's warnings (see :func:`replicate.diagnostics.summary_text`).
warnings_text = summary_text
