"""``analyse_costs``: token cost per model and per edge of a K-trial study (pure: a table in, a result out).

Usage per trial is read by :mod:`replicate.trials.usage` (null = not reported,
kept apart, never 0; API-error trials left out). Kinds: prompt, completion,
reasoning, total (= prompt + completion) and, with prices, cost.

- Per model (and benchmark, ``by="benchmark"``): the distribution of each kind
  **per trial** (the non-error trials reporting it) and **per item** (the mean
  over the item's trials that report it): n, mean, median, p90, p99 (numpy's
  linear percentiles), max, and how many trials (items) report none.
- Per edge s -> t and cell (the items ``replicate items`` classifies there:
  a non-error trial on both sides): per item ``change = mean_t - mean_s`` and
  ``ratio = mean_t / mean_s`` (items whose source used none are left out of the
  ratio and counted), over the items where both sides report the kind; their
  medians; the share of those items costing more (``change > 0``); tokens per
  correct answer on each side (the tokens of the cell's trials that report
  them over the correct answers among those same trials); and per item class
  of the edge (improved, regressed, equivalent, inconclusive: the
  classification of ``items`` with the same settings) the median change and
  ratio.
- Intervals of the medians, the share and tokens per correct: percentile
  bootstrap over items, or whole clusters of items sharing a metadata value
  (``cluster``; None or ``"item"``: items), ``n_resamples`` replicates drawn from ``seed`` and the cell's
  names (as ``items`` derives its null's streams), so a cell's intervals do not
  change when other edges are added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param, UsageError
from replicate.stats.bootstrap import CLUSTER_METHOD, DEFAULT_RESAMPLES, ITEM_METHOD, Clusters
from replicate.stats.classify import CLASSES
from replicate.stats.medians import ItemResampling, ratio_of_sums, resample_items, weighted_medians, weighted_sums
from replicate.stats.rational import as_float
from replicate.trials.costs_result import Change, ClassChange, CostsResult, Distribution, EdgeCost, ModelCost
from replicate.trials.counts import Counts, aggregate, unit_metadata
from replicate.trials.engine import BY_CHOICES, _cell_rng, analyse_items
from replicate.trials.load import API_ERROR, CORRECT, TrialsTable, readonly
from replicate.trials.prices import Prices
from replicate.trials.results import CellResult
from replicate.trials.usage import KINDS, Usage, read_usage

CONFIDENCE_LEVEL = 0.95
#: ``cluster`` naming the item bootstrap (each item its own cluster), as the judge commands' ``--cluster item``.
ITEM_CLUSTER = "item"


def distribution(values: np.ndarray) -> Distribution:
    """n, null (NaN) count, mean, median, p90, p99 and max of ``values``."""
    v = values[~np.isnan(values)]
    null = int(values.size - v.size)
    if v.size == 0:
        return Distribution(0, null)
    p50, p90, p99 = np.percentile(v, [50, 90, 99]).tolist()
    return Distribution(int(v.size), null, float(v.mean()), float(p50), float(p90), float(p99), float(v.max()))


class _Sums:
    """Per (model, unit) and kind: tokens summed over the non-error trials reporting them, how many, and how many correct."""

    def __init__(self, table: TrialsTable, values: Mapping[str, np.ndarray], row_unit: np.ndarray, counts: Counts):
        shape = (len(counts.models), counts.n_units)
        mu = table.model.astype(np.int64) * counts.n_units + row_unit
        ok = table.category != API_ERROR
        correct = table.category == CORRECT
        size = shape[0] * shape[1]
        self.sum, self.n, self.correct = {}, {}, {}
        for kind, v in values.items():
            has = ok & ~np.isnan(v)
            self.sum[kind] = np.bincount(mu[has], weights=v[has], minlength=size).reshape(shape)
            self.n[kind] = np.bincount(mu[has], minlength=size).reshape(shape)
            self.correct[kind] = np.bincount(mu[has & correct], minlength=size).reshape(shape)

    def mean(self, kind: str) -> np.ndarray:
        """Per (model, unit) the mean over the trials reporting ``kind``; NaN where none does."""
        out = np.full(self.sum[kind].shape, np.nan)
        np.divide(self.sum[kind], self.n[kind], out=out, where=self.n[kind] > 0)
        return out


def _values(table: TrialsTable, usage: Usage, prices: Prices | None, diag: Diagnostics) -> tuple[dict, tuple]:
    """Per kind the value of each row (with ``cost`` when priced), and the models without a price."""
    values = dict(usage.tokens)
    if prices is None:
        return values, ()
    cost = np.full(table.n_rows, np.nan)
    unpriced = tuple(m for m in table.models if m not in prices.models)
    for k, m in enumerate(table.models):
        if m in prices.models:
            rows = table.model == k
            t = usage.tokens
            cost[rows] = prices.models[m].cost(t["prompt"][rows], t["completion"][rows], t["reasoning"][rows])
    if unpriced:
        diag.warn("unpriced", f"no price in {prices.path} for model(s) {', '.join(unpriced)}: their cost is null",
                  path=table.path)
    values["cost"] = cost
    return values, unpriced


def _groups(counts: Counts, by: str) -> list[tuple[str | None, np.ndarray]]:
    if by == "benchmark":
        return [(b, np.flatnonzero(counts.unit_benchmark == k)) for k, b in enumerate(counts.benchmarks)]
    return [(None, np.arange(counts.n_units))]


def _model_rows(table, counts, row_unit, values, sums: _Sums, by: str) -> list[ModelCost]:
    out = []
    ok = table.category != API_ERROR
    for bench, units in _groups(counts, by):
        in_group = np.zeros(counts.n_units, dtype=bool)
        in_group[units] = True
        for m, name in enumerate(counts.models):
            if counts.trials[m, units].sum() == 0:
                continue  # the model did not answer this benchmark
            rows = (table.model == m) & in_group[row_unit]
            items = units[counts.valid[m, units] > 0]
            out.append(ModelCost(
                model=name, benchmark=bench, trials=int((rows & ok).sum()), api_errors=int((rows & ~ok).sum()),
                items=int(items.size),
                per_trial={k: distribution(v[rows & ok]) for k, v in values.items()},
                per_item={k: distribution(sums.mean(k)[m, items]) for k in values},
                item_values={k: readonly(sums.mean(k)[m, items]) for k in values},
            ))
    return out


def _median(x: np.ndarray) -> float | None:
    x = x[~np.isnan(x)]
    return float(np.median(x)) if x.size else None


_SHARED = ("median_change", "median_ratio", "share_more")


def _replicates(d: np.ndarray, r: np.ndarray, paired: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    """Per replicate: the median change, the median ratio and the share of paired items costing more."""
    more = np.where(paired, d > 0, np.nan)
    return [weighted_medians(d, w), weighted_medians(r, w),
            ratio_of_sums(weighted_sums(more, w), weighted_sums(paired.astype(float), w))]


def _change(s_mean, t_mean, s_tok, s_cor, t_tok, t_cor, cls, boot: ItemResampling | None) -> Change:
    """One kind on one cell: arrays over the cell's items (means per side, NaN = not reported)."""
    paired = ~np.isnan(s_mean) & ~np.isnan(t_mean)
    d = np.where(paired, t_mean - s_mean, np.nan)
    has_ratio = paired & (s_mean > 0)
    r = np.full(d.shape, np.nan)
    np.divide(t_mean, s_mean, out=r, where=has_ratio)
    by_class = {}
    for k, c in enumerate(CLASSES):
        inc = cls == k
        class_ivs = {}
        if boot is not None and inc.any():  # the cell's replicates, each item keeping its observed class
            reps = _replicates(np.where(inc, d, np.nan), np.where(inc, r, np.nan), paired & inc, boot.weights)
            class_ivs = dict(zip(_SHARED, boot.intervals(np.column_stack(reps))))
        by_class[c] = ClassChange(int(inc.sum()), int((paired & inc).sum()), _median(d[inc]), _median(r[inc]),
                                  int((paired & inc & (d > 0)).sum()), class_ivs)
    intervals = {}
    if boot is not None:
        w = boot.weights
        reps = _replicates(d, r, paired, w) + [
            ratio_of_sums(weighted_sums(s_tok, w), weighted_sums(s_cor, w)),
            ratio_of_sums(weighted_sums(t_tok, w), weighted_sums(t_cor, w)),
        ]
        intervals = dict(zip((*_SHARED, "per_correct_source", "per_correct_target"),
                             boot.intervals(np.column_stack(reps))))

    def per_correct(tok: np.ndarray, cor: np.ndarray) -> float | None:
        return float(tok.sum() / cor.sum()) if cor.sum() > 0 else None

    return Change(
        paired=int(paired.sum()), no_usage=int((~paired).sum()), median_change=_median(d), median_ratio=_median(r),
        ratio_items=int(has_ratio.sum()), zero_source=int((paired & ~has_ratio).sum()),
        more=int((paired & (d > 0)).sum()), less=int((paired & (d < 0)).sum()), same=int((paired & (d == 0)).sum()),
        per_correct_source=per_correct(s_tok, s_cor), per_correct_target=per_correct(t_tok, t_cor),
        by_class=by_class, intervals=intervals,
    )


