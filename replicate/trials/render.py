"""Plain-text, markdown and JSON rendering of :class:`ItemsResult` (pure); ``input_lines`` is shared with ``screen``."""

from __future__ import annotations

from replicate.output import Format, FormatArg, pct, prose, table, table_blocks
from replicate.provenance import FileProvenance, provenance_markdown
from replicate.trials.results import ItemsResult


def _obs_null(x: float | None, null: float | None) -> str:
    if null is None:
        return pct(x, 1)
    return f"{pct(x, 1)} ({pct(null, 1)})"


def _bench(b: str | None) -> str:
    return "(all)" if b is None else b


def input_lines(provenance: FileProvenance | None, fmt: Format) -> str:
    """What file the figures came from: path and sha256, and the release it was fetched from."""
    if provenance is None:
        return ""
    if fmt is Format.markdown:
        return "\n## Input\n\n" + provenance_markdown([provenance]) + "\n"
    line = f"\ninput: {provenance.path} (sha256 {provenance.sha256}"
    if provenance.release is not None:
        rel = provenance.release
        line += f"; {rel.source} at commit {rel.commit}; licence: {rel.licence_words}"
    return line + ")\n"


def render_items(result: ItemsResult, fmt: FormatArg) -> str:
    """The ``replicate items`` report: JSON, or a text/markdown table per section."""
    fmt = Format(fmt)
    md = fmt is Format.markdown
    sections = [_accuracy(result, fmt), _categories(result, fmt)] if not result.cells else [
        _classes(result, fmt),
        _intervals(result, fmt),
        _power(result, fmt),
        _excluded(result, fmt),
        _sensitivity(result, fmt),
        _single_draw(result, fmt),
        _loose(result, fmt),
        _strata(result, fmt),
        _accuracy(result, fmt),
    ]
    out: list[str] = []
    for s in sections:
        if s is None:
            continue
        title, body = s
        if out:
            out.append("")
        out.append(f"## {title}\n" if md else f"{title}\n")
        out.append(body)
    out.append(input_lines(result.provenance, fmt).rstrip("\n"))
    for c, message in result.small_cells():
        out.append(f"\nWarning: {c.label()}: {message}.")
    n_warn = result.diagnostics.get("count", 0)
    if n_warn:
        out.append(f"\n{n_warn} warning(s) about the input (not the cells above); see --format json for details.")
    return "\n".join(out)


# Each section: None when it has nothing to show, else (heading, table text).
Section = tuple[str, str] | None


def _edge(c) -> str:
    return f"{c.source} -> {c.target}"


def _classes(result: ItemsResult, fmt: Format) -> Section:
    null_note = (
        f"; in brackets the 95th percentile of {result.n_null} permutation replications"
        if result.n_null
        else "; permutation null off"
    )
    reading = "" if result.reading == "strict" else f"{result.reading} reading, "
    title = f"Item classes ({reading}eps {result.eps}, BH q <= {result.alpha}, {result.ci} 95% interval{null_note}, seed {result.seed})"
    return title, table([class_row(c) for c in result.cells], list(CLASS_HEADERS), fmt) + "\n" + prose(LEGEND, fmt)


#: The shares' headers: the class in words, the study's symbol after it.
IMPROVED_H, REGRESSED_H, CHANGED_H, EQUIVALENT_H, INCONCLUSIVE_H = (
    "improved P+", "regressed P-", "changed Pchg", "equivalent", "inconclusive")
#: The headers of the item-classes table, one per value of :func:`class_row`.
CLASS_HEADERS = ("edge", "benchmark", "items", "K src", "K tgt", "acc src", "acc tgt", "delta",
                 IMPROVED_H, REGRESSED_H, CHANGED_H, "null p", EQUIVALENT_H, INCONCLUSIVE_H)
