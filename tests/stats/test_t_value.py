"""The Student t quantile without scipy (replicate.stats.smallsample.t_quantile), against scipy's, at the
levels the intervals use and at degrees of freedom either side of where its method changes."""

from __future__ import annotations

import pytest
from scipy.stats import t

from replicate.stats.smallsample import t_quantile


@pytest.mark.parametrize("df", [*range(1, 40), 99, 200, 399, 400, 401, 999, 1000, 1001, 5000, 10**6])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_matches_scipy(df, level):
    assert t_quantile(df, 0.5 + level / 2) == pytest.approx(t.ppf(0.5 + level / 2, df), rel=1e-12)
