"""Text and markdown rendering of comparisons and chains (pure; parse summaries: :mod:`.parse`).

JSON output is ``to_json()`` of the values; this module writes what a person
reads: a four-cell table, the figures with their default 95% intervals, unparsed
counts per side, McNemar's p, the identity check and a one-line reading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from replicate.diagnostics import summary_text
from replicate.judge.compare import Comparison
from replicate.judge.model import extraction_failures, failures_unrecorded
from replicate.judge.render.figures import figure_text, two_lines
from replicate.judge.uncertainty import EdgeUncertainty
from replicate.output import Format, FormatArg, pct, prose_width, table
from replicate.stats.countintervals import CellFigures, resampled
from replicate.stats.fourcell import FIGURES, FourCell, figure_names, proportions
from replicate.stats.paired import p_display

if TYPE_CHECKING:
    from replicate.judge.harness import HarnessCheck
    from replicate.judge.render.errors import Intervals
    from replicate.judge.sourcerule import UnparsedChoice
    from replicate.provenance import FileProvenance


def _and(words: Sequence[str]) -> str:
    """``a, b and c``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


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
    from_labels: bool = False,
    error: EdgeUncertainty | None = None,
    confidence_level: float = 0.95,
    counted: CellFigures | None = None,
) -> str:
    """Every edge figure (:data:`~replicate.stats.fourcell.FIGURES`) with its definition and its default interval
    (one column, the method in its header), then McNemar's test.

    ``from_labels`` (the figures of a comparison of labelled runs) adds the figures needing labels (the change
    rate), which the four cells alone cannot give; each shows ``-`` when undefined. Without ``error`` (or with
    ``--replicates 0``) the interval is the Wilson one of each proportion; with ``error`` resampled it is the
    bootstrap interval of every figure (a proportion's never narrower than its Wilson interval), and a row
    for the clustered McNemar test follows.
    With ``counted`` (a table of counts: every interval assumes independent items) one interval column
    holds the Wilson intervals of the proportions and the item-bootstrap ones of the other figures.
    """
    from replicate.judge.render.errors import interval_cell, method_header

    shown = [FIGURES[f] for f in figure_names("edge") if from_labels or not FIGURES[f].needs_labels]
    rows = [[f.label, f.definition, figure_text(f.name, cells.value(f.name), pct_digits=2), f.name] for f in shown]
    rows.append(["McNemar p (indep. items)", "only_old vs only_new, exact", _p(cells.mcnemar_p()), ""])
    if counted is not None:
        level = f"{100 * counted.confidence_level:g}%"
        out = [r[:3] + [interval_cell(counted.interval.get(r[3]), r[3]) if r[3] else ""] for r in rows]
        return table(out, ["figure", "definition", "value", f"{level} CI (independent items)"], fmt)
    if error is not None and error.resampled:  # the default interval (replicate.stats.cimap): the bootstrap's
        out = [r[:3] + [interval_cell(error.interval.get(r[3]), r[3]) if r[3] else ""] for r in rows]
        headers = ["figure", "definition", "value", method_header(error, confidence_level)]
    else:  # no bootstrap (none asked, or --replicates 0): the Wilson intervals of the proportions
        wilson = proportions()
        out = [r[:3] + [_ci(cells, r[3], confidence_level) if r[3] in wilson else ""] for r in rows]
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


#: A run name longer than this is shortened in tables (its head, then ``...``), the full name in a legend below.
NAME_MAX = 32


def short_names(names: Sequence[str], limit: int = NAME_MAX) -> dict[str, str]:
    """Each name as a table shows it: itself, or when longer than ``limit`` its head and ``...`` (distinct)."""
    out: dict[str, str] = {}
    for name in dict.fromkeys(names):
        shown, k = name, 1
        while len(shown) > limit or shown in out.values():
            tail = "..." if k == 1 else f"...{k}"
            shown, k = name[: limit - len(tail)] + tail, k + 1
        out[name] = shown
    return out


def names_legend(short: dict[str, str]) -> str | None:
    """``names shortened in the tables: A... = A long name``, or None when none was."""
    pairs = [f"{s} = {n}" for n, s in short.items() if s != n]
    return None if not pairs else "names shortened in the tables: " + "; ".join(pairs)


