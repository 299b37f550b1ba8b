"""Rendering the sampling error of an edge (pure): interval cells, the reading of the independence ratio.

The reading says only what the figures and their intervals support: the
classic independence baseline assumes every item equally hard, so a ratio
below 1 is what item difficulty alone produces; where a difficulty-aware
baseline exists (four or more runs) the regression rate is set against it,
interval included.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from replicate.judge.render.figures import two_lines
from replicate.judge.uncertainty import EXACT_MCNEMAR_ASSUMES, EdgeUncertainty
from replicate.output import Format, num, pct, prose_width, table
from replicate.stats.bootstrap import Interval
from replicate.stats.few_clusters import too_few_clusters
from replicate.stats.fourcell import FIGURES, INDEPENDENCE_RATIO, REGRESSION_RATE, FourCell, figure_names
from replicate.stats.paired import p_display

if TYPE_CHECKING:
    from replicate.judge.compare import Comparison

#: Interval keys printed as numbers that are not four-cell figures: the regression rate over the difficulty-aware
#: baseline (a four-cell figure is printed as its ``kind`` says).
NUMBER_KEYS = frozenset({"ratio"})


def _is_number(figure: str) -> bool:
    f = FIGURES.get(figure)
    return figure in NUMBER_KEYS if f is None else f.kind == "ratio"


class Intervals(Protocol):
    """What the reading of an edge needs: an interval per figure and the difficulty-aware baseline (if any)."""

    @property
    def interval(self) -> Mapping[str, Interval]: ...
    @property
    def difficulty_expected(self) -> float | None: ...
    @property
    def difficulty_other_runs(self) -> int: ...
    @property
    def difficulty_interval(self) -> Mapping[str, Interval] | None: ...
    @property
    def difficulty_reason(self) -> str | None: ...


def interval_cell(iv: Interval | None, figure: str) -> str:
    """``[low, high]`` in the figure's units (percent for rates, 2 decimals for the ratio); ``-`` when undefined.

    ``no interval (G clusters)`` when the figure has one but too few clusters were resampled to give it.
    """
    if iv is not None and iv.reason is not None and iv.cluster is not None:
        return f"no interval ({iv.clusters} cluster{'s' if iv.clusters != 1 else ''})"
    if iv is None or iv.low is None or iv.high is None:
        return "-"
    if _is_number(figure):
        return f"[{num(iv.low, 2)}, {num(iv.high, 2)}]"
    return f"[{pct(iv.low, 1)}, {pct(iv.high, 1)}]"


def with_interval(value: str, iv: Interval | None, figure: str) -> str:
    """A figure's value followed by its interval, ``48.0% [47.1%, 48.9%]``; the value alone without one."""
    return value if iv is None else f"{value} {interval_cell(iv, figure)}"


def how_resampled(iv: Interval) -> str:
    """One phrase naming the bootstrap of an interval: ``18 query_id clusters resampled whole, 1000 replicates, seed 0``."""
    by = f"{iv.clusters} {iv.cluster} clusters resampled whole" if iv.cluster else f"{iv.clusters} items resampled one by one"
    warning = too_few_clusters(iv.cluster, iv.clusters)
    tail = "" if warning is None else f" (Warning: no intervals: {warning})"
    words = METHOD_WORDS.get(iv.method, iv.method)
    return f"{100 * iv.confidence_level:g}% bootstrap ({words}): {by}, {iv.replicates} replicates, seed {iv.seed}{tail}"


#: How each bootstrap method is named in text (JSON has the method's name).
METHOD_WORDS = {
    "cluster-bootstrap-t-percentile": "percentile arms stretched for the number of clusters (t, G/(G-1)), "
                                      "a proportion's at least its Wilson interval",
    "item-bootstrap-percentile": "percentile, a proportion's at least its Wilson interval",
    "cluster-bootstrap-percentile": "percentile",
}


def method_header(err: EdgeUncertainty, confidence_level: float) -> str:
    """The column header naming the bootstrap: e.g. ``95% bootstrap (by query_id)``."""
    level = f"{100 * confidence_level:g}%"
    by = f"by {err.cluster}" if err.cluster is not None else "by item"
    return f"{level} bootstrap ({by})"


