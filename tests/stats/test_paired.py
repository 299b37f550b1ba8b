"""Paired tests: exact McNemar in log space, Durkalski's clustered McNemar (against scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, chi2

from replicate.stats.paired import mcnemar_clustered, mcnemar_exact_log10_p, p_text


@pytest.mark.parametrize("b,c", [(0, 0), (3, 0), (5, 9), (40, 41), (120, 60), (7, 7)])
def test_exact_log_p_matches_scipy_binomtest(b, c):
    p = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert 10 ** mcnemar_exact_log10_p(b, c) == pytest.approx(min(1.0, p), rel=1e-9)


def test_a_p_value_below_the_float_range_is_a_finite_logarithm():
    # 5776 regressions against 1455 gains: the p-value underflows a double to 0.0.
    assert binomtest(1455, 7231, 0.5).pvalue == 0.0
    log10_p = mcnemar_exact_log10_p(5776, 1455)
    assert math.isfinite(log10_p) and log10_p < -300
    # the largest term bounds the sum from below, the (min+1) largest terms from above
    m, k = 7231, 1455
    top = (math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1) - m * math.log(2)) / math.log(10)
    assert top + math.log10(2) <= log10_p <= top + math.log10(2) + math.log10(k + 1)
    assert p_text(log10_p).startswith("10^-")


def test_clustered_mcnemar_with_one_item_per_cluster_is_the_classic_statistic():
    rng = np.random.default_rng(1)
    kind = rng.choice(3, 200, p=[0.2, 0.1, 0.7])  # 0: only_old, 1: only_new, 2: concordant
    b, c = (kind == 0).astype(int), (kind == 1).astype(int)
    stat, p = mcnemar_clustered(b, c)
    B, C = b.sum(), c.sum()
    assert stat == pytest.approx((B - C) ** 2 / (B + C))
    assert p == pytest.approx(chi2.sf((B - C) ** 2 / (B + C), 1))


def test_clustered_mcnemar_is_vectorised_over_edges_and_wider_than_exact_on_clustered_data():
    # Discordance concentrated in a few queries: the exact test calls it certain, the clustered one does not.
    b = np.array([[30, 0], [0, 2], [1, 2], [0, 1], [0, 2]])
    c = np.array([[0, 2], [2, 0], [1, 0], [1, 2], [0, 0]])
    stat, p = mcnemar_clustered(b, c)
    assert stat.shape == (2,)
    assert p[0] > 10 ** mcnemar_exact_log10_p(31, 4)
    d = (b - c)[:, 0].astype(float)
    assert stat[0] == pytest.approx(d.sum() ** 2 / (d * d).sum())
    assert mcnemar_clustered(np.zeros((3, 1)), np.zeros((3, 1)))[1][0] == 1.0


def test_chi2_tail_without_scipy_stats_matches_scipy():
    from replicate.stats.paired import chi2_sf_1

    x = np.array([[0.0, 0.5], [3.84, 40.0]])
    assert chi2_sf_1(x) == pytest.approx(chi2.sf(x, 1), rel=1e-12)
