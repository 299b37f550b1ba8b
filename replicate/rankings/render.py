"""Text and markdown of a :class:`~replicate.rankings.result.RankingAgreement` (pure; JSON is its ``to_json``)."""

from __future__ import annotations

from replicate.output import Format, FormatArg, num, prose, table
from replicate.rankings.result import RankingAgreement
from replicate.stats.ranking import STATISTICS

#: How many swapped pairs the text lists (JSON has them all).
SHOWN_SWAPS = 20

COVERAGE = ("Topics as ir-measures scores them: a topic a qrels judges and the run has no result for is scored 0; "
            "a topic of the run a qrels does not judge is not scored under it (JSON lists the topics).")

_NAMES = {"kendall_tau": "Kendall's tau-b", "tau_ap": "tau_AP (estimate vs reference)", "spearman": "Spearman's rho"}


def _interval(res: RankingAgreement, name: str) -> str:
    iv = res.interval(name)
    if iv is None or iv.low is None or iv.high is None:
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


def _coverage_table(res: RankingAgreement, fmt: Format) -> str | None:
    """Per system with any: topics a qrels judges that the run has no result for (scored 0, as ir-measures
    does) and topics of the run a qrels does not judge (not scored under it). None when every count is 0."""
    rows = [[s.name, len(s.coverage[0].unretrieved), len(s.coverage[0].unjudged), len(s.coverage[1].unretrieved),
             len(s.coverage[1].unjudged)] for s in res.systems]
    rows = [r for r in rows if any(r[1:])]
    if not rows:
        return None
    heads = ["system", "reference: no results", "not judged", "estimate: no results", "not judged"]
    return table(rows, heads, fmt)


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
        lines.append(prose(f"Intervals: percentile arms stretched for the number of topics (t, G/(G-1)), bootstrap over "
                           f"topics ({any_iv.clusters} topics drawn with "
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
    cov = _coverage_table(res, fmt)
    if cov:
        lines += ["", prose(COVERAGE, fmt), "", cov.rstrip("\n")]
    return "\n".join(lines) + "\n"