def _clusters(units: np.ndarray, cluster_of_unit: list[Any] | None, column: str | None, counts: Counts,
              path: str) -> Clusters:
    if cluster_of_unit is None or column is None:
        return Clusters.items(int(units.size))
    values = [cluster_of_unit[u] for u in units.tolist()]
    missing = [u for u, v in zip(units.tolist(), values) if v is None]
    if missing:
        u = missing[0]
        raise BadInput(Message(f"item {counts.unit_item[u]!r} (benchmark {counts.benchmarks[counts.unit_benchmark[u]]}) "
                               f"has no value in column {column!r}, which ", Param("cluster"),
                               f" resamples by ({len(missing)} item(s) without one)"), path=path)
    return Clusters.from_values(values, column)


def _edge(cell: CellResult, counts: Counts, unit_of: dict, sums: _Sums, kinds, *, cluster_of_unit, column,
          n_resamples: int, seed: int, path: str) -> EdgeCost:
    rows = cell.rows
    assert rows is not None
    units = np.asarray([unit_of[(b, i)] for b, i in zip(rows.benchmarks, rows.items)], dtype=np.int64)
    s, t = counts.models.index(cell.source), counts.models.index(cell.target)
    boot = None
    if n_resamples > 0:
        clusters = _clusters(units, cluster_of_unit, column, counts, path)
        rng = _cell_rng(seed, "costs", cell.source, cell.target, "" if cell.benchmark is None else cell.benchmark)
        boot = resample_items(clusters, rng=rng, n_resamples=n_resamples, confidence_level=CONFIDENCE_LEVEL, seed=seed)
    changes, pairs = {}, {}
    for k in kinds:
        mean = sums.mean(k)
        pairs[k] = (readonly(mean[s, units]), readonly(mean[t, units]))
        changes[k] = _change(mean[s, units], mean[t, units], sums.sum[k][s, units], sums.correct[k][s, units],
                             sums.sum[k][t, units], sums.correct[k][t, units], rows.cls, boot)
    return EdgeCost(cell.source, cell.target, cell.benchmark, int(units.size), dict(cell.excluded),
                    as_float(cell.source_side.accuracy_exact), as_float(cell.target_side.accuracy_exact), changes,
                    accuracy_intervals={side: iv for side, iv in (("source", cell.source_side.interval),
                                                                   ("target", cell.target_side.interval)) if iv is not None},
                    item_pairs=pairs, classes=rows.cls)


