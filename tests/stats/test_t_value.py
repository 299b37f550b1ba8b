"""Student's t (replicate.stats.student_t.t_quantile, t_sf, through scipy.special's stdtrit and stdtr) against
scipy.stats.t: at the levels the intervals use, at degrees of freedom up to 10^6 (which the replication test
reaches), and far in the tail, where a p-value must stay a probability."""

from __future__ import annotations

import pytest
from scipy.stats import t

from replicate.stats.student_t import t_quantile, t_sf

DFS = [*range(1, 40), 99, 200, 399, 400, 401, 999, 1000, 1001, 5000, 10**5, 10**6]


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_quantile_matches_scipy(df, level):
    assert t_quantile(df, 0.5 + level / 2) == pytest.approx(t.ppf(0.5 + level / 2, df), rel=1e-12)


@pytest.mark.parametrize("df", DFS)
@pytest.mark.parametrize("x", [-6.0, -1.3, 0.0, 0.4, 1.96, 2.9, 6.0, 12.0, 40.0])
def test_upper_tail_matches_scipy(df, x):
    assert t_sf(x, df) == pytest.approx(t.sf(x, df), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("df", [1, 2, 5, 30, 1000, 10**6])
@pytest.mark.parametrize("x", [9.0, 30.0, 100.0, 1e4, 1e8])
def test_far_tail_is_a_probability_and_keeps_its_relative_precision(df, x):
    p = t_sf(x, df)
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(t.sf(x, df), rel=1e-9, abs=1e-300)  # no cancellation of 1 - (almost 1)
    assert t_sf(-x, df) == pytest.approx(1.0 - p, abs=1e-15)