#: What the item-classes table's words mean, printed under it.
LEGEND = (
    "How to read it: each item is tested on its own: Fisher's exact test on its correct and incorrect "
    "trials, Benjamini-Hochberg across the cell's items. improved P+ / regressed P-: the share of items "
    "reliably better / worse on the target (significant, and the per-item accuracy moved by at least eps); "
    "changed Pchg: either; equivalent: shown not to move by eps (the 95% interval of the item's difference "
    "lies inside -eps to +eps); inconclusive: neither, too few trials to tell. In brackets: the share a "
    "shuffle of the two models' trials gives (95th percentile of the permutation null, what chance alone "
    "flags); null p: how often the shuffle flags at least as many items as observed. K: non-error trials "
    "per item; acc: mean per-item accuracy of the source (src, old) and target (tgt, new) model; delta: acc "
    "tgt - acc src.\n")


def class_row(c) -> list:
    """A cell's row of the item-classes table (shares with the null's 95th percentile in brackets)."""
    np95 = c.null_p95
    return [
        _edge(c), _bench(c.benchmark), c.n_items,
        _k(c.source_side), _k(c.target_side),
        pct(c.source_side.accuracy, 1), pct(c.target_side.accuracy, 1), _signed(c.delta),
        _obs_null(c.shares.p_plus, np95["p_plus"]), _obs_null(c.shares.p_minus, np95["p_minus"]),
        _obs_null(c.shares.p_chg, np95["p_chg"]),
        "-" if c.null_summary is None else f"{c.null_summary['p_value']['p_chg']:.3g}",
        pct(c.shares.equivalent_share, 1), pct(c.shares.inconclusive_share, 1),
    ]


def _iv(iv) -> str:
    return "-" if iv is None or iv.low is None else f"[{pct(iv.low, 1)}, {pct(iv.high, 1)}]"


#: The shares' interval columns (header, figure), of a cell, a stratum or a sensitivity row.
_SHARE_COLUMNS = ((IMPROVED_H, "p_plus"), (REGRESSED_H, "p_minus"), (CHANGED_H, "p_chg"),
                  (EQUIVALENT_H, "equivalent"), (INCONCLUSIVE_H, "inconclusive"))
#: The interval table's columns: (header, where the interval is).
_INTERVAL_COLUMNS = (
    ("acc src", lambda c: c.source_side.interval), ("acc tgt", lambda c: c.target_side.interval),
    *((h, lambda c, f=f: (c.intervals or {}).get(f)) for h, f in (("delta", "delta"), *_SHARE_COLUMNS)),
)


def _interval_table(key_header: str, keys: list[str], things: list, columns, fmt: Format, *, plain=()) -> str:
    """Intervals per row (``columns``: header and the row's interval; ``plain``: columns of values shown as
    they are, first): one table in markdown, in plain text blocks that each fit a terminal, rows matched by key."""
    cols = [(h, [get(x) for x in things]) for h, get in plain]
    cols += [(h, [_iv(get(x)) for x in things]) for h, get in columns]
    if fmt is Format.markdown:
        rows = [[k, *(values[i] for _, values in cols)] for i, k in enumerate(keys)]
        return table(rows, [key_header, *(h for h, _ in cols)], fmt)
    return table_blocks(key_header, keys, cols)


def _intervals(result: ItemsResult, fmt: Format) -> Section:
    """Every cell figure's 95% interval, items as the sampling unit (see trials/intervals.py)."""
    if not result.cells:
        return None
    keys = [f"{_edge(c)}, {_bench(c.benchmark)}" for c in result.cells]
    title = "95% intervals over items (independent items; not resampled)"
    note = ("Shares of items (improved, regressed, changed, equivalent, inconclusive): Wilson score over the cell's items. Accuracies: "
            "normal over items; delta: the paired normal interval of the per-item differences. P+ and P- "
            "stay lower bounds on churn: their interval is that of the share this K flags, not of the share "
            "that moved.\n")
    items = ("items", lambda c: c.n_items)
    body = _interval_table("cell", keys, list(result.cells), _INTERVAL_COLUMNS, fmt, plain=(items,))
    return title, body + "\n" + prose(note, fmt)