def analyse_costs(
    table: TrialsTable,
    edges: Sequence[tuple[str, str]] = (),
    *,
    by: str = "benchmark",
    prices: Prices | None = None,
    cluster: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = None,
    classification: Mapping[str, Any] | None = None,
    diagnostics: Diagnostics | None = None,
) -> CostsResult:
    """Token cost per model and per edge; see the module docstring.

    ``classification``: settings of the item classes passed to
    :func:`~replicate.trials.engine.analyse_items` (``eps``, ``alpha``, ``ci``); the
    engine's defaults otherwise, as ``replicate items`` uses. ``seed`` None: the
    engine's default seed. ``n_resamples`` 0: no intervals.
    """
    diag = diagnostics if diagnostics is not None else Diagnostics()
    if by not in BY_CHOICES:
        raise UsageError(Message(Param("by"), f" must be one of {', '.join(BY_CHOICES)}; got {by!r}"))
    if n_resamples < 0:
        raise UsageError(Message(Param("n_resamples"), f" must be >= 0 (0 = no intervals), got {n_resamples}"))
    cluster = None if cluster == ITEM_CLUSTER else cluster
    usage = read_usage(table)
    counts, row_unit = aggregate(table)
    values, unpriced = _values(table, usage, prices, diag)
    kinds = (*KINDS, "cost") if prices is not None else KINDS
    sums = _Sums(table, values, row_unit, counts)
    cluster_of_unit = None if cluster is None else unit_metadata(table, row_unit, counts.n_units, cluster, param="cluster")
    models: list[ModelCost] = []
    edge_rows: list[EdgeCost] = []
    settings = None
    if usage.reported:
        models = _model_rows(table, counts, row_unit, values, sums, by)
    else:
        diag.warn("no-usage", "no non-error trial reports token usage: no cost figures", path=table.path)
    if usage.reported and edges:
        # the engine's own warnings (zero-width intervals) concern its figures; the cells' exclusions are reported here
        items = analyse_items(table, edges, by=by, n_null=0, seed=seed, diagnostics=Diagnostics(),
                              **dict(classification or {}))
        seed = items.seed
        settings = {"eps": items.eps, "alpha": items.alpha, "ci": items.ci}
        unit_of = {(counts.benchmarks[int(b)], it): u for u, (b, it) in enumerate(zip(counts.unit_benchmark, counts.unit_item))}
        for cell in items.cells:
            e = _edge(cell, counts, unit_of, sums, kinds, cluster_of_unit=cluster_of_unit, column=cluster,
                      n_resamples=n_resamples, seed=seed, path=table.path)
            if any(e.excluded.values()):
                x = e.excluded
                diag.warn("items-excluded", f"{e.source} -> {e.target}" + ("" if e.benchmark is None else f", benchmark "
                          f"{e.benchmark}") + f": left out {x['missing_source']} item(s) missing on the source, "
                          f"{x['missing_target']} missing on the target, {x['no_valid_trials']} with only API errors "
                          "on a side", path=table.path)
            edge_rows.append(e)
    return CostsResult(
        usage_reported=usage.reported, usage_columns=usage.columns, kinds=kinds, models=tuple(models),
        edges=tuple(edge_rows), by=by, classification=settings,
        bootstrap={"replicates": n_resamples, "seed": seed, "cluster": cluster, "confidence_level": CONFIDENCE_LEVEL,
                   "method": CLUSTER_METHOD if cluster else ITEM_METHOD},
        prices=prices, unpriced=unpriced,
        input={"file": table.provenance.to_json() if table.provenance else {"path": table.path},
               "rows": table.n_rows, "models": list(table.models), "benchmarks": list(table.benchmarks)},
        diagnostics=diag.to_json(), provenance=table.provenance,
    )
