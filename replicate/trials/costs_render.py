"""Plain-text and markdown rendering of :class:`~replicate.trials.costs_result.CostsResult` (pure)."""

from __future__ import annotations

import numpy as np

from replicate.output import Format, FormatArg, pct, prose, table, table_blocks
from replicate.stats.bootstrap import Interval
from replicate.trials.costs_result import NO_USAGE, STATS, CostsResult, Distribution
from replicate.trials.render import input_lines

#: The kinds the table of cost by item class shows first.
CLASS_KINDS = ("total", "cost")


def _bench(b: str | None) -> str:
    return "(all)" if b is None else b


def value(x: float | None, kind: str, *, signed: bool = False) -> str:
    """A token count (one decimal unless whole) or, for ``cost``, money to 3 significant digits; ``-`` when undefined."""
    if x is None:
        return "-"
    sign = "+" if signed and x > 0 else ""
    if kind == "cost":
        return sign + np.format_float_positional(x, precision=3, unique=True, fractional=False, trim="-")
    return f"{sign}{x:.0f}" if float(x).is_integer() else f"{sign}{x:.1f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _with(text: str, iv: Interval | None, fmt_bound) -> str:
    if iv is None or iv.low is None or iv.high is None:
        return text
    return f"{text} [{fmt_bound(iv.low)}, {fmt_bound(iv.high)}]"


def _null(d: Distribution) -> str:
    return f"{d.null} ({pct(d.null_share, 1)})" if d.null else "0"


def _distributions(result: CostsResult, fmt: Format, per: str) -> str:
    rows = []
    for m in result.models:
        dists = m.per_trial if per == "trial" else m.per_item
        for kind, d in dists.items():
            rows.append([m.model, _bench(m.benchmark), kind, d.n, _null(d), *(value(d.stat(s), kind) for s in STATS)])
    what = "trials" if per == "trial" else "items"
    return table(rows, ["model", "benchmark", "kind", what, "no usage", *STATS], fmt)


def _edge_columns(result: CostsResult) -> tuple[list[str], list[tuple[str, list[str]]]]:
    keys: list[str] = []
    cols: dict[str, list[str]] = {h: [] for h in ("items", "paired", "median change", "median ratio", "costs more",
                                      "accuracy src -> tgt", "per correct src", "per correct tgt")}
    for e in result.edges:
        for kind, c in e.changes.items():
            keys.append(f"{e.source} -> {e.target}, {_bench(e.benchmark)}, {kind}")
            iv = c.intervals
            cols["items"].append(str(e.items))
            cols["paired"].append(str(c.paired))
            cols["median change"].append(_with(value(c.median_change, kind, signed=True), iv.get("median_change"),
                                               lambda x, k=kind: value(x, k, signed=True)))
            cols["median ratio"].append(_with(_ratio(c.median_ratio), iv.get("median_ratio"), _ratio))
            cols["costs more"].append(_with(pct(c.share_more, 1), iv.get("share_more"), lambda x: pct(x, 1)))
            ai = e.accuracy_intervals
            cols["accuracy src -> tgt"].append(
                " -> ".join(_with(pct(a, 1), ai.get(side), lambda x: pct(x, 1))
                            for a, side in ((e.accuracy_source, "source"), (e.accuracy_target, "target"))))
            for side, key in (("source", "per correct src"), ("target", "per correct tgt")):
                cols[key].append(_with(value(getattr(c, f"per_correct_{side}"), kind), iv.get(f"per_correct_{side}"),
                                       lambda x, k=kind: value(x, k)))
    return keys, list(cols.items())


def _edges(result: CostsResult, fmt: Format) -> str:
    keys, cols = _edge_columns(result)
    if fmt is Format.markdown:
        return table([[k, *(v[i] for _, v in cols)] for i, k in enumerate(keys)], ["edge, benchmark, kind",
                     *(h for h, _ in cols)], fmt)
    return table_blocks("edge, benchmark, kind", keys, cols)


def _classes(result: CostsResult, fmt: Format) -> str:
    rows = []
    for e in result.edges:
        for k in sorted(result.kinds, key=lambda k: (k not in CLASS_KINDS, result.kinds.index(k))):
            for cls, cc in e.changes[k].by_class.items():
                if cc.items:
                    iv = cc.intervals
                    rows.append([f"{e.source} -> {e.target}", _bench(e.benchmark), k, cls, cc.items, cc.paired,
                                 _with(value(cc.median_change, k, signed=True), iv.get("median_change"),
                                       lambda x, k=k: value(x, k, signed=True)),
                                 _with(_ratio(cc.median_ratio), iv.get("median_ratio"), _ratio),
                                 _with(pct(cc.share_more, 1), iv.get("share_more"), lambda x: pct(x, 1))])
    return table(rows, ["edge", "benchmark", "kind", "class", "items", "paired", "median change", "median ratio",
                        "costs more"], fmt)


def _notes(result: CostsResult) -> str:
    b = result.bootstrap
    lines = ["Tokens per item: the mean over the item's non-error trials that report usage. API-error trials "
             "are left out (no response). 'no usage': trials (items) reporting none, left out, never read as 0. "
             "total = prompt + completion (reasoning tokens are part of the completion tokens)."]
    if result.edges:
        c = result.classification or {}
        how = ("no intervals (--replicates 0)" if not b["replicates"] else
               f"95% percentile intervals, {b['replicates']} bootstrap replicates over "
               + (f"clusters of items sharing '{b['cluster']}'" if b["cluster"] else "items")
               + f", seed {b['seed']}")
        lines.append(
            "Per edge: per item, change = target mean - source mean and ratio = target / source, over the items "
            "both sides report ('paired'; a source of 0 tokens has no ratio); 'costs more': share of paired items "
            "whose change is > 0; per correct: the tokens of the trials reporting them over the correct answers among "
            f"those trials. Item classes as `replicate items` (eps {c.get('eps')}, BH q <= {c.get('alpha')}, "
            f"{c.get('ci')} interval); {how} (per class: the same replicates, each item keeping its class); "
            "accuracies as `items` gives them (normal interval over items).")
    if result.prices is not None:
        p = result.prices
        lines.append(f"cost: {p.currency}, prices per million tokens from {p.source} (read {p.date}; {p.path}).")
        if result.unpriced:
            lines.append(f"No price for {', '.join(result.unpriced)}: their cost is '-'.")
    return "\n" + "\n".join(lines) + "\n"


def render_costs(result: CostsResult, fmt: FormatArg) -> str:
    """The ``replicate costs`` report as plain text or markdown (JSON is ``result.to_json()``)."""
    fmt = Format(fmt)
    md = fmt is Format.markdown
    if not result.usage_reported:
        head = "## No cost figures\n\n" if md else "No cost figures\n\n"
        return head + prose(f"The trials table reports no usage: {NO_USAGE}.\n", fmt) + input_lines(result.provenance, fmt)
    sections: list[tuple[str, str]] = [
        ("Tokens per trial", _distributions(result, fmt, "trial")),
        ("Tokens per item", _distributions(result, fmt, "item")),
    ]
    if result.edges:
        sections.append(("Per edge: paired change per item, target - source", _edges(result, fmt)))
        sections.append(("Cost by item class of the edge (as `replicate items` classifies)",
                         _classes(result, fmt)))
    out = []
    for title, body in sections:
        out.append(f"## {title}\n\n{body}" if md else f"{title}\n\n{body}")
    return "\n".join(out) + prose(_notes(result), fmt) + input_lines(result.provenance, fmt)
