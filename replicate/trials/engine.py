"""``analyse_items``: the item-level engine for K-trial studies (pure: a table in, a result out).

Per edge s -> t and cell (one benchmark, or all pooled): the items with at least
one non-error trial on both sides; Fisher's exact test per item, BH across the
cell, the exact practical threshold, the difference interval, the shares, and
the permutation null's 95th percentiles. Items missing on a side, or with only
API errors on a side, are left out of the cell and counted in ``excluded``
(and reported as a warning).

Random streams are derived from ``seed`` and the cell's names (source, target,
benchmark), so a cell's null draws do not change when other edges are added.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import Message, Param, UsageError
from replicate.stats.classify import CLASSES, IMPROVED, REGRESSED, classify, parse_eps, parse_eps_list
from replicate.stats.fisher import PValueTables
from replicate.stats.intervals import DIFF_METHODS, DiffMethod, diff_interval
from replicate.stats.itemtests import Rule, cell_tests, min_attainable_p
from replicate.stats.min_items import MIN_ITEMS
from replicate.stats.null import permutation_null
from replicate.stats.power import FlagPower, flag_power
from replicate.stats.rational import mean_of_ratios
from replicate.trials.accuracy import accuracy_table, looseness
from replicate.trials.counts import Counts, aggregate, unit_metadata
from replicate.trials.intervals import cell_intervals, mean_rate_interval
from replicate.trials.load import TrialsTable
from replicate.trials.results import (
    CellResult,
    ItemRows,
    ItemsResult,
    SensitivityRow,
    Shares,
    SideSummary,
    SingleDraw,
    Stratum,
)
from replicate.trials.settings import BY_CHOICES, DEFAULT_SEED, DEFAULTS

POWER_MOVE = (0.4, 0.6)  # the reference move whose power is shown beside P+ and P-
MISSING_STRATUM = "(missing)"


def parse_edge(text: str, models: Sequence[str] | None = None) -> tuple[str, str]:
    """``"SRC:TGT"`` -> ``("SRC", "TGT")``.

    Model names may contain ':' themselves; with ``models`` given, the split whose two
    sides are both known models wins. Otherwise the text is split at its first ':'.
    """
    splits = [(text[:i], text[i + 1 :]) for i, ch in enumerate(text) if ch == ":"]
    splits = [(s, t) for s, t in splits if s and t]
    if not splits:
        raise UsageError(Message(Param("edge"), f" must look like SOURCE:TARGET, got {text!r}"))
    if models is not None:
        known = [(s, t) for s, t in splits if s in models and t in models]
        if len(known) == 1:
            return known[0]
    return splits[0]


def _stratum_key(v: Any) -> tuple:
    if v == MISSING_STRATUM:
        return (2, "")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, v)
    return (1, str(v))


#: A normal interval over items of zero width: every item at the same rate (or difference), so sd = 0.
ZERO_WIDTH_MEAN = ("the normal interval over items has zero width (every item at the same rate): it is the single "
                   "point and says nothing about uncertainty")


#: Values per array of one block of null replications (2 MiB of float64): the block's memory stays
#: bounded by this, not by replications x items. The draws do not depend on the block size.
NULL_BLOCK_VALUES = 1 << 18


def null_chunk(n_items: int) -> int:
    """Replications per block of the permutation null for a cell of ``n_items`` items (1 to 256)."""
    return max(1, min(256, NULL_BLOCK_VALUES // max(n_items, 1)))


def _cell_rng(seed: int, *names: Any) -> np.random.Generator:
    digest = hashlib.sha256("\x00".join(str(n) for n in names).encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([seed, *words]))


def _validate(
    counts: Counts,
    edges: Sequence[tuple[str, str]],
    by: str,
    alpha: float,
    ci: str,
    n_null: int,
    seed: int,
) -> DiffMethod:
    """Raise on bad arguments; ``ci`` as the interval method it names."""
    unknown = sorted({m for e in edges for m in e if m not in counts.models})
    if unknown:
        raise UsageError(
            Message("unknown model(s) in ", Param("edges"), f": {', '.join(unknown)}; "
                    f"models in the table: {', '.join(counts.models)}")
        )
    same = [f"{s}:{t}" for s, t in edges if s == t]
    if same:
        raise UsageError(f"an edge needs two different models, got {', '.join(same)}")
    if by not in BY_CHOICES:
        raise UsageError(Message(Param("by"), f" must be one of {', '.join(BY_CHOICES)}; got {by!r}"))
    if not 0 < alpha < 1:
        raise UsageError(Message(Param("alpha"), f" must lie in (0, 1), got {alpha}"))
    if ci not in DIFF_METHODS:
        raise UsageError(Message(Param("ci"), f" must be one of {', '.join(DIFF_METHODS)}; got {ci!r}"))
    if n_null < 0:
        raise UsageError(Message(Param("n_null"), f" must be >= 0 (0 = off), got {n_null}"))
    if seed < 0:
        raise UsageError(Message(Param("seed"), f" must be >= 0, got {seed}"))
    return ci


def analyse_items(
    table: TrialsTable,
    edges: Sequence[tuple[str, str]],
    *,
    by: str = "benchmark",
    eps: str | float | Fraction = DEFAULTS.eps,
    alpha: float = DEFAULTS.alpha,
    ci: str = DEFAULTS.ci,
    n_null: int = DEFAULTS.null,
    seed: int | None = DEFAULT_SEED,
    sensitivity: Sequence[str | float | Fraction] | str | None = None,
    single_draw: bool = False,
    strata: str | None = None,
    tarone: bool = False,
    power_move: tuple[float, float] = POWER_MOVE,
    min_items: int = MIN_ITEMS,
    diagnostics: Diagnostics | None = None,
) -> ItemsResult:
    """Classify every item of every edge x benchmark cell; see the module docstring.

    Without ``edges`` there are no cells: the result holds each model's accuracy per benchmark.

    Defaults are those of :mod:`replicate.trials.settings` (``seed`` None: its seed).

    ``tarone``: leave out of each cell the items whose smallest attainable Fisher p-value
    exceeds ``alpha`` (they can never be significant); counted per cell. ``power_move``:
    the reference move ``p -> q`` whose power at each cell's K is reported beside P+ and P-.
    ``min_items``: a cell of fewer items is flagged ``small_sample`` (the threshold of edges and floors).
    """
    diag = diagnostics if diagnostics is not None else Diagnostics()
    seed = DEFAULT_SEED if seed is None else int(seed)
    try:
        eps_f = parse_eps(eps, name="eps")
        if isinstance(sensitivity, str):
            sens = parse_eps_list(sensitivity, name="sensitivity")
        else:
            sens = [parse_eps(e, name="sensitivity") for e in (sensitivity or ())]
    except ValueError as exc:
        raise UsageError(Message.naming(str(exc), "eps", "sensitivity")) from None
    counts, row_unit = aggregate(table)
    method = _validate(counts, edges, by, alpha, ci, n_null, seed)
    if not all(0 <= x <= 1 for x in power_move) or len(power_move) != 2:
        raise UsageError(Message(Param("power_move"), f" must be two accuracies in [0, 1], got {power_move}"))
    rule = Rule(PValueTables(), float(alpha), (eps_f, *sens))
    stratum_of_unit = (
        unit_metadata(table, row_unit, counts.n_units, strata) if strata is not None else None
    )
    draws = _single_draws(counts, seed) if single_draw else None

    groups: list[tuple[str | None, np.ndarray]]
    if by == "benchmark":
        groups = [
            (name, np.flatnonzero(counts.unit_benchmark == k))
            for k, name in enumerate(counts.benchmarks)
        ]
    else:
        groups = [(None, np.arange(counts.n_units))]

    cells = []
    for src, tgt in edges:
        s, t = counts.models.index(src), counts.models.index(tgt)
        for bench, units in groups:
            cells.append(
                _cell(
                    counts, s, t, bench, units,
                    rule=rule, ci=method, n_null=n_null, seed=seed, stratum_of_unit=stratum_of_unit,
                    draws=draws, diag=diag, path=table.path, tarone=tarone, power_move=power_move,
                )
            )
    accuracy = accuracy_table(counts)
    for row in accuracy:
        if row.ci_low is not None and row.ci_low == row.ci_high:
            diag.warn("zero-width-interval", f"{row.model}, benchmark {row.benchmark}: {ZERO_WIDTH_MEAN}", path=table.path)
    return ItemsResult(
        cells=tuple(cells),
        accuracy=accuracy,
        eps=_eps_text(eps_f),
        alpha=float(alpha),
        ci=ci,
        n_null=int(n_null),
        seed=seed,
        by=by,
        strata_column=strata,
        single_draw=single_draw,
        tarone=tarone,
        power_move=(float(power_move[0]), float(power_move[1])),
        min_items=int(min_items),
        input={
            "file": table.provenance.to_json() if table.provenance else {"path": table.path},
            "rows": table.n_rows,
            "models": list(table.models),
            "benchmarks": list(table.benchmarks),
            "scorers": list(table.scorers),
        },
        diagnostics=diag.to_json(),
        provenance=table.provenance,
    )


def _eps_text(e: Fraction) -> str:
    from decimal import Decimal

    d = Decimal(e.numerator) / Decimal(e.denominator)
    return format(d.normalize(), "f") if Fraction(d) == e else f"{e.numerator}/{e.denominator}"


def _single_draws(counts: Counts, seed: int) -> np.ndarray:
    """Per (model, unit): whether one uniformly drawn non-error trial is correct."""
    rng = _cell_rng(seed, "single-draw")
    valid = counts.valid
    pick = rng.integers(0, np.maximum(valid, 1))
    return pick < counts.correct


def _stratum(
    value: Any, cls: np.ndarray, a: np.ndarray, n1: np.ndarray, b: np.ndarray, n2: np.ndarray, null_p95: dict | None
) -> Stratum:
    """One stratum of a cell: its items' shares and delta, each with its interval over those items."""
    shares = Shares.of(cls)
    return Stratum(value, shares, _exact_delta(a, n1, b, n2), null_p95, cell_intervals(a, n1, b, n2, shares.figure_counts))