def wilson_share(k: int, n: int) -> str:
    """`` (21.0% [15.9%, 27.2%], 95% Wilson)``: a count's share of ``n`` with its Wilson interval ("" for n = 0)."""
    from replicate.stats.intervals import wilson_interval

    ci = wilson_interval(k, n)
    if ci is None:
        return ""
    return f" ({pct(k / n, 1)} [{pct(ci[0], 1)}, {pct(ci[1], 1)}], 95% Wilson)"


def _files_line(side, shared: int) -> str:
    extra = []
    rewritten = sum(f.rewritten for f in side.files)
    if rewritten:
        extra.append(f"{rewritten} rewritten by a retry script (original_output kept)")
    skipped = sum(f.skipped for f in side.files)
    if skipped:
        extra.append(f"{skipped} line(s) skipped with a warning")
    failed = extraction_failures(side.files)
    unrecorded = failures_unrecorded(side.files)
    if unrecorded is not None:
        extra.append(f"extraction failures: not recorded ({unrecorded})")
    elif failed is not None:
        extra.append(f"{failed} extraction failure(s){wilson_share(failed, side.items)}: the file's own filter "
                     "found no answer ([invalid]), counted among the unparsed")
    tail = f"\n    {'; '.join(extra)}" if extra else ""
    files = ", ".join(f.provenance.path for f in side.files)
    own = side.items - shared
    only = f" ({own} not in the other run)" if own else ""
    return (
        f"  {side.name}: {side.items} items{only}, {side.unparsed} unparsed "
        f"({side.unparsed_shared} of them on shared items){tail}\n    files: {files}"
    )


def policy_line(cmp: Comparison) -> str:
    """``unparsed policy: ...``: the policy and, where the readers declare one, how it stands to the source's rule."""
    choice = cmp.unparsed_choice
    if choice is not None and choice.rule is not None:
        return choice.text()
    policy = (
        "intersect (items unparsed on either side are dropped)"
        if cmp.unparsed_policy == "intersect"
        else "wrong (an unparsed output counts as wrong)"
    )
    return f"unparsed policy: {policy}"


def policy_head(choice: UnparsedChoice, fmt: FormatArg) -> str:
    """The unparsed policy's line heading a report (wrapped in plain text; a list item in markdown)."""
    if Format(fmt) is Format.markdown:
        return f"- {choice.text()}\n\n"
    return _prose([choice.text()], Format(fmt))[0] + "\n"


