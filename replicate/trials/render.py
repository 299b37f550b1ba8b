"""Plain-text and markdown rendering of :class:`ItemsResult` and :class:`ScreenResult` (pure)."""

from __future__ import annotations

from replicate.output import Format, dumps_json, num, pct, table
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


def render_items(result: ItemsResult, fmt: Format | str) -> str:
    fmt = Format(fmt)
    if fmt is Format.json:
        return dumps_json(result.to_json())
    md = fmt is Format.markdown
    out: list[str] = []

    def heading(text: str) -> None:
        out.append(f"## {text}\n" if md else f"{text}\n")

    null_note = (
        f"; in brackets the 95th percentile of {result.n_null} permutation replications"
        if result.n_null
        else "; permutation null off"
    )
    heading(f"Item classes (eps {result.eps}, BH q <= {result.alpha}, {result.ci} 95% interval{null_note}, seed {result.seed})")
    rows = []
    for c in result.cells:
        np95 = c.null_p95
        rows.append([
            f"{c.source} -> {c.target}", _bench(c.benchmark), c.n_items,
            _k(c.source_side), _k(c.target_side),
            pct(c.source_side.accuracy, 1), pct(c.target_side.accuracy, 1), _signed(c.delta),
            _obs_null(c.shares.p_plus, np95["p_plus"]), _obs_null(c.shares.p_minus, np95["p_minus"]),
            _obs_null(c.shares.p_chg, np95["p_chg"]),
            "-" if c.null_summary is None else f"{c.null_summary['p_value']['p_chg']:.3g}",
            pct(c.shares.equivalent_share, 1), pct(c.shares.inconclusive_share, 1),
        ])
    out.append(table(rows, ["edge", "benchmark", "items", "K src", "K tgt", "acc src", "acc tgt", "delta",
                            "P+", "P-", "Pchg", "null p", "equiv", "inconcl"], fmt))

    excl = [c for c in result.cells if any(c.excluded.values())]
    if excl:
        out.append("")
        heading("Items left out of cells")
        out.append(table([[f"{c.source} -> {c.target}", _bench(c.benchmark), c.excluded["missing_source"],
                           c.excluded["missing_target"], c.excluded["no_valid_trials"]] for c in excl],
                         ["edge", "benchmark", "missing on source", "missing on target", "only API errors on a side"], fmt))

    if any(c.sensitivity for c in result.cells):
        out.append("")
        heading("Sensitivity to eps")
        rows = []
        for c in result.cells:
            for r in c.sensitivity:
                rows.append([f"{c.source} -> {c.target}", _bench(c.benchmark), r.eps,
                             _obs_null(r.shares.p_plus, r.null_p95["p_plus"] if r.null_p95 else None),
                             _obs_null(r.shares.p_minus, r.null_p95["p_minus"] if r.null_p95 else None),
                             _obs_null(r.shares.p_chg, r.null_p95["p_chg"] if r.null_p95 else None),
                             pct(r.shares.equivalent_share, 1), pct(r.shares.inconclusive_share, 1)])
        out.append(table(rows, ["edge", "benchmark", "eps", "P+", "P-", "Pchg", "equiv", "inconcl"], fmt))

    if any(c.single_draw for c in result.cells):
        out.append("")
        heading("Single draw (one trial per item per model) vs K trials")
        rows = []
        for c in result.cells:
            sd = c.single_draw.to_json() if c.single_draw else None
            if sd is None:
                continue
            rows.append([f"{c.source} -> {c.target}", _bench(c.benchmark), c.n_items,
                         pct(sd["correct_to_incorrect"], 1), pct(sd["incorrect_to_correct"], 1),
                         pct(c.shares.p_minus, 1), pct(c.shares.p_plus, 1)])
        out.append(table(rows, ["edge", "benchmark", "items", "1-draw correct->wrong", "1-draw wrong->correct",
                                "K-trial P-", "K-trial P+"], fmt))

    if any(c.loose for c in result.cells):
        out.append("")
        heading("Strict vs loose (R = mean loose - mean strict)")
        rows = [[f"{c.source} -> {c.target}", _bench(c.benchmark), c.loose.n_items, _signed(c.loose.r_source),
                 _signed(c.loose.r_target), _signed(c.loose.delta_r)] for c in result.cells if c.loose]
        out.append(table(rows, ["edge", "benchmark", "items", "R src", "R tgt", "delta R"], fmt))

    if any(c.strata for c in result.cells):
        out.append("")
        heading(f"Strata by {result.strata_column}")
        rows = []
        for c in result.cells:
            for s in c.strata:
                n95 = s.null_p95 or {}
                rows.append([f"{c.source} -> {c.target}", _bench(c.benchmark), str(s.value), s.shares.n_items,
                             _signed(s.delta), _obs_null(s.shares.p_plus, n95.get("p_plus")),
                             _obs_null(s.shares.p_minus, n95.get("p_minus")),
                             pct(s.shares.equivalent_share, 1), pct(s.shares.inconclusive_share, 1)])
        out.append(table(rows, ["edge", "benchmark", result.strata_column or "", "items", "delta", "P+", "P-",
                                "equiv", "inconcl"], fmt))

    out.append("")
    heading("Accuracy per model and benchmark (mean of per-item rates; 95% normal interval over items)")
    rows = []
    for a in result.accuracy:
        ci = "-" if a.ci_low is None else f"[{pct(a.ci_low, 1)}, {pct(a.ci_high, 1)}]"
        rows.append([a.model, a.benchmark, a.n_items, a.trials, a.categories.get("api_error", 0),
                     pct(a.accuracy, 1), ci, _signed(a.r) if a.loose_items else "-"])
    out.append(table(rows, ["model", "benchmark", "items", "trials", "api errors", "accuracy", "95% CI", "R loose-strict"], fmt))
    out.append(input_lines(result.provenance, fmt).rstrip("\n"))
    n_warn = result.diagnostics.get("count", 0)
    if n_warn:
        out.append(f"\n{n_warn} warning(s); see --format json for details.")
    return "\n".join(out)


def _k(side) -> str:
    if side.k_min == side.k_max:
        return str(side.k_min)
    return f"{side.k_min}-{side.k_max}"


def _signed(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:+.1f} pp"


__all__ = ["render_items", "num"]
