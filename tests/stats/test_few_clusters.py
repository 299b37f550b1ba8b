"""Intervals over few clusters: the minimum, the t-stretch, the Wilson floor, null where the figure is undefined.

Each checked against an independent reference: scipy's t and normal quantiles and scipy's Wilson interval
(``binomtest(...).proportion_ci(method="wilson")``), applied by a plain loop to the raw percentile bounds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.stats.bootstrap import Clusters, bootstrap_pairs, interval_figures
from replicate.stats.few_clusters import MIN_CLUSTERS, T_METHOD, WILSON, stretch_factor

CATEGORY_LABELS = np.array([(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)], dtype=np.int8)


def release(categories_per_cluster: list[list[int]]):
    """Two runs' labels, gold 0 and cluster codes from each cluster's item categories."""
    cats = np.array([c for cl in categories_per_cluster for c in cl])
    codes = np.repeat(np.arange(len(categories_per_cluster)), [len(c) for c in categories_per_cluster])
    return CATEGORY_LABELS[cats].T.copy(), np.zeros(len(cats), np.int16), codes


def wilson(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return ci.low, ci.high


def test_stretch_factor_is_sqrt_g_over_g_minus_1_times_t_over_z():
    for G in (2, 5, 10, 50):
        assert stretch_factor(G, 0.95) == pytest.approx(
            math.sqrt(G / (G - 1)) * stats.t.ppf(0.975, G - 1) / stats.norm.ppf(0.975), rel=1e-12)
    assert stretch_factor(1, 0.95) == 1.0


#: The proportions written out by hand as categories (both, only_old, only_new, neither_same, neither_changed)
#: summed in the count and in the denominator (None: every item).
HAND_PROPORTIONS = {
    "em_old": ((0, 1), None), "em_new": ((0, 2), None), "regression_rate": ((1,), None),
    "regression_share_of_old_correct": ((1,), (0, 1)), "backward_rate": ((2,), None), "change_rate": ((1, 2, 4), None),
}


def test_cluster_intervals_are_stretched_percentiles_never_narrower_than_wilson():
    rng = np.random.default_rng(3)
    cats = [rng.choice(5, size=rng.integers(5, 15), p=rng.dirichlet(np.ones(5))).tolist() for _ in range(8)]
    labels, gold, codes = release(cats)
    boot = bootstrap_pairs(labels, gold, [(0, 1), (1, 0)], clusters=Clusters(codes, 8, "query_id"), n_resamples=400, seed=4)
    raw, ivs = boot.percentiles(), boot.intervals()
    c = math.sqrt(8 / 7) * stats.t.ppf(0.975, 7) / stats.norm.ppf(0.975)
    for p, (a, _) in enumerate([(0, 1), (1, 0)]):
        counts = np.bincount([k for cl in cats for k in cl], minlength=5)
        if a == 1:
            counts = counts[[0, 2, 1, 3, 4]]
        n = counts.sum()
        point = {"em_old": (counts[0] + counts[1]) / n, "em_new": (counts[0] + counts[2]) / n,
                 "accuracy_difference": (counts[1] - counts[2]) / n, "regression_rate": counts[1] / n,
                 "regression_share_of_old_correct": counts[1] / (counts[0] + counts[1]),
                 "backward_rate": counts[2] / n, "change_rate": (counts[1] + counts[2] + counts[4]) / n}
        for f, v in point.items():
            lo, hi = raw[f][0][p], raw[f][1][p]
            want_lo, want_hi = min(lo, v - c * (v - lo)), max(hi, v + c * (hi - v))
            if f in HAND_PROPORTIONS:
                num, den = HAND_PROPORTIONS[f]
                wl, wh = wilson(int(sum(counts[k] for k in num)), int(n if den is None else sum(counts[k] for k in den)))
                want_lo, want_hi = min(want_lo, wl), max(want_hi, wh)
                assert ivs[p][f].at_least == WILSON
            lowest = -1.0 if f == "accuracy_difference" else 0.0
            want = (max(want_lo, lowest), min(want_hi, 1.0))
            assert (ivs[p][f].low, ivs[p][f].high) == pytest.approx(want, abs=1e-12), (p, f)
            assert ivs[p][f].method == T_METHOD


@pytest.mark.parametrize("G", [1, 2, MIN_CLUSTERS - 1])
def test_fewer_clusters_than_the_minimum_give_no_interval_and_say_why(G):
    labels, gold, codes = release([[0, 1, 1, 2, 3, 4, 0, 0]] * G)
    ivs = bootstrap_pairs(labels, gold, [(0, 1)], clusters=Clusters(codes, G, "query_id"), n_resamples=50).intervals()[0]
    for f in interval_figures():
        assert ivs[f].low is None and ivs[f].high is None
        assert f"too few query_id clusters for an interval: {G}, fewer than {MIN_CLUSTERS}" in ivs[f].reason
        js = ivs[f].to_json()
        assert js["low"] is None and js["reason"] == ivs[f].reason


def test_equal_clusters_get_at_least_the_wilson_interval():
    """Seven clusters of equal composition, 14/140 regressions: every replicate is the sample (zero width),
    but the printed interval is at least Wilson's (6.05%-16.09%)."""
    labels, gold, codes = release([[1, 1] + [0] * 18] * 7)
    iv = bootstrap_pairs(labels, gold, [(0, 1)], clusters=Clusters(codes, 7, "query_id"), n_resamples=200).intervals()[0]
    reg = iv["regression_rate"]
    assert (reg.low, reg.high) == pytest.approx(wilson(14, 140), abs=1e-12)


def test_a_zero_count_gets_a_non_degenerate_interval():
    labels, gold, _ = release([[0] * 30 + [3] * 10])
    iv = bootstrap_pairs(labels, gold, [(0, 1)], n_resamples=200).intervals()[0]  # item bootstrap
    reg = iv["regression_rate"]
    assert reg.low == 0.0 and reg.high == pytest.approx(wilson(0, 40)[1], abs=1e-12) and reg.high > 0.05


def test_no_interval_where_the_figure_is_undefined():
    """No old-correct item: the share of old-correct is undefined, so is its interval (even if replicates were)."""
    labels, gold, codes = release([[2, 3, 4]] * 6)
    iv = bootstrap_pairs(labels, gold, [(0, 1)], clusters=Clusters(codes, 6, "query_id"), n_resamples=100).intervals()[0]
    assert iv["regression_share_of_old_correct"].low is None
    assert iv["independence_ratio"].low is None
    assert iv["regression_rate"].low == 0.0 and iv["regression_rate"].high > 0
