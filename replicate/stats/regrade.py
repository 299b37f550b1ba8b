"""How many pairs to re-grade by hand after a judge swap, and the precision a stratified sample gives (pure).

A human grades a sample of the pool's pairs; the new judge's EM against those
grades, the swap's regression rate (old right, new wrong) and Cohen's kappa are
estimated from it. The sample is stratified by the new judge's grade
(proportional allocation, :mod:`replicate.stats.stratified`), each pair weighted by
its stratum's pool size over its sample size. Pairs of one query are alike, and
the queries are themselves a sample, so the precision depends on the clustering:

- **analytic** (EM, regression rate): a stratified share's variance with a design
  effect for the clusters, ``Var = S * ((1 - rho) / n + rho / Q)``, with
  ``S = sum_h W_h p_h (1 - p_h)`` (W_h the stratum's pool share, p_h its rate),
  ``rho`` the intra-query correlation of the pair's indicator (one-way ANOVA
  estimator, :func:`icc_anova`) and ``Q`` the queries; the smallest ``n`` whose
  ``z * sqrt(Var)`` is at most the target half-width (none when even every pair
  leaves ``z^2 S rho / Q`` above it: more queries are needed, not more pairs);
- **simulated** (all three, the check): each replicate resamples whole queries of
  the pool with replacement (a new set of queries like these), draws the
  stratified sample of ``n`` from it, and estimates; the half-width is the 95th
  percentile of the estimate's distance from the pool's own value. The sizing is
  the smallest ``n`` (bisection, the same seeded draws for every ``n``) whose
  simulated half-width is at most the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from replicate.stats.agreement import kappa_of_tables
from replicate.stats.intervals import z_value
from replicate.stats.stratified import proportional_allocation

METRICS = ("em", "regression", "kappa")


def icc_anova(y: np.ndarray, groups: np.ndarray) -> float:
    """One-way ANOVA intra-class correlation of ``y`` within ``groups`` (unequal sizes), clipped below at 0."""
    y = np.asarray(y, dtype=np.float64)
    codes, g = np.unique(groups, return_inverse=True)
    k, n = codes.size, y.size
    if k < 2 or n <= k:
        return 0.0
    m = np.bincount(g).astype(np.float64)
    means = np.bincount(g, weights=y) / m
    grand = y.mean()
    msb = float((m * (means - grand) ** 2).sum() / (k - 1))
    msw = float(((y - means[g]) ** 2).sum() / (n - k))
    m0 = (n - float((m * m).sum()) / n) / (k - 1)
    den = msb + (m0 - 1) * msw
    return 0.0 if den <= 0 else max(0.0, (msb - msw) / den)


@dataclass(frozen=True)
class Pool:
    """The pilot pool: per pair its stratum (the new judge's grade), query, and what the metrics read."""

    strata: np.ndarray  # int codes
    clusters: np.ndarray  # int codes
    new: np.ndarray  # the new judge's label
    gold: np.ndarray  # the human label
    old_right: np.ndarray  # bool

    @property
    def n(self) -> int:
        return int(self.strata.size)

    @property
    def n_clusters(self) -> int:
        return int(np.unique(self.clusters).size)

    def indicator(self, metric: str) -> np.ndarray:
        right = self.new == self.gold
        return right if metric == "em" else self.old_right & ~right

    def value(self, metric: str, idx: np.ndarray | None = None, weights: np.ndarray | None = None) -> float:
        """The metric over the pairs ``idx`` (all when None) weighted by ``weights``."""
        i = np.arange(self.n) if idx is None else idx
        w = np.ones(i.size) if weights is None else weights
        if metric == "kappa":
            size = int(max(self.new.max(), self.gold.max())) + 1
            table = np.zeros((size, size))
            np.add.at(table, (self.new[i], self.gold[i]), w)
            return float(kappa_of_tables(table))
        return float((self.indicator(metric)[i] * w).sum() / w.sum())


def stratified_sample(strata: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a proportional stratified sample of ``n`` and each one's weight (stratum size / its draw)."""
    codes, g = np.unique(strata, return_inverse=True)
    sizes = np.bincount(g)
    alloc = proportional_allocation(sizes.tolist(), n)
    idx, w = [], []
    for k in range(codes.size):
        if alloc[k] == 0:
            continue
        members = np.flatnonzero(g == k)
        idx.append(rng.choice(members, size=alloc[k], replace=False))
        w.append(np.full(alloc[k], sizes[k] / alloc[k]))
    return np.concatenate(idx), np.concatenate(w)


def analytic_n(pool: Pool, metric: str, half_width: float, *, confidence_level: float = 0.95) -> int | None:
    """The smallest n whose clustered stratified half-width is at most ``half_width`` (None: unreachable)."""
    z = z_value(confidence_level)
    y = pool.indicator(metric).astype(np.float64)
    codes, g = np.unique(pool.strata, return_inverse=True)
    W = np.bincount(g) / pool.n
    p = np.bincount(g, weights=y) / np.bincount(g)
    s = float((W * p * (1 - p)).sum())
    rho = icc_anova(y, pool.clusters)
    den = half_width ** 2 - z * z * s * rho / pool.n_clusters
    if s == 0:
        return 1
    if den <= 0:
        return None
    n = math.ceil(z * z * s * (1 - rho) / den - 1e-9)
    return n if n <= pool.n else None


def simulated_half_width(pool: Pool, metric: str, n: int, *, replicates: int, seed: int,
                         confidence_level: float = 0.95) -> float:
    """The ``confidence_level`` quantile of |estimate - pool value| over seeded query-resampled draws of ``n``."""
    truth = pool.value(metric)
    errors = _errors(pool, metric, n, replicates=replicates, seed=seed)
    return float(np.quantile(np.abs(errors - truth), confidence_level))


def _errors(pool: Pool, metric: str, n: int, *, replicates: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cl_codes, cl = np.unique(pool.clusters, return_inverse=True)
    order = np.argsort(cl, kind="stable")
    starts = np.concatenate(([0], np.cumsum(np.bincount(cl))))
    out = np.empty(replicates)
    for r in range(replicates):
        chosen = rng.integers(0, cl_codes.size, size=cl_codes.size)
        members = np.concatenate([order[starts[c]:starts[c + 1]] for c in chosen])
        take = min(n, members.size)
        idx, w = stratified_sample(pool.strata[members], take, rng)
        out[r] = pool.value(metric, members[idx], w)
    return out


def simulated_n(pool: Pool, metric: str, half_width: float, *, replicates: int, seed: int,
                confidence_level: float = 0.95) -> int | None:
    """The smallest n (bisection over 2..pool size) whose simulated half-width is at most ``half_width``."""
    def ok(n: int) -> bool:
        return simulated_half_width(pool, metric, n, replicates=replicates, seed=seed,
                                    confidence_level=confidence_level) <= half_width

    return _bisect(ok, 2, pool.n)


def _bisect(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi
