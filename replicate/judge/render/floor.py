"""Text and markdown rendering of rerun floors (pure). JSON is ``Floor.to_json()``."""

from __future__ import annotations

from replicate.judge.floor import FAR_BEYOND_FACTOR, PAIR_FIGURES, EdgeCheck, Floor, MainCheck, Placement, Span
from replicate.judge.render import figures_table, heading, names_legend, short_names
from replicate.judge.render.errors import interval_cell, with_interval
from replicate.output import Format, FormatArg, fit_width, num, pct, table
from replicate.stats.fourcell import CHANGE_RATE, REGRESSION_RATE

READINGS = {
    "inside": "Reading: this edge's regressions cannot be told apart from rerun noise.",
    "above": "Reading: this edge regresses more than reruns of its target model do.",
    "below": "Reading: this edge regresses less than reruns of its target model do.",
    "indistinguishable": (
        "Reading: the regression rate lies outside the floor's range, but with this many items the edge "
        "cannot be told apart from rerun noise (the paired test's interval covers 0)."
    ),
    "insufficient_data": (
        "Reading: no verdict: too few items or clusters to tell this edge from rerun noise (see the reason above)."
    ),
}


def pp(x: float | None, digits: int = 2) -> str:
    """A difference of rates in percentage points."""
    return "-" if x is None else f"{100 * x:.{digits}f} pp"


def _span(s: Span | None) -> str:
    return "-" if s is None else f"{pct(s.min)} - {pct(s.max)} (width {pp(s.width)})"


def _lines(lines: list[str], fmt: Format) -> str:
    """Short report lines: a bullet list in markdown, plain lines in a table report."""
    lines = [line for line in lines if line]
    prefix = "- " if fmt is Format.markdown else ""
    return "\n".join(prefix + line for line in lines) + "\n"


def _placement(p: Placement | None, what: str) -> str:
    if p is None:
        return f"{what}: undefined (no items)"
    if p.verdict == "inside":
        return f"{what} {pct(p.rate)} lies inside the floor ({pp(p.margin)} from the nearer bound)"
    return f"{what} {pct(p.rate)} lies {p.verdict} the floor by {pp(p.margin)}"


def _interval_line(e: EdgeCheck) -> str:
    iv = e.interval
    if iv is not None and iv.reason is not None:
        return f"regression rate: no interval ({iv.reason})"
    if iv is None or iv.low is None or iv.high is None:
        return "no interval computed: the verdict places the point rate only (--replicates 0)"
    where = {
        "above": "wholly above the floor's range, even widened by the floor's own sampling error",
        "below": "wholly below the floor's range, even widened by the floor's own sampling error",
        "inside": "around a rate inside the floor's range",
        "indistinguishable": "reaching into the floor's range widened by its own sampling error",
    }.get(e.range_verdict or "", "")
    widened = "" if e.bounds is None else f" [floor with its sampling error: {pct(e.bounds.low)} - {pct(e.bounds.high)}]"
    return f"regression rate 95% interval {pct(iv.low)} - {pct(iv.high)}: {where}{widened}"


def _paired_line(e: EdgeCheck) -> str:
    """The paired test that decides the verdict (empty without one)."""
    p = e.paired
    if p is None:
        return ""
    return (f"paired test (decides the verdict): regression rate minus the repeat pairs' mean "
            f"{pp(p.difference)} [{100 * p.low:+.1f}, {100 * p.high:+.1f} pp], one-sided p {num(p.p_above, 4)} "
            f"(t over {p.clusters} {p.cluster or 'item'} clusters, {p.df} df)")


def _verdict_line(e: EdgeCheck) -> str:
    """``verdict: above (n = 400, 20 query_id clusters)``; with the reason when the data carry no verdict."""
    info = e.insufficient_json()
    err = e.comparison.uncertainty
    where = "" if err is None or err.cluster is None else f", {err.clusters} {err.cluster} clusters"
    line = f"verdict: {e.verdict} (n = {e.comparison.cells.n}{where})"
    return line if info is None else f"{line}: {info['reason']}"


def _floor_ratio_line(e: EdgeCheck) -> str:
    ratio = e.floor_ratio
    if ratio is None or e.floor_mean is None:
        return ""
    ivs = e.baseline_interval or {}
    mean = with_interval(pct(float(e.floor_mean)), ivs.get("expected_regression_rate"), "expected_regression_rate")
    line = f"rerun baseline: repeats of the target model regress {mean} on average; this edge regresses "
    line += with_interval(f"{ratio:.2f}", ivs.get("ratio"), "ratio") + " times that"
    return line + (f" (95% intervals: {e.baseline_resampling})" if ivs else "")


def _far_beyond_inputs(m: MainCheck) -> str:
    """The far-beyond rule's two inputs with their intervals (one shared bootstrap); empty without intervals."""
    if m.intervals is None or m.closest is None:
        return ""
    closest = interval_cell(m.intervals["closest_change_rate"], "closest_change_rate")
    largest = with_interval(pct(m.floor.max), m.intervals["largest_repeat_change_rate"], "largest_repeat_change_rate")
    return (
        f"with sampling error: closest change rate {closest}, largest repeat-to-repeat change rate {largest} "
        f"(95% intervals: {m.resampling})"
    )


def _by_number(fl: Floor, fmt: Format) -> bool:
    """Whether the pairs table names the repeats by number: plain text fitted to a width (:func:`fit_width`)
    in which the two names of a pair would take more than a third of the line."""
    width = fit_width()
    if fmt is not Format.table or width is None or not fl.names:
        return False
    return 2 * (max(map(len, short_names(fl.names).values())) + 2) > width // 3