DIFFICULTY_CAVEAT = (
    "the classic baseline EM old x (1 - EM new) assumes every item equally hard; where items differ in difficulty "
    "two judges with unrelated errors already score below 1"
)
#: The difficulty-aware baseline's model, in a few words (replicate.stats.rasch).
DIFFICULTY_MODEL = "a Rasch fit given each item's total right"


def ratio_reading(cells: FourCell, err: Intervals | None, no_verdict: str | None = None) -> str:
    """What the independence ratio does and does not show, with its interval and baselines.

    ``no_verdict``: why the data carry no verdict (the small-sample flag); the ratio is then shown, not read.
    """
    ratio = cells.independence_ratio
    if ratio is None:
        return "independence ratio undefined"
    iv = None if err is None else err.interval.get(INDEPENDENCE_RATIO.name)
    if iv is not None and iv.reason is not None:
        no_verdict = iv.reason if no_verdict is None else f"{no_verdict}; {iv.reason}"
    if no_verdict is not None:
        shown = "" if iv is None or iv.low is None or iv.high is None else f" (95% interval {iv.low:.2f}-{iv.high:.2f})"
        return f"independence ratio {ratio:.2f}{shown}: insufficient data for a verdict ({no_verdict})"
    if iv is None or iv.low is None or iv.high is None:
        text = f"independence ratio {ratio:.2f} (no interval computed)"
        if ratio > 1:
            verdict = "more regressions than unrelated errors would give"
        elif ratio < 1:
            verdict = "fewer regressions than the classic baseline, which item difficulty alone can explain"
        else:
            verdict = "as many regressions as the classic baseline of unrelated errors"
        exp = None if err is None else err.difficulty_expected
        if err is None or exp is None or cells.regression_rate is None or not exp:
            return f"{text}: {verdict} ({DIFFICULTY_CAVEAT})"
        return (
            f"{text}: {verdict} ({DIFFICULTY_CAVEAT}); errors independent given the item ({DIFFICULTY_MODEL}, with "
            f"{err.difficulty_other_runs} other runs) would give {pct(exp, 1)} (regression / that = "
            f"{num(cells.regression_rate / exp, 2)}; no interval computed, so no verdict on shared errors)"
        )
    text = f"independence ratio {ratio:.2f} (95% interval {iv.low:.2f}-{iv.high:.2f})"
    if iv.low > 1:
        verdict = "more regressions than unrelated errors would give (it tends to fail where the old version succeeded)"
    elif iv.high < 1:
        verdict = "fewer regressions than the classic baseline, which item difficulty alone can explain"
    else:
        verdict = "consistent with the classic baseline of unrelated errors"
    parts = [f"{text}: {verdict}"]
    assert err is not None
    exp = err.difficulty_expected
    if exp is None:
        parts.append(
            f"{DIFFICULTY_CAVEAT}; no difficulty-aware baseline here (it needs two or more other runs of the same items)"
        )
    else:
        div = err.difficulty_interval or {}
        shown = with_interval(pct(exp, 1), div.get("expected_regression_rate"), "expected_regression_rate")
        given = f"errors independent given the item ({DIFFICULTY_MODEL}, with {err.difficulty_other_runs} other runs) would give {shown}"
        riv = div.get("ratio")
        if cells.regression_rate is not None and exp:
            given += f" (regression / that = {with_interval(num(cells.regression_rate / exp, 2), riv, 'ratio')})"
        # the verdict reads the ratio's interval: regressions and baseline resampled (and refit) together
        if riv is None and err.difficulty_reason is not None:  # past the refit budget
            parts.append(f"{given}; {err.difficulty_reason}, so no verdict on shared errors")
        elif riv is None or riv.low is None or riv.high is None:
            parts.append(f"{given}; no interval of that ratio, so no verdict on shared errors")
        elif riv.high < 1:
            parts.append(f"fewer regressions than {given}: the versions share errors beyond item difficulty")
        elif riv.low > 1:
            parts.append(f"more regressions than {given}")
        else:
            parts.append(f"the regression rate is consistent with what {given}, so the data do not show shared errors")
    return "; ".join(parts)


