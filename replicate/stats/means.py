"""Bootstrap intervals of means over items, several at once (pure, seeded, vectorised).

A mean is ``sum(values[r, i]) / count`` over the items ``i`` counted in row
``r`` (``counted``): a model's MT-Bench score (its ratings averaged), a win
rate with ties as half (per item 1, 0.5 or 0). Whole clusters are drawn with
replacement (:func:`~replicate.stats.bootstrap.cluster_weights`, the same
draws for every row), or items one by one when no cluster key is given; per
cluster only the sum and the count of each row are kept, so the cost grows
with clusters and rows, not with items times replicates. Percentile intervals
made the printed ones as a share's are (:mod:`replicate.stats.shares`):
stretched for few clusters, none over too few, and kept inside the values'
own range (a mean of ratings 0-10 never leaves [0, 10]). A replicate that
draws no counted item of a row is left out of that row's percentiles and
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
    cluster_weights,
    interval_list,
    percentile_bounds,
)
from replicate.stats.few_clusters import T_METHOD, stretch


def cluster_sums(values: np.ndarray, counted: np.ndarray, codes: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster and row, the sum of the counted values and their count: two float64 ``(n_clusters, rows)``."""
    rows = values.shape[0]
    flat = (np.asarray(codes, dtype=np.int64)[None, :] + n_clusters * np.arange(rows)[:, None]).ravel()
    shape = (rows, n_clusters)
    sums = np.bincount(flat, weights=np.where(counted, values, 0.0).ravel(), minlength=rows * n_clusters)
    counts = np.bincount(flat, weights=counted.ravel().astype(np.float64), minlength=rows * n_clusters)
    return sums.reshape(shape).T, counts.reshape(shape).T


def bootstrap_means(
    values: np.ndarray,
    counted: np.ndarray,
    *,
    clusters: Clusters | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> list[Interval]:
    """An interval of the mean of ``values[r]`` over the items ``counted[r]`` for each row r (rows x items).

    ``values`` is float (anything where not counted); ``counted`` bool of the same shape.
    """
    check_resampling(n_resamples, confidence_level)
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    counted = np.atleast_2d(np.asarray(counted, dtype=bool))
    if values.shape != counted.shape:
        raise ValueError(f"values and counted must have one shape; got {values.shape} and {counted.shape}")
    if np.isnan(values[counted]).any():
        raise ValueError("values must be numbers wherever counted (NaN found)")
    n_items = counted.shape[1]
    clusters = Clusters.items(n_items) if clusters is None else clusters
    if len(clusters.codes) != n_items:
        raise ValueError(f"clusters cover {len(clusters.codes)} items; the means have {n_items}")
    rng = np.random.default_rng(seed)
    sums, counts = cluster_sums(values, counted, clusters.codes, clusters.count)
    weights = cluster_weights(rng, clusters.count, n_resamples).astype(np.float64)
    rep_sums, rep_counts = weights @ sums, weights @ counts
    reps = np.full(rep_sums.shape, np.nan)
    np.divide(rep_sums, rep_counts, out=reps, where=rep_counts > 0)
    lo, hi, undefined = percentile_bounds(reps, confidence_level)
    total, n = sums.sum(axis=0), counts.sum(axis=0)
    point = np.full(len(n), np.nan)
    np.divide(total, n, out=point, where=n > 0)
    if not clusters.is_items:
        lo, hi = stretch(point, lo, hi, clusters.count, confidence_level)
    low_value = np.where(counted, values, np.inf).min(axis=1, initial=np.inf)  # initial: no items at all
    high_value = np.where(counted, values, -np.inf).max(axis=1, initial=-np.inf)
    with np.errstate(invalid="ignore"):
        lo = np.where(n > 0, np.maximum(lo, low_value), np.nan)
        hi = np.where(n > 0, np.minimum(hi, high_value), np.nan)
    return interval_list(
        lo, hi, undefined, method=ITEM_METHOD if clusters.is_items else T_METHOD, replicates=n_resamples,
        cluster=clusters.name, clusters=clusters.count, confidence_level=confidence_level, seed=seed,
    )
