"""Exact practical threshold, exact float-vs-eps comparison, class precedence, intervals."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from replicate.stats.classify import (
    CLASSES,
    classify,
    diff_at_least,
    float_above,
    float_below,
    parse_eps,
    parse_eps_list,
)
from replicate.stats.intervals import diff_interval, mean_interval, wilson


def test_boundary_30_of_50_minus_20_of_50_is_exactly_eps():
    assert 30 / 50 - 20 / 50 < 0.2  # the floating-point trap
    eps = parse_eps("0.2")
    up, down = diff_at_least(np.array([20]), np.array([50]), np.array([30]), np.array([50]), eps)
    assert up.tolist() == [True] and down.tolist() == [False]
    # Reverse direction: a regression of exactly eps counts too.
    up, down = diff_at_least(np.array([30]), np.array([50]), np.array([20]), np.array([50]), eps)
    assert up.tolist() == [False] and down.tolist() == [True]


def test_boundary_other_side_just_below_eps():
    eps = parse_eps("0.2")
    # 29/50 - 20/50 = 0.18 < 0.2; 61/100 - 41/100 = 0.2 exactly; 3/7 - 2/9 = 13/63 > 0.2
    a = np.array([20, 41, 2])
    n1 = np.array([50, 100, 9])
    b = np.array([29, 61, 3])
    n2 = np.array([50, 100, 7])
    up, _ = diff_at_least(a, n1, b, n2, eps)
    assert up.tolist() == [False, True, True]
    # Unequal K: 40/49 - 30/49 = 10/49 > 1/5; 39/49 - 30/49 = 9/49 < 1/5
    up, _ = diff_at_least(np.array([30, 30]), np.array([49, 49]), np.array([40, 39]), np.array([49, 49]), eps)
    assert up.tolist() == [True, False]


@pytest.mark.parametrize(
    "text,value",
    [("0.2", Fraction(1, 5)), ("0.15", Fraction(3, 20)), (0.1, Fraction(1, 10)), (Fraction(1, 3), Fraction(1, 3)), ("1", Fraction(1))],
)
def test_parse_eps_is_exact(text, value):
    assert parse_eps(text) == value


@pytest.mark.parametrize("bad", ["0", "-0.1", "1.5", "abc", "", "nan"])
def test_parse_eps_rejects(bad):
    with pytest.raises(ValueError, match=r"eps must"):
        parse_eps(bad)


def test_parse_eps_list():
    assert parse_eps_list("0.10, 0.15,0.2") == [Fraction(1, 10), Fraction(3, 20), Fraction(1, 5)]
    with pytest.raises(ValueError, match="sensitivity needs"):
        parse_eps_list(" , ")


def test_float_comparison_with_rational_eps_is_exact():
    e = Fraction(1, 5)
    f = float(e)  # 0.2000000000000000111..., slightly above 1/5
    assert Fraction(f) > e
    x = np.array([f, np.nextafter(f, 0), np.nextafter(f, 1)])
    assert float_below(x, e).tolist() == [False, True, False]
    assert float_above(x, e).tolist() == [True, False, True]
    # -0.2 as a float lies below -1/5: not strictly above it.
    assert float_above(np.array([-f]), -e).tolist() == [False]
    third = Fraction(1, 3)  # float(1/3) lies below 1/3
    assert float_below(np.array([float(third)]), third).tolist() == [True]


def test_classify_precedence():
    sig = np.array([True, True, False, False, True])
    up = np.array([True, False, True, False, False])
    down = np.array([False, True, False, False, False])
    lo = np.array([0.3, -0.5, -0.1, -0.3, -0.05])
    hi = np.array([0.6, -0.25, 0.15, 0.1, 0.05])
    codes = classify(sig, up, down, lo, hi, Fraction(1, 5))
    assert [CLASSES[c] for c in codes] == ["improved", "regressed", "equivalent", "inconclusive", "equivalent"]


# Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10 (hybrid score)
# and method 1 (Wald), for p1 - p2 with p1 = x1/n1.
NEWCOMBE = [
    ((56, 70, 48, 80), (0.0524, 0.3339), (0.0575, 0.3425)),
    ((9, 10, 3, 10), (0.1705, 0.8090), None),
    ((5, 56, 0, 29), (-0.0381, 0.1926), (0.0146, 0.1640)),
    ((0, 10, 0, 20), (-0.1611, 0.2775), None),
    ((0, 10, 0, 10), (-0.2775, 0.2775), None),
    ((10, 10, 0, 20), (0.6791, 1.0000), None),
    ((10, 10, 0, 10), (0.6075, 1.0000), None),
]


@pytest.mark.parametrize("case,hybrid,wald", NEWCOMBE)
def test_intervals_match_newcombe_1998(case, hybrid, wald):
    x1, n1, x2, n2 = case
    lo, hi = diff_interval(x2, n2, x1, n1, method="newcombe")  # target = p1
    assert (round(float(lo), 4), round(float(hi), 4)) == hybrid
    if wald is not None:
        lo, hi = diff_interval(x2, n2, x1, n1, method="wald")
        assert (round(float(lo), 4), round(float(hi), 4)) == wald


def test_agresti_caffo_by_hand():
    # (56+1)/(70+2) - (48+1)/(80+2), se from the adjusted proportions.
    p1, p2 = 57 / 72, 49 / 82
    se = np.sqrt(p1 * (1 - p1) / 72 + p2 * (1 - p2) / 82)
    lo, hi = diff_interval(48, 80, 56, 70, method="agresti-caffo")
    assert float(lo) == pytest.approx(p1 - p2 - 1.959963984540054 * se, abs=1e-12)
    assert float(hi) == pytest.approx(p1 - p2 + 1.959963984540054 * se, abs=1e-12)
    with pytest.raises(ValueError, match="method must be one of newcombe, wald, agresti-caffo"):
        diff_interval(1, 2, 1, 2, method="exact")


def test_wilson_and_mean_interval():
    lo, hi = wilson(np.array([0]), np.array([10]), 1.959963984540054)
    assert round(float(lo[0]), 4) == 0.0 and round(float(hi[0]), 4) == 0.2775
    v = np.array([0.2, 0.4, 0.6, 0.8])
    lo, hi = mean_interval(v)
    half = 1.959963984540054 * np.std(v, ddof=1) / 2
    assert lo == pytest.approx(0.5 - half) and hi == pytest.approx(0.5 + half)
    assert mean_interval(np.array([0.5])) == (None, None)