def _power(result: ItemsResult, fmt: Format) -> Section:
    """Beside P+ and P-: the power at the reference move, the null's false discoveries, Tarone's removals."""
    p, q = result.power_move
    move = f"{p:g} -> {q:g}"
    title = "Power at this K and the null's false discoveries"
    headers = ["edge", "benchmark", "items", "K src", "K tgt", f"power {move}", "bounds",
               "null E[false disc.]", "null P(>= 1)"]
    if result.tarone:
        headers.append("untestable left out")
    rows = []
    for c in result.cells:
        pw = c.power
        ns = c.null_summary
        row = [_edge(c), _bench(c.benchmark), c.n_items,
               "-" if pw is None else pw.k_source, "-" if pw is None else pw.k_target,
               "-" if pw is None else pct(pw.power, 1),
               "-" if pw is None else f"[{pct(pw.bounds[0], 1)}, {pct(pw.bounds[1], 1)}]",
               "-" if ns is None else f"{ns['expected_false_discoveries']['p_chg']:.3g}",
               "-" if ns is None else pct(ns["p_at_least_one"]["p_chg"], 1)]
        if result.tarone:
            row.append(c.tarone_removed)
        rows.append(row)
    note = (f"P+ and P- are lower bounds on churn at this K: an item that truly moves {move} is flagged "
            "only with the chance under 'power' (exact, as one more item beside the cell's items with "
            "their observed p-values; the bounds hold whatever the other items do). The null columns: "
            "the expected number of false discoveries per cell and the chance of at least one, under the "
            "permutation null (its 95th percentile is 0 by construction under BH).\n")
    if result.tarone:
        note += (f"\nUntestable: items whose smallest attainable Fisher p-value exceeds {result.alpha:g}, "
                 "left out of the cell before BH (--tarone).\n")
    return title, table(rows, headers, fmt) + "\n" + prose(note, fmt)


def _excluded(result: ItemsResult, fmt: Format) -> Section:
    excl = [c for c in result.cells if any(c.excluded.values())]
    if not excl:
        return None
    rows = [[_edge(c), _bench(c.benchmark), c.excluded["missing_source"], c.excluded["missing_target"],
             c.excluded["no_valid_trials"]] for c in excl]
    return "Items left out of cells", table(
        rows, ["edge", "benchmark", "missing on source", "missing on target", "only API errors on a side"], fmt)


def _sensitivity(result: ItemsResult, fmt: Format) -> Section:
    if not any(c.sensitivity for c in result.cells):
        return None
    rows = []
    for c in result.cells:
        for r in c.sensitivity:
            n95 = r.null_p95 or {}
            rows.append([_edge(c), _bench(c.benchmark), r.eps,
                         _obs_null(r.shares.p_plus, n95.get("p_plus")),
                         _obs_null(r.shares.p_minus, n95.get("p_minus")),
                         _obs_null(r.shares.p_chg, n95.get("p_chg")),
                         pct(r.shares.equivalent_share, 1), pct(r.shares.inconclusive_share, 1)])
    shown = [(c, r) for c in result.cells for r in c.sensitivity]
    keys = [f"{_edge(c)}, {_bench(c.benchmark)}, eps {r.eps}" for c, r in shown]
    columns = [(h, lambda x, f=f: x[1].intervals[f]) for h, f in _SHARE_COLUMNS]
    return "Sensitivity to eps", (
        table(rows, ["edge", "benchmark", "eps", IMPROVED_H, REGRESSED_H, CHANGED_H, EQUIVALENT_H, INCONCLUSIVE_H], fmt)
        + "\n95% intervals (Wilson over the cell's items):\n" + _interval_table("row", keys, shown, columns, fmt)
    )


def _single_draw(result: ItemsResult, fmt: Format) -> Section:
    cells = [(c, c.single_draw) for c in result.cells if c.single_draw]
    if not cells:
        return None
    rows = []
    for c, draw in cells:
        sd, ivs = draw.to_json(), draw.intervals
        rows.append([_edge(c), _bench(c.benchmark), c.n_items,
                     f"{pct(sd['correct_to_incorrect'], 1)} {_iv(ivs['correct_to_incorrect'])}",
                     f"{pct(sd['incorrect_to_correct'], 1)} {_iv(ivs['incorrect_to_correct'])}",
                     f"{pct(sd['changed'], 1)} {_iv(ivs['changed'])}",
                     pct(c.shares.p_minus, 1), pct(c.shares.p_plus, 1)])
    return "Single draw (one trial per item per model) vs K trials", table(
        rows, ["edge", "benchmark", "items", "1-draw correct->wrong", "1-draw wrong->correct", "1-draw changed",
               "K-trial P-", "K-trial P+"], fmt) + prose("\nIn brackets: 95% Wilson intervals over the items.\n", fmt)