def _exact_delta(a: np.ndarray, n1: np.ndarray, b: np.ndarray, n2: np.ndarray) -> float | None:
    """Mean p̂ target - mean p̂ source over these items, exactly, then rounded once."""
    s, t = mean_of_ratios(a, n1), mean_of_ratios(b, n2)
    return None if s is None or t is None else float(t - s)


def _side(
    counts: Counts, m: int, units: np.ndarray, n: np.ndarray, acc: Fraction | None, correct: np.ndarray
) -> SideSummary:
    return SideSummary(
        model=counts.models[m],
        k_min=int(n.min()) if n.size else 0,
        k_max=int(n.max()) if n.size else 0,
        k_mean=float(n.mean()) if n.size else None,
        trials=int(counts.trials[m, units].sum()),
        api_errors=int(counts.api_errors[m, units].sum()),
        accuracy_exact=acc,
        interval=mean_rate_interval(correct / n if n.size else np.zeros(0)),
    )


def _strata_groups(stratum_of_unit: list[Any] | None, keep: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """The stratum labels (sorted: numbers, then text and true/false, then ``(missing)``) and each
    kept unit's index into them; one unlabelled group without ``--strata``."""
    if stratum_of_unit is None:
        return [None], np.zeros(keep.size, dtype=np.int64)
    vals = [stratum_of_unit[u] for u in keep.tolist()]
    vals = [MISSING_STRATUM if v is None else v for v in vals]
    # Keyed by (is bool, value): Python's True == 1 must not merge two strata.
    keyed = {(type(v) is bool, v): v for v in vals}
    order = sorted(keyed, key=lambda k: _stratum_key(keyed[k]))
    index = {k: i for i, k in enumerate(order)}
    g = np.asarray([index[(type(v) is bool, v)] for v in vals], dtype=np.int64)
    return [keyed[k] for k in order], g


def _cell(
    counts: Counts,
    s: int,
    t: int,
    bench: str | None,
    units: np.ndarray,
    *,
    rule: Rule,
    ci: DiffMethod,
    n_null: int,
    seed: int,
    stratum_of_unit: list[Any] | None,
    draws: np.ndarray | None,
    diag: Diagnostics,
    path: str,
    tarone: bool = False,
    power_move: tuple[float, float] = POWER_MOVE,
) -> CellResult:
    src, tgt = counts.models[s], counts.models[t]
    tr_s, tr_t = counts.trials[s, units], counts.trials[t, units]
    v_s, v_t = counts.valid[s, units], counts.valid[t, units]
    excluded = {
        "missing_source": int(((tr_s == 0) & (tr_t > 0)).sum()),
        "missing_target": int(((tr_t == 0) & (tr_s > 0)).sum()),
        "no_valid_trials": int(((tr_s > 0) & (tr_t > 0) & ((v_s == 0) | (v_t == 0))).sum()),
    }
    where = f"{src} -> {tgt}" + ("" if bench is None else f", benchmark {bench}")
    if any(excluded.values()):
        diag.warn(
            "items-excluded",
            f"{where}: left out {excluded['missing_source']} item(s) missing on the source, "
            f"{excluded['missing_target']} missing on the target, {excluded['no_valid_trials']} "
            "with only API errors on a side",
            path=path,
        )
    keep = units[(v_s > 0) & (v_t > 0)]
    removed = None
    if tarone:
        keep, removed = _tarone(counts, s, t, keep, rule)
    if keep.size == 0:
        diag.warn("empty-cell", f"{where}: no item has non-error trials on both sides", path=path)
    a, n1 = counts.correct[s, keep].astype(np.int64), counts.valid[s, keep].astype(np.int64)
    b, n2 = counts.correct[t, keep].astype(np.int64), counts.valid[t, keep].astype(np.int64)
    tests = cell_tests(a, n1, b, n2, rule)
    lo, hi = diff_interval(a, n1, b, n2, method=ci)
    zero = int((lo == hi).sum())
    if zero:
        diag.warn(
            "zero-width-interval",
            f"{where}: {zero} item(s) have a zero-width {ci} interval for d (all correct or all wrong "
            "on both sides): the interval is the single point d and says nothing about its uncertainty",
            path=path,
        )
    cls = classify(tests.significant, tests.up[0], tests.down[0], lo, hi, rule.eps_list[0])
    acc_s, acc_t = mean_of_ratios(a, n1), mean_of_ratios(b, n2)

    labels, g = _strata_groups(stratum_of_unit, keep)
    sizes = np.bincount(g, minlength=len(labels))

    rng = _cell_rng(seed, "null", src, tgt, "" if bench is None else bench)
    null = permutation_null(
        a, n1, b, n2, rule, n_resamples=n_null, rng=rng, groups=g, n_groups=len(labels), chunk=null_chunk(a.size),
    )
    off = n_null == 0

    def p95(k: int = 0, group: int | None = None) -> dict:
        if off:
            return {"p_plus": None, "p_minus": None, "p_chg": None}
        return null.shares_p95(sizes, eps_index=k, group=group)

    sensitivity = []
    for k in range(1, len(rule.eps_list)):
        ck = classify(tests.significant, tests.up[k], tests.down[k], lo, hi, rule.eps_list[k])
        sensitivity.append(SensitivityRow(_eps_text(rule.eps_list[k]), Shares.of(ck), p95(k)))

    strata_rows: tuple[Stratum, ...] = ()
    if stratum_of_unit is not None:
        strata_rows = tuple(
            _stratum(lab, cls[g == i], a[g == i], n1[g == i], b[g == i], n2[g == i], p95(0, i))
            for i, lab in enumerate(labels)
        )

    single = None
    if draws is not None:
        ds, dt = draws[s, keep], draws[t, keep]
        single = SingleDraw(int(keep.size), int((ds & ~dt).sum()), int((~ds & dt).sum()))

    loose = looseness(counts, s, t, keep)
    rows = ItemRows(
        items=tuple(counts.unit_item[u] for u in keep.tolist()),
        benchmarks=tuple(counts.benchmarks[int(counts.unit_benchmark[u])] for u in keep.tolist()),
        a=a, n1=n1, api1=counts.api_errors[s, keep], b=b, n2=n2, api2=counts.api_errors[t, keep],
        p=tests.p, q=tests.q, lo=lo, hi=hi, cls=cls,
    )
    for arr in (rows.a, rows.n1, rows.b, rows.n2, rows.p, rows.q, rows.lo, rows.hi, rows.cls):
        arr.flags.writeable = False
    shares = Shares.of(cls)
    intervals = cell_intervals(a, n1, b, n2, shares.figure_counts)
    source_side, target_side = _side(counts, s, keep, n1, acc_s, a), _side(counts, t, keep, n2, acc_t, b)
    flat = [name for name, iv in (("acc src", source_side.interval), ("acc tgt", target_side.interval),
                                  ("delta", intervals["delta"]))
            if iv is not None and iv.low is not None and iv.low == iv.high]
    if flat:
        diag.warn("zero-width-interval", f"{where}: {', '.join(flat)}: {ZERO_WIDTH_MEAN}", path=path)
    return CellResult(
        source=src,
        target=tgt,
        benchmark=bench,
        source_side=source_side,
        target_side=target_side,
        shares=shares,
        intervals=intervals,
        null_p95=p95(),
        null_summary=None if off else null.summary(sizes, (int((cls == IMPROVED).sum()), int((cls == REGRESSED).sum()))),
        seed=seed,
        excluded=excluded,
        sensitivity=tuple(sensitivity),
        single_draw=single,
        loose=loose,
        strata=strata_rows,
        rows=rows,
        tarone_removed=removed,
        power=reference_power(n1, n2, tests.p, rule, power_move),
    )


def _tarone(counts: Counts, s: int, t: int, keep: np.ndarray, rule: Rule) -> tuple[np.ndarray, int]:
    """The kept units whose smallest attainable Fisher p-value is <= alpha, and how many were left out."""
    n1, n2 = counts.valid[s, keep], counts.valid[t, keep]
    c = counts.correct[s, keep] + counts.correct[t, keep]
    testable = min_attainable_p(n1, n2, c, rule.tables) <= rule.alpha
    return keep[testable], int((~testable).sum())


def reference_power(
    n1: np.ndarray, n2: np.ndarray, p: np.ndarray, rule: Rule, move: tuple[float, float]
) -> FlagPower | None:
    """The chance that one more item, moving ``move`` at the cell's K (the median per side when K
    varies), is flagged beside the cell's items with their observed p-values (exact)."""
    if n1.size == 0:
        return None
    k1, k2 = (int(np.floor(np.median(n) + 0.5)) for n in (n1, n2))
    return flag_power(move[0], move[1], k=k1, k_target=k2, n_items=int(n1.size) + 1, alpha=rule.alpha,
                      eps=rule.eps_list[0], others=p)


def per_item_rows(result: ItemsResult):
    """One JSON-ready row per item and edge (for ``--per-item``)."""
    for c in result.cells:
        r = c.rows
        if r is None:
            continue
        for i in range(len(r.items)):
            d = Fraction(int(r.b[i]), int(r.n2[i])) - Fraction(int(r.a[i]), int(r.n1[i]))
            yield {
                "source": c.source,
                "target": c.target,
                "benchmark": r.benchmarks[i],
                "item": r.items[i],
                "correct_source": int(r.a[i]),
                "trials_source": int(r.n1[i]),
                "api_errors_source": int(r.api1[i]),
                "correct_target": int(r.b[i]),
                "trials_target": int(r.n2[i]),
                "api_errors_target": int(r.api2[i]),
                "p": float(r.p[i]),
                "q": float(r.q[i]),
                "d": float(d),  # correctly rounded: d >= eps in floats agrees with the exact rule
                "d_exact": str(d),  # b/n2 - a/n1 as a reduced fraction, e.g. "1/5"
                "ci_low": float(r.lo[i]),
                "ci_high": float(r.hi[i]),
                "class": CLASSES[int(r.cls[i])],
            }
