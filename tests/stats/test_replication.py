"""Replication statistics against scipy and against their definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from replicate.stats.replication import (
    DOES_NOT_REPLICATE,
    REPLICATES,
    UNDERPOWERED,
    mean_rate_variance,
    share_difference,
    verdict,
    wilson_interval,
    z_test,
)


@pytest.mark.parametrize("fresh,printed,vf,vr", [(0.46, 0.443, 0.0004, 0.0005), (0.54, 0.682, 0.0003, 0.0002),
                                                 (0.1, 0.1, 0.01, 0.0)])
def test_z_test_matches_scipy_normal(fresh, printed, vf, vr):
    c = z_test(fresh, printed, vf, vr)
    se = math.sqrt(vf + vr)
    assert c.statistic == pytest.approx((fresh - printed) / se)
    assert c.p_value == pytest.approx(2 * norm.sf(abs(fresh - printed) / se), rel=1e-12)
    assert (c.low, c.high) == pytest.approx((fresh - printed - norm.ppf(0.975) * se,
                                             fresh - printed + norm.ppf(0.975) * se))


def test_z_test_without_variance_is_exact():
    assert z_test(0.5, 0.5, 0.0, 0.0).p_value == 1.0
    assert z_test(0.5, 0.4, 0.0, 0.0).p_value == 0.0


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (37, 80), (1, 1)])
def test_wilson_matches_scipy(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


@pytest.mark.parametrize("k,n,k0,n0", [(11, 80, 12, 80), (0, 80, 0, 80), (30, 100, 10, 90)])
def test_share_difference_is_newcombe_from_scipy_wilson_intervals(k, n, k0, n0):
    c = share_difference(k, n, k0 / n0, n0)
    l1, u1 = binomtest(k, n).proportion_ci(method="wilson")
    l0, u0 = binomtest(k0, n0).proportion_ci(method="wilson")
    p1, p0 = k / n, k0 / n0
    d = p1 - p0
    assert c.difference == pytest.approx(d)
    assert c.low == pytest.approx(d - math.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2), abs=1e-12)
    assert c.high == pytest.approx(d + math.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2), abs=1e-12)
    assert c.p_value is None


def test_mean_rate_variance_is_the_unbiased_binomial_variance_over_items():
    rng = np.random.default_rng(3)
    k = np.array([10, 10, 7, 2, 1])
    trials = [rng.random(n) < 0.4 for n in k]
    correct = np.array([t.sum() for t in trials])
    per = [np.var(t.astype(float), ddof=1) / len(t) if len(t) > 1 else 0.25 for t in trials]
    assert mean_rate_variance(correct, k) == pytest.approx(sum(per) / len(k) ** 2)


def test_the_z_test_holds_its_level_on_a_rerun_of_the_same_items():
    # Seeded: 400 reruns of 100 items x K = 10 from the same rates; the test rejects about 5% of them.
    rng = np.random.default_rng(11)
    p = rng.uniform(0.1, 0.9, 100)
    k = np.full(100, 10)
    rejected = 0
    for _ in range(400):
        a, b = rng.binomial(k, p), rng.binomial(k, p)
        c = z_test(float((b / k).mean()), float((a / k).mean()), mean_rate_variance(b, k), mean_rate_variance(a, k))
        rejected += c.p_value < 0.05
    assert 0.02 < rejected / 400 < 0.09


@pytest.mark.parametrize("lo,hi,v", [(0.01, 0.05, DOES_NOT_REPLICATE), (-0.2, -0.01, DOES_NOT_REPLICATE),
                                     (-0.04, 0.05, REPLICATES), (-0.05, 0.05, REPLICATES),
                                     (-0.06, 0.02, UNDERPOWERED), (-0.01, 0.2, UNDERPOWERED)])
def test_verdict_rule(lo, hi, v):
    assert verdict(lo, hi, 0.05) == v