def error_lines(cmp: Comparison) -> list[str]:
    """How the intervals were made, what the exact McNemar test assumes, and a small-sample warning."""
    err, st = cmp.uncertainty, cmp.settings
    if err is None or st is None:
        return [f"Note: {EXACT_MCNEMAR_ASSUMES}; no bootstrap intervals were computed."]
    if not err.resampled:
        return [
            f"Note: no bootstrap intervals were computed (--replicates 0); {EXACT_MCNEMAR_ASSUMES}, the clustered "
            f"test ({mcnemar_over(err)}) does not.",
            *([small_warning(cmp.cells.n, st.min_items, resampled=False)] if cmp.small else []),
        ]
    any_iv = next(iter(err.interval.values()))
    if err.cluster is None:
        how = f"item bootstrap ({err.clusters} items resampled one by one: no cluster key)"
    else:
        how = f"cluster bootstrap over {err.clusters} {err.cluster} clusters (items of one {err.cluster} resampled together)"
    lines = [
        f"Intervals: {how}, {any_iv.replicates} replicates, seed {any_iv.seed}, "
        f"{METHOD_WORDS.get(any_iv.method, any_iv.method)}; {EXACT_MCNEMAR_ASSUMES}, the clustered test does not."
    ]
    warning = too_few_clusters(err.cluster, err.clusters)
    if warning is not None:
        lines.append(f"Warning: no intervals: {warning}.")
    if cmp.small:
        lines.append(small_warning(cmp.cells.n, st.min_items, resampled=True))
    return lines


def small_warning(n: int, min_items: int, *, resampled: bool) -> str:
    """The warning on an edge compared on fewer than ``--min-items`` items."""
    then = "read the intervals, not the point values" if resampled else (
        "no intervals were computed (--replicates 0) to show how uncertain its figures are")
    return f"Warning: only n = {n} items compared (fewer than --min-items {min_items}): too few for a verdict; {then}."


def mcnemar_over(err: EdgeUncertainty) -> str:
    """What the clustered McNemar test treats as independent: ``18 query_id clusters`` or ``288 items``."""
    return f"{err.clusters} {err.cluster} clusters" if err.cluster is not None else f"{err.clusters} items, one per cluster"


def mcnemar_table(
    edges: Sequence[Comparison],
    fmt: Format,
    *,
    who: Callable[[Comparison], Sequence[str]] | None = None,
    who_headers: Sequence[str] = ("old", "new"),
) -> str:
    """Per edge, the clustered McNemar test (``--replicates 0``: no intervals, the test needs none)."""
    first = edges[0].uncertainty
    assert first is not None

    def row(k: int, e: Comparison) -> list:
        assert e.uncertainty is not None
        return [k, *(who(e) if who is not None else []), e.cells.n, num(e.uncertainty.mcnemar_statistic, 2),
                p_display(e.uncertainty.mcnemar_p)]

    headers = ["#", *(who_headers if who is not None else []), "n", "McNemar\nstatistic", "McNemar p\n(clustered)"]
    if fmt is Format.markdown:
        headers = [h.replace("\n", " ") for h in headers]
    title = f"Clustered McNemar test (Durkalski; over {mcnemar_over(first)}; no bootstrap intervals: --replicates 0):\n"
    return title + table([row(k, e) for k, e in enumerate(edges, 1)], headers, fmt)


