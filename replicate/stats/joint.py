"""One bootstrap shared by several item sets: the same draws for figures over different items (pure).

A floor's baseline sets an edge against the repeats of its target model; the
edge and the repeats may cover different items. To give a figure that
combines them (the edge's regression rate over the repeats' mean, the smallest
change rate of a run against several repeats) an interval, every part must be
resampled with the *same* draws. :func:`shared_replicates` does that:

- cluster bootstrap: the clusters of the *union* of the item sets (e.g. every
  query id any side has) are drawn with replacement,
  ``cluster_weights(default_rng(seed), G, n_resamples)``; each side counts its
  own items of the drawn clusters (a cluster a side lacks adds nothing to
  it). When every side has the same clusters, these are the draws
  :func:`replicate.stats.bootstrap.bootstrap_pairs` makes with the same seed.
- item bootstrap: the items of the union are drawn one by one, N of them.
  Items with the same category in every edge of every side are
  interchangeable, so the replicate counts are an exact multinomial draw over
  those patterns (``default_rng(seed).multinomial``), one per replicate:
  exact in distribution, without an ``(n_resamples, N)`` weight matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from replicate.stats.bootstrap import CLUSTER_METHOD, ITEM_METHOD, cluster_replicates


def shared_replicates(
    per_cluster: Sequence[np.ndarray], *, items: bool, n_resamples: int, seed: int
) -> tuple[list[np.ndarray], str]:
    """Replicate category counts of every side from one set of draws, and the method's name.

    ``per_cluster[s]`` is side s's category counts per cluster of the union
    and edge, ``(G, P_s, 5)`` (:func:`replicate.stats.bootstrap.cluster_category_counts`
    with the union's codes); ``items`` True when each cluster is one item
    (the item bootstrap). Returns ``(n_resamples, P_s, 5)`` per side.
    """
    sizes = [int(t.shape[1]) for t in per_cluster]
    if not per_cluster:
        return [], ITEM_METHOD if items else CLUSTER_METHOD
    joined = np.concatenate([np.asarray(t, dtype=np.int64) for t in per_cluster], axis=1)
    G, P, K = joined.shape
    rng = np.random.default_rng(seed)
    if not items:
        reps = cluster_replicates(rng, joined, n_resamples)
        method = CLUSTER_METHOD
    else:
        reps = item_pattern_replicates(rng, joined, n_resamples)
        method = ITEM_METHOD
    cuts = np.cumsum(sizes)[:-1]
    return [np.ascontiguousarray(r) for r in np.split(reps, cuts, axis=1)], method


def item_pattern_replicates(rng: np.random.Generator, per_item: np.ndarray, n_resamples: int) -> np.ndarray:
    """Item bootstrap of ``(N, P, 5)`` per-item counts: a multinomial draw of N items over the distinct patterns.

    A plain loop drawing ``N`` item indices per replicate and summing their
    rows has the same distribution (not the same numbers).
    """
    N, P, K = per_item.shape
    if N == 0 or P == 0:
        return np.zeros((n_resamples, P, K), dtype=np.int64)
    patterns, counts = np.unique(per_item.reshape(N, P * K), axis=0, return_counts=True)
    draws = rng.multinomial(N, counts / N, size=n_resamples)  # (B, U)
    return (draws @ patterns).reshape(n_resamples, P, K)
