"""Bootstrap intervals of paired differences: one figure under two readings of the same items (pure, seeded).

Two parsers read the same outputs; the question is how far a figure (an EM,
an unparsed share, an edge's regression rate) moves from one reading to the
other. The two readings share their items, so their figures are not
independent: an interval of the difference must resample the items once and
apply the same draw to both readings (a **joint bootstrap**), not combine two
intervals drawn on their own.

Each reading ``r`` puts each item in one of ``K`` categories (``categories[r, i]``;
e.g. "counted and a hit", "counted, not a hit", "not counted" for a share, or
the edge categories of :mod:`replicate.stats.bootstrap` plus "left out"); a
figure is a function of a reading's category counts. A replicate needs only
those counts, for every reading from one draw:

- cluster bootstrap: per cluster and reading the category counts ``T``
  (``(G, R, K)``); the cluster weights ``W`` of
  :func:`~replicate.stats.bootstrap.cluster_weights` (the draws of
  :func:`~replicate.stats.bootstrap.cluster_replicates`, so the same seed
  draws the same clusters as each reading's own intervals) give ``W @ T``:
  every reading counted over the same drawn clusters;
- item bootstrap: an item's **joint pattern** is its tuple of categories
  across the readings; drawing N items with replacement draws a multinomial
  number of items of each pattern (exact in distribution), and each
  reading's counts follow from the patterns drawn.

Both are the draws of :func:`replicate.stats.joint.shared_replicates`, which
the floor's baseline uses to resample several item sets at once.

The interval of reading ``r`` minus reading 0 is the percentile interval of
the per-replicate differences; a replicate in which either figure is
undefined is left out and counted (``undefined``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.stats.bootstrap import (
    CATEGORIES,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Clusters,
    Interval,
    check_resampling,
    figures_from_counts,
    interval_figures,
    interval_list,
    item_categories,
    percentile_bounds,
)
from replicate.stats.joint import shared_replicates
from replicate.stats.policy import Policy, check_policy

#: Categories of an item for a share: counted and a hit, counted and not a hit, not counted.
SHARE_CATEGORIES: tuple[str, ...] = ("hit", "miss", "not_counted")


def category_counts(categories: np.ndarray, n_categories: int, codes: np.ndarray, n_clusters: int) -> np.ndarray:
    """Per cluster and reading, how many items fall in each category: int64 ``(n_clusters, R, K)``."""
    categories = np.atleast_2d(np.asarray(categories, dtype=np.int64))
    R, N = categories.shape
    K = n_categories
    flat = (np.asarray(codes, dtype=np.int64)[None, :] * (R * K) + np.arange(R)[:, None] * K + categories).ravel()
    return np.bincount(flat, minlength=n_clusters * R * K).reshape(n_clusters, R, K)


@dataclass(frozen=True)
class JointBootstrap:
    """Replicates of every reading's category counts from shared draws, and how they were made."""

    replicates: np.ndarray  # (B, R, K)
    method: str
    cluster: str | None
    clusters: int
    confidence_level: float
    seed: int

    def differences(self, values: np.ndarray) -> list[Interval]:
        """Intervals of ``values[:, r] - values[:, 0]`` for r = 1..R-1 (``values``: a figure, ``(B, R)``, NaN undefined)."""
        diff = values[:, 1:] - values[:, :1]
        lo, hi, undefined = percentile_bounds(diff, self.confidence_level)
        return interval_list(
            lo, hi, undefined, method=self.method, replicates=int(self.replicates.shape[0]), cluster=self.cluster,
            clusters=self.clusters, confidence_level=self.confidence_level, seed=self.seed,
        )


def joint_bootstrap(
    categories: np.ndarray,
    n_categories: int,
    *,
    clusters: Clusters | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> JointBootstrap:
    """Resample the items of ``categories`` (readings x items, codes ``0..n_categories-1``) once per replicate."""
    check_resampling(n_resamples, confidence_level)
    categories = np.atleast_2d(np.asarray(categories, dtype=np.int64))
    n_items = categories.shape[1]
    if categories.size and (categories.min() < 0 or categories.max() >= n_categories):
        raise ValueError(f"categories must lie in 0..{n_categories - 1}")
    clusters = Clusters.items(n_items) if clusters is None else clusters
    if len(clusters.codes) != n_items:
        raise ValueError(f"clusters cover {len(clusters.codes)} items; the readings have {n_items}")
    # each item its own cluster for the item bootstrap: shared_replicates draws a multinomial over its patterns
    codes, count = (np.arange(n_items), n_items) if clusters.is_items else (clusters.codes, clusters.count)
    (reps,), method = shared_replicates(
        [category_counts(categories, n_categories, codes, count)], items=clusters.is_items, n_resamples=n_resamples,
        seed=seed,
    )
    reps.setflags(write=False)
    return JointBootstrap(reps, method, clusters.name, clusters.count, confidence_level, seed)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def share_categories(hits: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Each item's :data:`SHARE_CATEGORIES` code per row of ``hits`` / ``counted`` (bool, rows x items)."""
    hits = np.atleast_2d(np.asarray(hits, dtype=bool))
    counted = np.atleast_2d(np.asarray(counted, dtype=bool))
    if hits.shape != counted.shape:
        raise ValueError(f"hits and counted must have one shape; got {hits.shape} and {counted.shape}")
    return np.where(counted, np.where(hits, 0, 1), 2).astype(np.int64)


def share_differences(
    hits: np.ndarray,
    counted: np.ndarray,
    *,
    clusters: Clusters | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> list[Interval]:
    """Intervals of share r minus share 0 (r = 1..R-1), each share ``hits[r] & counted[r]`` over ``counted[r]``.

    The rows are readings of the same items (e.g. one run under several
    parsers): every replicate draws the items once for all rows.
    """
    boot = joint_bootstrap(
        share_categories(hits, counted), len(SHARE_CATEGORIES), clusters=clusters, n_resamples=n_resamples,
        confidence_level=confidence_level, seed=seed,
    )
    reps = boot.replicates.astype(np.float64)
    return boot.differences(_ratio(reps[..., 0], reps[..., 0] + reps[..., 1]))


def edge_differences(
    labels: np.ndarray,
    gold: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    *,
    clusters: Clusters | None = None,
    policy: Policy = "intersect",
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> list[dict[str, Interval]]:
    """For each edge of ``pairs`` after the first, an interval per figure of :func:`~replicate.stats.bootstrap.interval_figures` of
    (edge - first edge).

    ``labels`` (runs x items, -1 unparsed) holds each edge's two runs as read
    under one reading (e.g. old and new under parser k at rows ``2k``,
    ``2k + 1``); all edges are over the same items, and every replicate draws
    those items once for all edges. With the cluster bootstrap each edge's
    replicates are those of :func:`~replicate.stats.bootstrap.bootstrap_pairs`
    with the same seed.
    """
    check_policy(policy)
    categories = item_categories(labels, gold, pairs, policy=policy)
    boot = joint_bootstrap(
        categories, len(CATEGORIES) + 1, clusters=clusters, n_resamples=n_resamples,
        confidence_level=confidence_level, seed=seed,
    )
    names = interval_figures()
    figures = figures_from_counts(boot.replicates[..., : len(CATEGORIES)], names)
    per_figure = {f: boot.differences(figures[f]) for f in names}
    return [{f: per_figure[f][r] for f in names} for r in range(len(pairs) - 1)]