def comparison_text(cmp: Comparison, fmt: FormatArg) -> str:
    """The full report of one edge (table or markdown)."""
    fmt = Format(fmt)
    c = cmp.cells
    head = f"{cmp.old.name} -> {cmp.new.name}"
    meta = [
        *_prose([f"parser: {cmp.parser}; {policy_line(cmp)}"], fmt),
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

    short = short_names([cmp.old.name, cmp.new.name])
    body.append(cells_table(c, fmt, old=short[cmp.old.name], new=short[cmp.new.name]))
    legend = names_legend(short)
    if legend:
        body += _prose([legend], fmt)
    level = cmp.settings.confidence_level if cmp.settings is not None else 0.95
    body.append(
        figures_table(c, fmt, from_labels=True, error=cmp.uncertainty, confidence_level=level)
    )
    body += _prose([identity_line(c), reading(c, cmp.uncertainty, _small(cmp)), *error_lines(cmp)], fmt)
    if cmp.harness:
        body.append(harness_table(cmp.harness, fmt, short))
    if cmp.agreement:
        from replicate.judge.render.agreement import edge_agreement_text

        body.append(edge_agreement_text(cmp.agreement, fmt))
    elif "agreement" in cmp.absent:
        body += _prose([f"Agreement (kappa, pi, alpha): absent: {cmp.absent['agreement']}."], fmt)
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


def _col(attr: str):
    """A chain column's value: an attribute of the edge's four cells."""
    return lambda e: getattr(e.cells, attr)


def _figure_col(name: str):
    """A chain column's value: the edge's figure ``name``, as tables print it."""
    return lambda e: figure_text(name, e.cells.value(name))


_OLD, _NEW, _N = (lambda e: e.old.name), (lambda e: e.new.name), _col("n")
_MCNEMAR = lambda e: _p(e.cells.mcnemar_p())  # noqa: E731
_UNPARSED = lambda e: f"{e.old.unparsed}/{e.new.unparsed}"  # noqa: E731


def _chain_figures(header=lambda h: h) -> list:
    """The columns of the figures chain shows (the view ``chain`` of the one table), headed by their short names."""
    return [(header(FIGURES[f].short), _figure_col(f)) for f in figure_names("chain")]


def _chain_markdown() -> list:
    """Markdown (and JSON-minded readers): one wide table, a row per edge."""
    return [
        ("old", _OLD), ("new", _NEW), ("n", _N),
        ("both/only_old/only_new/neither", lambda e: f"{e.cells.both}/{e.cells.only_old}/{e.cells.only_new}/{e.cells.neither}"),
        *_chain_figures(), ("McNemar exact p (independent items)", _MCNEMAR), ("unparsed", _UNPARSED),
    ]


def _chain_text_blocks() -> list:
    """Plain text: the same figures in two blocks that each fit a 100-column terminal (who and the counts, then
    the rates; rows matched by the edge number)."""
    return [
        [("old", _OLD), ("new", _NEW), ("n", _N), ("both", _col("both")), ("only_old", _col("only_old")),
         ("only_new", _col("only_new")), ("neither", _col("neither")), ("unparsed\nold/new", _UNPARSED)],
        [*_chain_figures(two_lines), ("McNemar exact\np (indep.)", _MCNEMAR)],
    ]


def _failures_line(edges: Sequence[Comparison]) -> str | None:
    """Each run's extraction failures (among its unparsed), when its reader tells them apart."""
    told = {s.name: s.extraction_failures for e in edges for s in (e.old, e.new) if s.extraction_failures is not None}
    if not told and not any(failures_unrecorded(s.files) for e in edges for s in (e.old, e.new)):
        return None
    unrecorded = {s.name for e in edges for s in (e.old, e.new) if failures_unrecorded(s.files) is not None}
    listed = ", ".join([f"{name} {n}" for name, n in told.items()] + [f"{name} not recorded" for name in unrecorded])
    return f"extraction failures (the file's own filter found no answer, [invalid]; among the unparsed): {listed}"


def chain_text(edges: Sequence[Comparison], fmt: FormatArg, *, flags: Sequence[Any] = ()) -> str:
    """One row per edge: one table in markdown, two narrower blocks in plain text; then intervals and flags."""
    from replicate.judge.render.errors import difficulty_table, edge_interval_table, mcnemar_table

    fmt = Format(fmt)
    short = short_names([s.name for e in edges for s in (e.old, e.new)])
    named = {"old": lambda e: short[e.old.name], "new": lambda e: short[e.new.name]}

    def shown(cols):
        return [(h, named.get(h, value)) for h, value in cols]

    if fmt is Format.markdown:
        cols = shown(_chain_markdown())
        out = table([[value(e) for _, value in cols] for e in edges], [h for h, _ in cols], fmt)
    else:
        blocks = [
            table([[k, *(value(e) for _, value in cols)] for k, e in enumerate(edges, 1)], ["#", *(h for h, _ in cols)], fmt)
            for cols in map(shown, _chain_text_blocks())
        ]
        out = "\n".join(blocks)
    legend = names_legend(short)
    if legend:
        out += "\n" + legend + "\n"
    if edges and edges[0].uncertainty is not None:
        out += "\n" + (edge_interval_table(edges, fmt) if edges[0].uncertainty.resampled else mcnemar_table(edges, fmt))
        given = difficulty_table(edges, fmt)
        out += "\n" + given if given else ""
    if edges:
        e = edges[0]
        choice = e.unparsed_choice
        policy = choice.text() if choice is not None and choice.rule is not None else f"unparsed policy: {e.unparsed_policy}"
        where = f"parser: {e.parser}; {policy}; items shared by all runs: {e.shared_items};"
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
        f"percentile method) for the {_and([FIGURES[f].label for f in resampled()])}."
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


def harness_table(checks: Sequence[HarnessCheck], fmt: FormatArg, short: dict[str, str] | None = None) -> str:
    """The harness's own figures beside the recomputed ones, at the printed precision, with match or MISMATCH
    (``short``: the runs' names as the tables show them)."""
    rows = [
        [(short or {}).get(c.run, c.run), c.figure.metric, c.figure.where, c.figure.printed,
         f"{c.shown()} ({c.correct} of {c.counted}, unparsed {c.policy})", c.verdict]
        for c in checks
    ]
    return table(rows, ["run", "harness's own figure", "read from", "printed", "recomputed", "check"], fmt)

#: The stderr summary of the input's warnings (see :func:`replicate.diagnostics.summary_text`).
warnings_text = summary_text
