"""The Student t quantile without scipy (replicate.stats.intervals.t_value), against scipy's."""

from __future__ import annotations

import pytest
from scipy.stats import t

from replicate.stats.intervals import t_value


@pytest.mark.parametrize("df", [*range(1, 40), 99, 200, 999, 1000, 1001, 5000, 10**6])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_matches_scipy(df, level):
    assert t_value(level, df) == pytest.approx(t.ppf(0.5 + level / 2, df), rel=1e-12)
