"""Bootstrap replicates of per-item figures that are not functions of category counts (pure, seeded).

A median of per-item values (a token change, a ratio), a share of items, a
ratio of sums over items: each replicate draws whole clusters with replacement
(:func:`~replicate.stats.bootstrap.cluster_weights`, the draws every other
bootstrap here makes; with each item its own cluster, the item bootstrap) and
counts item ``i`` as often as its cluster was drawn, ``weights[b, i]`` times.

- :func:`weighted_medians`: the median of each replicate's multiset, exactly
  what ``numpy.median`` gives on the values repeated by their weights (the
  mean of the two middle values when the replicate holds an even number);
- :func:`weighted_means`: ``sum(w * v) / sum(w)`` per replicate (a share when
  ``v`` is 0/1), and the ratio of two weighted sums.

NaN values (a figure undefined for that item) are left out of every
replicate; a replicate with no weight on a defined value gives NaN, which
:func:`~replicate.stats.bootstrap.percentile_bounds` counts as undefined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicate.stats.bootstrap import (
    Clusters,
    Interval,
    check_resampling,
    cluster_weights,
    interval_list,
    percentile_bounds,
)

_ROW_BLOCK = 128  # replicates whose cumulative weights are held at once


def weighted_medians(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row ``b`` of ``weights`` (replicates x items), the median of ``values`` with item i counted ``weights[b, i]`` times.

    NaN where a row puts no weight on a non-NaN value.
    """
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights)
    keep = ~np.isnan(values)
    order = np.flatnonzero(keep)[np.argsort(values[keep], kind="stable")]
    v = values[order]
    out = np.full(weights.shape[0], np.nan)
    if v.size == 0:
        return out
    for start in range(0, weights.shape[0], _ROW_BLOCK):
        c = np.cumsum(weights[start : start + _ROW_BLOCK, order], axis=1, dtype=np.int64)
        n = c[:, -1]
        rows = np.arange(c.shape[0])
        # one sorted array for the block: row r's cumulative counts shifted past every earlier row's
        step = int(n.max()) + 1
        flat = (c + (rows * step)[:, None]).ravel()
        mids = []
        for rank in ((n - 1) // 2, n // 2):
            at = np.searchsorted(flat, rank + rows * step, side="right") - rows * v.size
            mids.append(v[np.minimum(at, v.size - 1)])
        block = (mids[0] + mids[1]) / 2
        block[n == 0] = np.nan
        out[start : start + c.shape[0]] = block
    return out


def weighted_sums(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``weights @ values`` with NaN values counted as 0 (float, one per replicate)."""
    v = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0)
    return np.asarray(weights, dtype=np.float64) @ v


def ratio_of_sums(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` per replicate, NaN where ``den`` is 0."""
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


@dataclass(frozen=True)
class ItemResampling:
    """Bootstrap weights of a set of items: ``weights[b, i]`` = how often item i is in replicate b."""

    weights: np.ndarray  # (n_resamples, n_items), int64
    clusters: Clusters
    confidence_level: float
    seed: int

    @property
    def n_resamples(self) -> int:
        return int(self.weights.shape[0])

    def intervals(self, replicate_values: np.ndarray) -> list[Interval]:
        """A percentile :class:`Interval` per column of ``replicate_values`` (replicates x figures, NaN undefined)."""
        lo, hi, undefined = percentile_bounds(np.atleast_2d(replicate_values.T).T, self.confidence_level)
        return interval_list(
            lo, hi, undefined, method=self.clusters.method, replicates=self.n_resamples, cluster=self.clusters.name,
            clusters=self.clusters.count, confidence_level=self.confidence_level, seed=self.seed,
        )

    def interval(self, replicate_values: np.ndarray) -> Interval:
        return self.intervals(np.asarray(replicate_values).reshape(-1, 1))[0]


def resample_items(
    clusters: Clusters, *, rng: np.random.Generator, n_resamples: int, confidence_level: float = 0.95, seed: int
) -> ItemResampling:
    """Draw ``n_resamples`` bootstrap replicates of the items of ``clusters`` (``seed`` is recorded, ``rng`` drawn from)."""
    check_resampling(n_resamples, confidence_level)
    w = cluster_weights(rng, clusters.count, n_resamples)[:, clusters.codes] if clusters.count else np.zeros(
        (n_resamples, 0), dtype=np.int64)
    w.setflags(write=False)
    return ItemResampling(w, clusters, confidence_level, seed)
