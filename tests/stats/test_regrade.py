"""Sizing a human re-validation sample: the ICC against scipy's one-way ANOVA, the analytic n by hand,
and the analytic n checked by the seeded query-resampling simulation on a clustered pool with known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.stats.regrade import Pool, analytic_n, icc_anova, simulated_half_width, simulated_n, stratified_sample


def clustered_pool(q=120, m=20, rho_sd=0.15, seed=1) -> Pool:
    """q queries of m pairs; a query shifts the chance that the new judge agrees with the human."""
    rng = np.random.default_rng(seed)
    clusters = np.repeat(np.arange(q), m)
    gold = rng.integers(0, 4, size=q * m)
    shift = rng.normal(0, rho_sd, size=q)[clusters]
    right = rng.random(q * m) < np.clip(0.6 + shift, 0, 1)
    new = np.where(right, gold, (gold + rng.integers(1, 4, size=q * m)) % 4)
    old_right = rng.random(q * m) < 0.55
    return Pool(strata=new.copy(), clusters=clusters, new=new, gold=gold, old_right=old_right)


def test_icc_is_scipys_anova_f_turned_into_icc():
    rng = np.random.default_rng(3)
    sizes = [5, 8, 3, 12, 7, 9]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = (rng.random(groups.size) < 0.3 + 0.1 * groups / len(sizes)).astype(float)
    y[:5] = 1.0  # a cluster all alike
    f = stats.f_oneway(*[y[groups == g] for g in range(len(sizes))]).statistic
    n, k = y.size, len(sizes)
    m0 = (n - sum(s * s for s in sizes) / n) / (k - 1)
    assert icc_anova(y, groups) == pytest.approx(max(0.0, (f - 1) / (f + m0 - 1)))


def test_analytic_n_by_hand_without_clustering():
    # every pair its own query (rho = 0, Q = n): n = z^2 S / h^2 with S = sum W_h p_h (1 - p_h)
    strata = np.array([0] * 60 + [1] * 40)
    gold = np.zeros(100, dtype=int)
    new = np.where(np.arange(100) % 5 == 0, 1, 0)  # right on 4 of 5 pairs in each stratum ...
    new[60:] = np.where(np.arange(40) % 2 == 0, 1, 0)  # ... and on 1 of 2 in the second
    pool = Pool(strata=strata, clusters=np.arange(100), new=new, gold=gold, old_right=np.ones(100, bool))
    s = 0.6 * 0.8 * 0.2 + 0.4 * 0.5 * 0.5
    z = stats.norm.ppf(0.975)
    assert analytic_n(pool, "em", 0.2) == math.ceil(z * z * s / (0.04 - z * z * s * 0 / 100))
    assert analytic_n(pool, "em", 0.01) is None  # more than the pool holds


def test_stratified_sample_is_proportional_and_weighted_to_the_pool():
    strata = np.array([0] * 50 + [1] * 30 + [2] * 20)
    idx, w = stratified_sample(strata, 10, np.random.default_rng(0))
    assert np.bincount(strata[idx]).tolist() == [5, 3, 2] and len(set(idx.tolist())) == 10
    assert w.sum() == pytest.approx(100)


def test_the_analytic_n_is_checked_by_the_simulation():
    pool = clustered_pool()
    rho = icc_anova(pool.indicator("em").astype(float), pool.clusters)
    assert 0.02 < rho < 0.2  # the pool is clustered
    n = analytic_n(pool, "em", 0.06)
    assert n is not None
    hw = simulated_half_width(pool, "em", n, replicates=1000, seed=5)
    assert hw == pytest.approx(0.06, rel=0.1)
    # ignoring the clustering would ask for fewer pairs and miss the target
    z = stats.norm.ppf(0.975)
    codes, g = np.unique(pool.strata, return_inverse=True)
    y = pool.indicator("em").astype(float)
    p = np.bincount(g, weights=y) / np.bincount(g)
    s = float(((np.bincount(g) / pool.n) * p * (1 - p)).sum())
    naive = math.ceil(z * z * s / 0.06 ** 2)
    assert naive < n and simulated_half_width(pool, "em", naive, replicates=1000, seed=5) > 0.063
    sim = simulated_n(pool, "em", 0.06, replicates=200, seed=5)
    assert sim is not None and abs(sim - n) / n < 0.3