def floor_text(fl: Floor, fmt: FormatArg) -> str:
    """Repeats, every ordered pair, the ranges, EM spread, Jaccard overlaps and the checks asked for."""
    fmt = Format(fmt)
    out = [heading(f"Rerun floor of {len(fl.repeats)} repeats: {', '.join(fl.names)}", fmt)]
    out.append(
        f"parser: {fl.parser}; unparsed policy: {fl.unparsed_policy}; items shared by all repeats: {fl.shared_items}\n"
    )
    numbered = _by_number(fl, fmt)
    number = {name: str(k) for k, name in enumerate(fl.names, 1)}
    short = short_names(fl.names)
    rows = [
        [*([number[r.name]] if numbered else []), short[r.name], r.items, r.dropped, r.unparsed, r.n,
         with_interval(pct(r.em), None if r.interval is None else r.interval["em"], "em")]
        for r in fl.repeats
    ]
    headers = [*(["#"] if numbered else []), "repeat", "items", "not shared", "unparsed", "n (EM)", "EM"]
    out.append(table(rows, headers, fmt, keep=2 if numbered else 1))
    if numbered:
        out.append("The pairs below name the repeats by number (#).\n")
    legend = names_legend(short)
    if legend:
        out.append(legend + "\n")
    if fl.items_differ:
        out.append(
            "Note: the repeats cover different items; every figure here uses the "
            f"{fl.shared_items} items all of them have (see 'not shared').\n"
        )
    name = number.__getitem__ if numbered else short.__getitem__
    rows = [
        [name(p.old), name(p.new), p.n, p.cells.both, p.cells.only_old, p.cells.only_new, p.cells.neither,
         pct(p.regression_rate), pct(p.change_rate)]
        + ([] if p.interval is None else [interval_cell(p.interval[k], k) for k in PAIR_FIGURES])
        for p in fl.pairs
    ]
    headers = ["old", "new", "n", "both", "only_old", "only_new", "neither", "regression", "change"]
    if fl.settings is not None and fl.settings.resampled:
        headers += ["regression 95% CI", "change 95% CI"]
    out.append(table(rows, headers, fmt, keep=2))
    js = fl.jaccard_span
    summary = [
        [REGRESSION_RATE.label, _span(fl.regression_span)],
        [CHANGE_RATE.label, _span(fl.change_span)],
        ["EM mean (sd, ddof=1)", f"{pct(fl.em_mean)} ({pp(fl.em_sd)})"],
        [
            "Jaccard of regression sets",
            "- (needs pairs sharing a run: 3+ repeats)" if js is None else f"min {num(js[0])}, mean {num(js[1])}, max {num(js[2])} over {len(fl.overlaps)} pair(s) of pairs",
        ],
    ]
    with_error = fl.regression_span_with_error
    if with_error is not None:
        summary.insert(1, [
            "regression rate, with sampling error",
            f"{pct(with_error.low)} - {pct(with_error.high)} (interval low of the range's min to interval high of its max, each taken again in every replicate)",
        ])
    if fl.range_interval is not None:
        ends = fl.range_interval
        summary.insert(2, [
            "regression range ends, 95% intervals",
            f"min {interval_cell(ends['min'], 'min')}, max {interval_cell(ends['max'], 'max')}",
        ])
    out.append(table(summary, ["floor", "value"], fmt))
    if fl.settings is not None and fl.settings.resampled:
        st = fl.settings
        by = f"whole {st.to_json()['cluster']} clusters" if st.to_json()["cluster"] else "items one by one"
        out.append(_lines([
            f"Intervals: bootstrap resampling {by}, {st.replicates} replicates, seed {st.seed}, percentile arms "
            "stretched for the number of clusters (t, G/(G-1)); a proportion's never narrower than its Wilson interval."
        ], fmt))
    if fl.sample_flags:
        out.append(_lines([f"Warning: {f}" for f in fl.sample_flags], fmt))
    if fl.edge is not None:
        e = fl.edge
        c = e.comparison
        out.append(heading(f"Edge {c.old.name} -> {c.new.name} against this floor", fmt, 3))
        lines = [
            f"n = {c.cells.n}; cells both {c.cells.both}, only_old {c.cells.only_old}, "
            f"only_new {c.cells.only_new}, neither {c.cells.neither}",
            _verdict_line(e),
            _placement(e.regression, REGRESSION_RATE.label) + f" [{_span(fl.regression_span)}]",
            _interval_line(e),
            _paired_line(e),
            _placement(e.change, CHANGE_RATE.label) + f" [{_span(fl.change_span)}]",
            _floor_ratio_line(e),
            *(f"Warning: {f}" for f in e.sample_flags),
        ]
        lines.append(READINGS.get(e.verdict or "", ""))
        out.append(_lines(lines, fmt))
        if c.uncertainty is not None:
            level = c.settings.confidence_level if c.settings is not None else 0.95
            out.append(figures_table(
                c.cells, fmt, from_labels=True, error=c.uncertainty, confidence_level=level
            ))
    if fl.main is not None:
        m = fl.main
        out.append(heading(f"Main run {m.name} against its repeats", fmt, 3))
        def iv(c, figure: str):
            return None if c.uncertainty is None else c.uncertainty.interval.get(figure)

        rows = [
            [short.get(c.new.name, c.new.name), c.cells.n, c.changed, with_interval(pct(c.change_rate), iv(c, CHANGE_RATE.name), CHANGE_RATE.name),
             with_interval(pct(c.cells.regression_rate), iv(c, REGRESSION_RATE.name), REGRESSION_RATE.name)]
            for c in m.against
        ]
        out.append(table(rows, ["repeat", "n", "labels differ", CHANGE_RATE.label, REGRESSION_RATE.label], fmt))
        lines = [
            f"verdict: {m.verdict}" + ("" if m.insufficient is None else f": {m.insufficient}"),
            _placement(m.closest, "closest change rate") + f" [{_span(m.floor)}]",
            _far_beyond_inputs(m),
        ]
        if m.far_beyond and m.closest is not None:  # the rule is shown only when it fired
            lines.append(
                f"far_beyond: even the closest repeat differs from {m.name} on {pct(m.closest.rate)}, "
                f"more than {FAR_BEYOND_FACTOR} x the largest repeat-to-repeat change rate "
                f"{pct(m.floor.max)} = {pct(float(m.far_beyond_threshold))}"
            )
            lines.append(
                f"Warning: {m.name} differs from its repeats far beyond rerun noise: "
                "it was likely produced with another configuration."
            )
        out.append(_lines(lines, fmt))
    return "\n".join(out)
