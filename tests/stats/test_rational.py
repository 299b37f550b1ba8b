"""Exact means of per-item rates, against Fraction sums written out by hand."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from replicate.stats.rational import mean_of_ratios


def test_the_mean_is_the_exact_fraction_whatever_the_denominators():
    num, den = np.array([1, 2, 7, 0, 3]), np.array([3, 5, 10, 4, 3])
    want = (Fraction(1, 3) + Fraction(2, 5) + Fraction(7, 10) + Fraction(0) + Fraction(3, 3)) / 5
    assert mean_of_ratios(num, den) == want


def test_random_tables_agree_with_a_plain_fraction_loop():
    rng = np.random.default_rng(5)
    for _ in range(50):
        den = rng.integers(1, 60, size=rng.integers(1, 40))
        num = rng.integers(0, den + 1)
        assert mean_of_ratios(num, den) == sum(Fraction(int(a), int(b)) for a, b in zip(num, den)) / len(num)


def test_no_items_is_none_and_bad_denominators_are_refused():
    assert mean_of_ratios(np.zeros(0, int), np.zeros(0, int)) is None
    with pytest.raises(ValueError, match="den must be positive"):
        mean_of_ratios(np.array([1]), np.array([0]))
    with pytest.raises(ValueError, match="shape"):
        mean_of_ratios(np.array([1, 2]), np.array([3]))
