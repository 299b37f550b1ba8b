"""The pieces a replicated claim is judged with (replicate.stats.figure_comparison), against scipy and by hand."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest, t as student_t

from replicate.stats.figure_comparison import THRESHOLD_TEST, added, mean_comparison, shifted, threshold_comparison
from replicate.stats.replication import Comparison


def test_errors_of_a_sum_of_means_add():
    assert added((0.1, 0.01), (0.2, 0.02), (0.05, 0.0)) == pytest.approx((0.35, 0.03))
    assert added() == (0, 0)


def test_mean_comparison_is_a_t_test_with_welch_satterthwaite_degrees_of_freedom():
    fresh, released, ef, er = 0.62, 0.58, (4e-4, 4e-9), (5e-4, 8e-9)
    df = (ef[0] + er[0]) ** 2 / (ef[1] + er[1])  # 67.5 -> 67 (rounded down: a wider interval)
    se = math.sqrt(ef[0] + er[0])
    c = mean_comparison(fresh, released, ef, er)
    assert c.difference == pytest.approx(0.04)
    assert c.p_value == pytest.approx(2 * student_t.sf(0.04 / se, math.floor(df)), rel=1e-9)
    half = student_t.ppf(0.975, math.floor(df)) * se
    assert (c.low, c.high) == pytest.approx((0.04 - half, 0.04 + half), rel=1e-9)


@pytest.mark.parametrize("k,n,threshold,outcome", [(40, 50, 0.5, "pass"), (5, 50, 0.5, "fail"),
                                                   (26, 50, 0.5, "undecided"), (50, 50, 1.0, "undecided")])
def test_threshold_comparison_reads_the_wilson_interval_against_the_threshold(k, n, threshold, outcome):
    ci = binomtest(k, n).proportion_ci(method="wilson")
    got, c = threshold_comparison(k, n, threshold)
    assert got == outcome
    assert c.test == THRESHOLD_TEST and c.p_value is None
    assert (c.difference, c.low, c.high) == pytest.approx((k / n - threshold, ci.low - threshold, ci.high - threshold))


def test_shifted_moves_the_interval_and_drops_the_test():
    c = Comparison(0.03, -0.01, 0.07, "t", 0.2, 1.3)
    assert shifted(c, 0) is c
    s = shifted(c, 0.05)
    assert (s.difference, s.low, s.high) == pytest.approx((-0.02, -0.06, 0.02))
    assert s.p_value is None and s.statistic is None and s.test == "t"
