"""Bootstrap intervals of shares of items, several at once (pure, seeded, vectorised).

A share is ``hits / counted`` over one set of items: a run's EM (correct over
the items counted under the unparsed policy), the share of outputs a parser
leaves unparsed, the share of items on which two parsers' labels differ.
Each row of ``hits`` and ``counted`` (runs or parsers x items) is one share.

It is resampled the way :func:`replicate.stats.bootstrap.bootstrap_pairs`
resamples edges, with the same machinery: per cluster the counts of the two
categories "counted and a hit" and "counted, not a hit"; whole clusters drawn
with replacement (:func:`~replicate.stats.bootstrap.cluster_replicates`, the
same draws for every row), or, with no cluster key, one multinomial draw of
N items per row (:func:`~replicate.stats.bootstrap.item_replicates`, exact in
distribution). Percentile intervals, made the printed ones as an edge's
proportions are (stretched for few clusters, never narrower than the Wilson
interval, none over too few clusters: :mod:`replicate.stats.few_clusters`); a
replicate with nothing counted is left out of that row's percentiles and
counted as undefined.
"""

from __future__ import annotations

import numpy as np

from replicate.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    ITEM_METHOD,
    Clusters,
    Interval,
    check_resampling,
    cluster_replicates,
    interval_list,
    item_replicates,
    percentile_bounds,
)
from replicate.stats.few_clusters import T_METHOD, WILSON, at_least, clip, stretch


def share_counts(hits: np.ndarray, counted: np.ndarray, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """Per cluster and row, (counted hits, counted misses): int64 ``(n_clusters, rows, 2)``."""
    hits = np.asarray(hits, dtype=bool)
    counted = np.asarray(counted, dtype=bool)
    codes = np.asarray(codes)
    out = np.empty((n_clusters, counted.shape[0], 2), dtype=np.int64)
    for r in range(counted.shape[0]):  # a row at a time: memory by items, not rows x items x 8 bytes
        out[:, r, 0] = np.bincount(codes[hits[r] & counted[r]], minlength=n_clusters)
        out[:, r, 1] = np.bincount(codes[counted[r] & ~hits[r]], minlength=n_clusters)
    return out


#: Items counted a block at a time by :func:`value_counts` (bounds its scratch arrays: a few MB).
_ITEM_BLOCK = 1 << 18


def value_counts(
    values: np.ndarray, codes: np.ndarray | None, n_clusters: int, n_values: int, *, low: int = 0
) -> np.ndarray:
    """Per cluster, how many items hold each value ``low..low+n_values-1`` (value v in column v - low): int64
    ``(n_clusters, n_values)``.

    ``codes`` None: every item in one cluster (``n_clusters`` 1). Counted a block of items at a time, so
    nothing of the items' length is made (what a share's interval needs of a run of millions of items)."""
    out = np.zeros(n_clusters * n_values, dtype=np.int64)
    for lo in range(0, len(values), _ITEM_BLOCK):
        index = values[lo : lo + _ITEM_BLOCK].astype(np.int64)  # a copy: the caller's values stay
        if low:
            index -= low
        if codes is not None:
            index += np.multiply(codes[lo : lo + _ITEM_BLOCK], n_values, dtype=np.int64)
        out += np.bincount(index, minlength=n_clusters * n_values)
    return out.reshape(n_clusters, n_values)


def bootstrap_shares(
    hits: np.ndarray,
    counted: np.ndarray,
    *,
    clusters: Clusters | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> list[Interval]:
    """An interval of ``hits[r] & counted[r]`` over ``counted[r]`` for each row r (bool arrays, rows x items)."""
    check_resampling(n_resamples, confidence_level)
    hits = np.atleast_2d(np.asarray(hits, dtype=bool))
    counted = np.atleast_2d(np.asarray(counted, dtype=bool))
    if hits.shape != counted.shape:
        raise ValueError(f"hits and counted must have one shape; got {hits.shape} and {counted.shape}")
    n_items = counted.shape[1]
    clusters = Clusters.items(n_items) if clusters is None else clusters
    if len(clusters.codes) != n_items:
        raise ValueError(f"clusters cover {len(clusters.codes)} items; the shares have {n_items}")
    if clusters.is_items:
        counts = share_counts(hits, counted, np.zeros(n_items, np.int64), 1)
    else:
        counts = share_counts(hits, counted, clusters.codes, clusters.count)
    return bootstrap_share_counts(counts, clusters=clusters, n_resamples=n_resamples,
                                  confidence_level=confidence_level, seed=seed)


def bootstrap_share_counts(
    counts: np.ndarray,
    *,
    clusters: Clusters,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> list[Interval]:
    """:func:`bootstrap_shares` from the shares' sufficient statistics: per cluster of ``clusters`` and row, (counted
    hits, counted misses), ``(clusters.count, rows, 2)`` (:func:`share_counts`); for the item bootstrap, the
    totals over every item ``(1, rows, 2)``. The same intervals, the same draws, without rows x items."""
    check_resampling(n_resamples, confidence_level)
    n_items = len(clusters.codes)
    rng = np.random.default_rng(seed)
    if clusters.is_items:
        totals = counts[0]
        reps = item_replicates(rng, totals, n_items, n_resamples)
    else:
        totals = counts.sum(axis=0)
        reps = cluster_replicates(rng, counts, n_resamples)
    hit, den = reps[..., 0].astype(np.float64), reps.sum(axis=-1).astype(np.float64)
    values = np.full(hit.shape, np.nan)
    np.divide(hit, den, out=values, where=den > 0)
    lo, hi, undefined = percentile_bounds(values, confidence_level)
    # as an edge's proportions (bootstrap.finish_bounds): stretched for few clusters, at least Wilson's, none if undefined
    n = totals.sum(axis=1)
    point = np.full(len(n), np.nan)
    np.divide(totals[:, 0], n, out=point, where=n > 0)
    if not clusters.is_items:
        lo, hi = stretch(point, lo, hi, clusters.count, confidence_level)
    lo, hi = np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)
    lo, hi = clip(*at_least(lo, hi, totals[:, 0], n, confidence_level), 0.0, 1.0)
    return interval_list(
        lo, hi, undefined, method=ITEM_METHOD if clusters.is_items else T_METHOD, replicates=n_resamples,
        cluster=clusters.name, clusters=clusters.count, confidence_level=confidence_level, seed=seed, at_least=WILSON,
    )
