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


@pytest.mark.parametrize("stat", [0.5, 3.84, 40.0, 700.0, 1500.0, 3000.0, 1e5])
def test_the_clustered_tests_log_p_matches_scipy_far_below_the_float_range(stat):
    from replicate.stats.paired import chi2_sf_1, chi2_sf_1_log10

    if stat < 1000:  # scipy's logsf is finite here
        want = chi2.logsf(stat, 1) / np.log(10)
    else:  # P(chi2_1 > s) = erfc(x), x = sqrt(s / 2); log erfc(x) = -x^2 - log(x sqrt(pi)) + log(1 - 1/(2x^2) + 3/(4x^4) - ...)
        x = math.sqrt(stat / 2)
        want = (-x * x - math.log(x * math.sqrt(math.pi)) + math.log1p(-1 / (2 * x * x) + 3 / (4 * x**4))) / math.log(10)
    assert chi2_sf_1_log10(stat) == pytest.approx(want, rel=1e-9)
    if stat >= 1500:  # the float p underflows; its logarithm does not
        assert float(chi2_sf_1(np.array([stat]))[0]) == 0.0 and chi2_sf_1_log10(stat) < -300
    assert chi2_sf_1_log10(0.0) == 0.0


def test_a_p_value_is_never_printed_as_a_bare_zero():
    from replicate.stats.paired import p_display

    assert p_display(0.0) == "<1e-16" and p_display(1e-17) == "<1e-16"
    assert p_display(2.5e-5) == "2.5e-05" and p_display(0.12214) == "0.1221"


def test_compare_json_gives_the_clustered_tests_log_p_when_p_underflows(tmp_path):
    from replicate.judge.compare import compare
    from replicate.judge.model import KEY_SEP, LabelledRun
    from replicate.judge.uncertainty import Uncertainty

    n = 3000  # every item regresses, one item per query: Durkalski's statistic is (b - c)^2 / (b + c) = 3000
    keys = np.array([f"q{i}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    gold = np.zeros(n, np.int16)
    old = LabelledRun("old", keys, gold, np.zeros(n, np.int8), "toy@1")
    new = LabelledRun("new", keys, gold, np.ones(n, np.int8), "toy@1")
    js = compare(old, new, uncertainty=Uncertainty(replicates=20)).to_json()["mcnemar_clustered"]
    assert js["statistic"] == 3000 and js["p"] == 0.0
    x = math.sqrt(3000 / 2)  # the asymptotic series of log erfc(x), as above: -653.278...
    assert js["log10_p"] == pytest.approx((-x * x - math.log(x * math.sqrt(math.pi)) - 1 / (2 * x * x)) / math.log(10), rel=1e-9)
