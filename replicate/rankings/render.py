"""Text and markdown of a :class:`~replicate.rankings.result.RankingAgreement` (pure; JSON is its ``to_json``)."""

from __future__ import annotations

from replicate.output import Format, FormatArg, num, prose, table
from replicate.rankings.result import RankingAgreement
from replicate.stats.ranking import STATISTICS

#: How many swapped pairs the text lists (JSON has them all).
SHOWN_SWAPS = 20

_NAMES = {"kendall_tau": "Kendall's tau-b", "tau_ap": "tau_AP (estimate vs reference)", "spearman": "Spearman's rho"}


def _interval(res: RankingAgreement, name: str) -> str:
    iv = res.interval(name)
    if iv is None:
        return "-"
    return f"{num(iv.low)} to {num(iv.high)}"


def _topics_line(res: RankingAgreement) -> str:
    ref, est = res.qrels
    line = (f"Topics: {len(ref.topics)} judged in the reference qrels, {len(est.topics)} in the estimate, "
            f"{res.topics_both} in both")
    for label, only in (("reference", res.only_reference), ("estimate", res.only_estimate)):
        if only:
            shown = ", ".join(only[:10]) + (", ..." if len(only) > 10 else "")
            line += f"; {len(only)} in the {label} only ({shown}), scored under it alone"
    return line + "."


def _coverage_lines(res: RankingAgreement) -> list[str]:
    """Per system and qrels, topics scored 0 for want of results and topics not scored (as ir-measures does)."""
    out = []
    for s in res.systems:
        for side, cov in zip(("reference", "estimate"), s.coverage):
            if cov.unretrieved:
                out.append(f"{s.name}: {len(cov.unretrieved)} topic(s) of the {side} qrels without results, "
                           f"scored 0 as ir-measures does ({', '.join(cov.unretrieved[:5])}"
                           f"{', ...' if len(cov.unretrieved) > 5 else ''})")
            if cov.unjudged:
                out.append(f"{s.name}: {len(cov.unjudged)} topic(s) the {side} qrels does not judge, not scored "
                           f"under it ({', '.join(cov.unjudged[:5])}{', ...' if len(cov.unjudged) > 5 else ''})")
    return out


def rankings_text(res: RankingAgreement, fmt: FormatArg) -> str:
    fmt = Format(fmt)
    md = fmt is Format.markdown
    ref, est = res.qrels
    head = f"System-ranking agreement on {res.measure} ({res.library}), {len(res.systems)} systems"
    lines = [f"## {head}" if md else head, ""]
    lines.append(prose(f"Reference qrels: {ref.file.path} ({len(ref.topics)} topics, {ref.judgments} judgments); "
                       f"estimate qrels: {est.file.path} ({len(est.topics)} topics, {est.judgments} judgments).", fmt))
    lines.append(prose(_topics_line(res), fmt))
    lines.append("")
    any_iv = next(iter(res.intervals.values()), None)
    iv_head = "interval" if any_iv is None else f"{any_iv.confidence_level:.0%} interval"
    rows = [[_NAMES[n], num(res.statistic(n), 4), _interval(res, n)] for n in STATISTICS]
    lines.append(table(rows, ["statistic", "value", iv_head], fmt))
    if any_iv is not None:
        lines.append(prose(f"Intervals: percentile, bootstrap over topics ({any_iv.clusters} topics drawn with "
                           f"replacement), {any_iv.replicates} replicates, seed {any_iv.seed}.", fmt))
        undefined = {n: iv.undefined for n, iv in res.intervals.items() if iv.undefined}
        if undefined:
            lines.append(prose("Replicates left out (statistic undefined): "
                               + ", ".join(f"{n} {k}" for n, k in undefined.items()) + ".", fmt))
    lines.append("")
    order = sorted(res.systems, key=lambda s: (s.ranks[0], s.name))
    srows = [[s.name, num(s.scores[0], 4), s.ranks[0], num(s.scores[1], 4), s.ranks[1], s.ranks[1] - s.ranks[0]]
             for s in order]
    lines.append(table(srows, ["system", "reference", "rank", "estimate", "rank", "moved"], fmt))
    if res.swaps:
        shown = "; ".join(f"{a} > {b}" for a, b in res.swaps[:SHOWN_SWAPS])
        more = f"; and {len(res.swaps) - SHOWN_SWAPS} more" if len(res.swaps) > SHOWN_SWAPS else ""
        lines.append(prose(f"Swapped pairs ({len(res.swaps)}; the reference's order shown, the estimate orders "
                           f"them the other way): {shown}{more}.", fmt))
    else:
        lines.append("Swapped pairs: none.")
    cov = _coverage_lines(res)
    if cov:
        lines.append("")
        lines.append("Topics as ir-measures scores them:")
        lines.extend(prose(f"- {c}", fmt) for c in cov)
    return "\n".join(lines) + "\n"