def _loose(result: ItemsResult, fmt: Format) -> Section:
    cells = [(c, c.loose) for c in result.cells if c.loose]
    if not cells:
        return None
    rows = [[_edge(c), _bench(c.benchmark), loose.n_items, _signed(loose.r_source),
             _signed(loose.r_target), _signed(loose.delta_r)] for c, loose in cells]
    return "Strict vs loose (R = mean loose - mean strict)", table(
        rows, ["edge", "benchmark", "items", "R src", "R tgt", "delta R"], fmt)


def _strata(result: ItemsResult, fmt: Format) -> Section:
    if not any(c.strata for c in result.cells):
        return None
    rows = []
    for c in result.cells:
        for s in c.strata:
            n95 = s.null_p95 or {}
            rows.append([_edge(c), _bench(c.benchmark), str(s.value), s.shares.n_items,
                         _signed(s.delta), _obs_null(s.shares.p_plus, n95.get("p_plus")),
                         _obs_null(s.shares.p_minus, n95.get("p_minus")),
                         pct(s.shares.equivalent_share, 1), pct(s.shares.inconclusive_share, 1)])
    shown = [(c, s) for c in result.cells for s in c.strata]
    keys = [f"{_edge(c)}, {_bench(c.benchmark)}, {s.value} ({s.shares.n_items} items)" for c, s in shown]
    columns = [(h, lambda x, f=f: x[1].intervals.get(f)) for h, f in (("delta", "delta"), *_SHARE_COLUMNS)]
    small = [f"{_edge(c)}, {_bench(c.benchmark)}, {s.value}: {words}" for c, s in shown
             if (words := result.small_stratum(s)) is not None]
    return f"Strata by {result.strata_column}", (
        table(rows, ["edge", "benchmark", result.strata_column or "", "items", "delta", IMPROVED_H, REGRESSED_H, EQUIVALENT_H,
                    INCONCLUSIVE_H], fmt)
        + "\n95% intervals over the stratum's items (shares: Wilson; delta: paired normal):\n"
        + _interval_table("stratum", keys, shown, columns, fmt)
        + "".join(f"\nWarning: {w}" for w in small) + ("\n" if small else "")
    )


def _accuracy(result: ItemsResult, fmt: Format) -> Section:
    rows = []
    for a in result.accuracy:
        ci = "-" if a.ci_low is None else f"[{pct(a.ci_low, 1)}, {pct(a.ci_high, 1)}]"
        rows.append([a.model, a.benchmark, a.n_items, a.trials, a.categories.get("api_error", 0),
                     pct(a.accuracy, 1), ci, _signed(a.r) if a.loose_items else "-"])
    return "Accuracy per model and benchmark (mean of per-item rates; 95% normal interval over items)", table(
        rows, ["model", "benchmark", "items", "trials", "api errors", "accuracy", "95% CI", "R loose-strict"], fmt)


def _categories(result: ItemsResult, fmt: Format) -> Section:
    """Every model's responses per benchmark in the six categories, as counts and shares of its trials."""
    categories = list(result.accuracy[0].categories) if result.accuracy else []  # in the table's order
    rows = []
    for a in result.accuracy:
        shares = [f"{a.categories.get(c, 0)} ({pct(a.categories.get(c, 0) / a.trials if a.trials else None, 1)})"
                  for c in categories]
        rows.append([a.model, a.benchmark, a.trials, *shares])
    note = ("Trials per category (share of the model's trials on the benchmark). Accuracy above is over the "
            "non-error trials: an api_error leaves the denominator; format failures, refusals and "
            "truncations count as failures.\n")
    return "Responses per category (trials)", table(rows, ["model", "benchmark", "trials", *categories], fmt) + "\n" + prose(note, fmt)


def _k(side) -> str:
    if side.k_min == side.k_max:
        return str(side.k_min)
    return f"{side.k_min}-{side.k_max}"


def _signed(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:+.1f} pp"