def interval_blocks() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The figures of an edge's interval table, every edge figure in table order, in two blocks that each fit a
    100-column terminal in plain text (the first half, the second half)."""
    figures = figure_names("edge")
    half = len(figures) // 2
    return figures[:half], figures[half:]


def edge_interval_table(
    edges: Sequence[Comparison],
    fmt: Format,
    *,
    who: Callable[[Comparison], Sequence[str]] | None = None,
    who_headers: Sequence[str] = ("old", "new"),
) -> str:
    """Per edge, the bootstrap interval of every figure and the clustered McNemar p.

    Markdown: one table, the edge's runs named (``who``, by default their names). Plain text: two
    blocks (:func:`interval_blocks`), rows matched by ``#``; ``who`` names the runs in the first block (none when None: the rows follow
    a table that names them).
    """
    first = edges[0].uncertainty
    assert first is not None
    level = edges[0].settings.confidence_level if edges[0].settings is not None else 0.95

    def cells(e: Comparison, block) -> list[str]:
        err = e.uncertainty
        assert err is not None
        return [interval_cell(err.interval.get(f), f) for f in block]

    def p(e: Comparison) -> str:
        assert e.uncertainty is not None
        return p_display(e.uncertainty.mcnemar_p)

    a, b = interval_blocks()
    mcnemar = "McNemar p\n(clustered)"
    title = f"{method_header(first, level)} intervals:\n"
    if fmt is Format.markdown:
        names = who or (lambda e: [e.old.name, e.new.name])
        rows = [[k, *names(e), e.cells.n, *cells(e, a), *cells(e, b), p(e)] for k, e in enumerate(edges, 1)]
        headers = ["#", *who_headers, "n", *(FIGURES[f].short for f in a + b), mcnemar]
        return title + table(rows, [h.replace("\n", " ") for h in headers], fmt)
    named = list(who_headers) if who is not None else []
    first_block = table(
        [[k, *(who(e) if who is not None else []), e.cells.n, *cells(e, a)] for k, e in enumerate(edges, 1)],
        ["#", *named, "n", *(two_lines(FIGURES[f].short) for f in a)],
        fmt,
    )
    second_block = table(
        [[k, *cells(e, b), p(e)] for k, e in enumerate(edges, 1)], ["#", *(two_lines(FIGURES[f].short) for f in b), mcnemar], fmt
    )
    return title + first_block + "\n" + second_block


def difficulty_table(
    edges: Sequence[Comparison],
    fmt: Format,
    *,
    who: Callable[[Comparison], Sequence[str]] | None = None,
    who_headers: Sequence[str] = ("old", "new"),
) -> str:
    """Per edge with a difficulty-aware baseline: the regression rate it expects and the edge's rate over it,
    each with its interval (refit in every replicate); empty when no edge has one."""
    rows = []
    first = None
    for k, e in enumerate(edges, 1):
        err = e.uncertainty
        exp = None if err is None else err.difficulty_expected
        if err is None or exp is None:
            continue
        first = first or err
        div = err.difficulty_interval or {}
        reg = e.cells.regression_rate
        ratio = None if reg is None or not exp else reg / exp
        rows.append([
            k, *(who(e) if who is not None else []), pct(reg, 1), pct(exp, 1),
            interval_cell(div.get("expected_regression_rate"), "expected_regression_rate"),
            num(ratio, 2), interval_cell(div.get("ratio"), "ratio"),
        ])
    if first is None:
        return ""
    headers = ["#", *(who_headers if who is not None else []), REGRESSION_RATE.short, "expected\ngiven difficulty", "95% CI",
               "regr./\nexpected", "95% CI"]
    if not first.resampled or first.difficulty_reason is not None:  # the point values only (no refits)
        headers, rows = headers[:-3] + headers[-2:-1], [r[:-3] + r[-2:-1] for r in rows]
    if fmt is Format.markdown:
        headers = [h.replace("\n", " ") for h in headers]
    title = f"Expected regression given item difficulty (from the other {first.difficulty_other_runs} runs):\n"
    note = f"Intervals: {first.difficulty_resampling}." if first.difficulty_resampling else ""
    if first.difficulty_reason is not None:  # past the refit budget: why there is no interval, and how to get one
        note = f"Intervals: {first.difficulty_reason}."
    if note and fmt is not Format.markdown:
        note = textwrap.fill(note, width=prose_width())  # readable in a 100-column terminal, or a narrower one
    return title + table(rows, headers, fmt) + (note + "\n" if note else "")
