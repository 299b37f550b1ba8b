"""Bootstrap intervals of agreement figures, many pairs and figures at once (pure, seeded, vectorised).

Every agreement figure is a function of a pair's two-way table of labels
(:mod:`replicate.stats.agreement`), so a replicate needs only the tables:
per cluster and pair the table's cells are counts, resampled with the machinery
every other figure uses (:mod:`replicate.stats.bootstrap`): whole clusters drawn
with replacement (:func:`~replicate.stats.bootstrap.cluster_replicates`, the same
draws for every pair and, for one seed and cluster key, the draws of every
other figure's interval), or, with no cluster key, a multinomial over the
table's cells per pair (:func:`~replicate.stats.bootstrap.item_replicates`,
exact in distribution). Percentile intervals
(:func:`~replicate.stats.bootstrap.percentile_bounds`); a replicate in which a
figure is undefined is left out of its percentiles and counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from replicate.stats.agreement import Figure, read_figure, reading
from replicate.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Clusters,
    Interval,
    check_resampling,
    cluster_replicates,
    interval_list,
    item_replicates,
    percentile_bounds,
)
from replicate.stats.few_clusters import T_METHOD, clip, stretch
from replicate.stats.policy import Policy, check_policy


def cluster_tables(codes_a: np.ndarray, codes_b: np.ndarray, size: int, clusters: Clusters) -> np.ndarray:
    """Per cluster and pair, the two-way table of codes: int64 ``(clusters, pairs, size, size)``.

    ``codes_a[p, i]`` and ``codes_b[p, i]`` are the two sides' codes (``0..size-1``) of item i in pair p.
    """
    a = np.atleast_2d(np.asarray(codes_a, dtype=np.int64))
    b = np.atleast_2d(np.asarray(codes_b, dtype=np.int64))
    P, N = a.shape
    if b.shape != a.shape or len(clusters.codes) != N:
        raise ValueError(f"codes {a.shape} and {b.shape} and clusters of {len(clusters.codes)} items must agree")
    g = np.asarray(clusters.codes, dtype=np.int64)[None, :]
    flat = ((g * P + np.arange(P)[:, None]) * size + a) * size + b
    counts = np.bincount(flat.ravel(), minlength=clusters.count * P * size * size)
    return counts.reshape(clusters.count, P, size, size)


def table_replicates(
    per_cluster: np.ndarray, clusters: Clusters, *, n_resamples: int, seed: int
) -> np.ndarray:
    """Replicate tables ``(n_resamples, pairs, size, size)`` from per-cluster tables ``(G, pairs, size, size)``."""
    G, P, S, _ = per_cluster.shape
    rng = np.random.default_rng(seed)
    if clusters.is_items:
        totals = per_cluster.sum(axis=0).reshape(P, S * S)
        reps = item_replicates(rng, totals, len(clusters.codes), n_resamples)
    else:
        reps = cluster_replicates(rng, per_cluster.reshape(G, P, S * S), n_resamples)
    return reps.reshape(n_resamples, P, S, S)


def agreement_intervals(
    per_cluster: np.ndarray,
    figures: Sequence[Figure],
    values: Sequence[float] | np.ndarray,
    *,
    clusters: Clusters,
    policy: Policy = "intersect",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> list[list[Interval]]:
    """Per pair, an :class:`Interval` of each of ``figures`` (in order), from per-cluster tables
    ``(G, pairs, V + 1, V + 1)`` over the value domain ``values`` plus the missing slot."""
    check_policy(policy)
    check_resampling(n_resamples, confidence_level)
    per_cluster = np.asarray(per_cluster)
    if per_cluster.shape[0] != clusters.count:
        raise ValueError(f"tables of {per_cluster.shape[0]} clusters for {clusters.count} clusters")
    reps = table_replicates(per_cluster, clusters, n_resamples=n_resamples, seed=seed)
    out: list[list[Interval]] = [[] for _ in range(per_cluster.shape[1])]
    thresholds = dict.fromkeys(f.binarize for f in figures)
    readings = {t: reading(reps, values, t) for t in thresholds}  # each folded once
    whole = {t: reading(per_cluster.sum(axis=0)[None], values, t) for t in thresholds}  # the sample itself
    method = clusters.method if clusters.is_items else T_METHOD
    for figure in figures:
        tables, domain = readings[figure.binarize]
        lo, hi, undefined = percentile_bounds(read_figure(tables, figure, domain, policy=policy), confidence_level)
        point = read_figure(whole[figure.binarize][0], figure, whole[figure.binarize][1], policy=policy)[0]
        lo, hi = np.where(np.isnan(point), np.nan, lo), np.where(np.isnan(point), np.nan, hi)
        if not clusters.is_items:  # the same small-cluster stretch as every other figure's interval
            lo, hi = clip(*stretch(point, lo, hi, clusters.count, confidence_level), -1.0, 1.0)
        ivs = interval_list(
            lo, hi, undefined, method=method, replicates=n_resamples, cluster=clusters.name,
            clusters=clusters.count, confidence_level=confidence_level, seed=seed,
        )
        for p, iv in enumerate(ivs):
            out[p].append(iv)
    return out
