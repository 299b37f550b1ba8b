"""Text and markdown rendering of parser audits (pure). JSON is ``Audit.to_json()``."""

from __future__ import annotations

from replicate.judge.audit import Audit, FileAudit, edge_figures
from replicate.judge.render import heading
from replicate.judge.render.errors import how_resampled, with_interval
from replicate.judge.render.figures import figure_text
from replicate.output import Format, FormatArg, pct, table
from replicate.stats.bootstrap import Interval
from replicate.stats.fourcell import FIGURES
from replicate.stats.policy import Policy

#: How many label patterns a text report lists per file (JSON lists all).
PATTERNS_SHOWN = 10


def _lab(v: int | str | None) -> str:
    return "unparsed" if v is None else str(v)


def file_text(fa: FileAudit, fmt: FormatArg, *, policy: Policy) -> str:
    fmt = Format(fmt)
    out = [heading(f"{fa.path} ({fa.items} items)", fmt)]
    def iv(t, figure: str):
        return None if t.interval is None else t.interval[figure]

    rows = [
        [t.parser, t.parsed, t.unparsed, with_interval(pct(t.unparsed_rate, 1), iv(t, "unparsed_rate"), "unparsed_rate"),
         with_interval(pct(t.em, 1), iv(t, "em"), "em")]
        for t in fa.parsers
    ]
    em_note = "over parsed items" if policy == "intersect" else "over all items, unparsed = wrong"
    out.append(table(rows, ["parser", "parsed", "unparsed", "unparsed %", f"EM ({em_note})"], fmt))
    ivs = fa.differ_intervals
    share = with_interval(pct(fa.labels_differ_rate, 1), None if ivs is None else ivs[0], "labels_differ_rate")
    line = f"labels differ between the parsers on {fa.labels_differ} of {fa.items} items ({share})"
    if len(fa.pairwise_differ) > 1:
        line += "; pairwise: " + ", ".join(
            f"{a} vs {b}: {k} ({with_interval(pct(k / fa.items if fa.items else None, 1), None if ivs is None else ivs[j + 1], 'differ_rate')})"
            for j, (a, b, k) in enumerate(fa.pairwise_differ)
        )
    out.append(line + "\n")
    for d in fa.deltas:
        def div(figure: str, d=d):
            return None if d.interval is None else d.interval[figure]

        out.append(
            f"{d.parser} - {d.reference}: unparsed {_delta('unparsed_rate', d.unparsed_rate, div('unparsed_rate'))}, "
            f"EM {_delta('em', d.em, div('em'))}\n"
        )
    if ivs is not None:
        paired = "; the differences between parsers from the same draws for every parser (paired)" if fa.deltas else ""
        out.append(f"Intervals: {how_resampled(ivs[0])}{paired}.\n")
    if fa.patterns:
        names = [p for p, _ in fa.patterns[0].labels]
        rows = [[*(_lab(v) for _, v in p.labels), p.count] for p in fa.patterns[:PATTERNS_SHOWN]]
        out.append(table(rows, [*names, "items"], fmt))
        if len(fa.patterns) > PATTERNS_SHOWN:
            out.append(f"({len(fa.patterns) - PATTERNS_SHOWN} more pattern(s) in the JSON output)\n")
    if fa.examples:
        names = [p for p, _ in fa.examples[0].labels]
        rows = [[e.key, e.gold, *(_lab(v) for _, v in e.labels), "(no output)" if e.output is None else e.output] for e in fa.examples]
        out.append(table(rows, ["item", "gold", *names, "output (trimmed)"], fmt))
    return "\n".join(out)


def _fig(fig: str, v: float | int | None) -> str:
    if v is None:
        return "-"
    return str(v) if fig == "n" else figure_text(fig, v, pct_digits=2, num_digits=3)


def _delta(fig: str, v: float | int | None, iv: Interval | None = None) -> str:
    """A difference between parsers (percentage points for rates), then its joint-bootstrap interval in the same units."""
    if v is None:
        return "-"
    if fig == "n":
        return f"{v:+d}"
    if fig in FIGURES and FIGURES[fig].kind == "ratio":
        return with_interval(f"{v:+.3f}", iv, fig)
    if iv is None or iv.low is None or iv.high is None:
        return f"{100 * v:+.2f} pp"
    return f"{100 * v:+.2f} pp [{100 * iv.low:+.1f}, {100 * iv.high:+.1f} pp]"


def audit_text(a: Audit, fmt: FormatArg) -> str:
    """Each file's parser tallies, differing labels and examples; then the edge per parser."""
    fmt = Format(fmt)
    out = [f"parsers: {', '.join(a.parsers)}; unparsed policy: {a.unparsed_policy}\n"]
    out += [file_text(f, fmt, policy=a.unparsed_policy) for f in a.files]
    if a.edge is not None:
        e = a.edge
        out.append(heading(f"Edge {e.old} -> {e.new} under each parser", fmt))
        moves = e.moves()
        first = a.parsers[0]
        others = a.parsers[1:]
        errors = {c.parser: c.uncertainty for c in e.comparisons}

        def value(fig: str, p: str) -> str:
            err = errors[p]
            return with_interval(_fig(fig, moves[fig]["values"][p]), None if err is None else err.interval.get(fig), fig)

        rows = [
            [fig, *(value(fig, p) for p in a.parsers),
             *(_delta(fig, moves[fig]["delta"][p], e.delta_interval(p, fig)) for p in others)]
            for fig in edge_figures()
        ]
        out.append(table(rows, ["figure", *a.parsers, *(f"{p} - {first}" for p in others)], fmt))
        err = errors[first]
        if err is not None and err.resampled:
            out.append(
                f"Intervals: {how_resampled(next(iter(err.interval.values())))}, for each parser's edge; "
                "the differences between parsers from the same draws for every parser (paired).\n"
            )
        small = [c for c in e.comparisons if c.small]
        if small and small[0].settings is not None:
            which = ", ".join(f"{c.parser} (n = {c.cells.n})" for c in small)
            out.append(
                f"Warning: compared on fewer than --min-items {small[0].settings.min_items} items under {which}: "
                "too few for a verdict; " + ("read the intervals, not the point values.\n" if small[0].settings.resampled
                                            else "no intervals were computed (--replicates 0).\n")
            )
    return "\n".join(out)
