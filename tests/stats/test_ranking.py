"""System-ranking statistics against independent references: scipy, and tau_AP written out as in the paper."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.stats.bootstrap import cluster_weights
from replicate.stats.ranking import (
    bootstrap_rankings,
    kendall_tau,
    kendall_tau_many,
    replicate_means,
    spearman,
    spearman_many,
    swapped_pairs,
    tau_ap,
    tau_ap_many,
)
from replicate.stats.ranking_reference import bootstrap_loop
from support.rankings import tau_ap_paper, tau_ap_tie_breaks


def test_tau_ap_equals_the_printed_formula_without_ties():
    rng = np.random.default_rng(1)
    for n in (2, 3, 5, 12, 40):
        for _ in range(20):
            x, y = rng.random(n), rng.random(n)
            assert tau_ap(x, y) == pytest.approx(tau_ap_paper(x.tolist(), y.tolist()), abs=1e-12)


def test_tau_ap_with_ties_is_the_mean_over_tie_breaks():
    rng = np.random.default_rng(2)
    for n in (2, 3, 4, 6):
        for _ in range(25):
            x = rng.integers(0, 3, n).astype(float)
            y = rng.integers(0, 3, n).astype(float)
            assert tau_ap(x, y) == pytest.approx(tau_ap_tie_breaks(x.tolist(), y.tolist()), abs=1e-12)


def test_tau_ap_known_values():
    assert tau_ap([3, 2, 1], [3, 2, 1]) == 1.0
    assert tau_ap([3, 2, 1], [1, 2, 3]) == -1.0
    # one swap at the top counts more than one at the bottom (Kendall's tau sees them alike)
    top, bottom = tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), tau_ap([4, 3, 2, 1], [4, 3, 1, 2])
    assert top == pytest.approx(1 / 3) and bottom == pytest.approx(7 / 9)
    assert kendall_tau([4, 3, 2, 1], [3, 4, 2, 1]) == kendall_tau([4, 3, 2, 1], [4, 3, 1, 2])
    assert tau_ap([1, 2, 3], [5, 5, 5]) == 0.0  # every order of the estimate equally likely
    assert math.isnan(tau_ap([1.0], [2.0]))


def test_tau_ap_is_asymmetric():
    x, y = [3, 2, 1], [1, 3, 2]  # worked by hand: C = (1, 0) one way, (0, 1) the other
    assert tau_ap(x, y) == pytest.approx(0.0) and tau_ap(y, x) == pytest.approx(-0.5)


def test_many_rows_equal_one_at_a_time():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (30, 7)).astype(float)
    y = rng.integers(0, 4, (30, 7)).astype(float)
    assert np.allclose(tau_ap_many(x, y), [tau_ap(a, b) for a, b in zip(x, y)], atol=1e-14, rtol=0)


def test_kendall_and_spearman_equal_scipy():
    rng = np.random.default_rng(4)
    for _ in range(20):
        x, y = rng.integers(0, 5, 9).astype(float), rng.random(9)
        assert kendall_tau(x, y) == stats.kendalltau(x, y, variant="b").statistic
        assert spearman(x, y) == stats.spearmanr(x, y).statistic
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_bad_vectors_are_refused():
    with pytest.raises(ValueError, match="one length"):
        tau_ap([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        kendall_tau([1, float("nan")], [1, 2])


def test_swapped_pairs_by_hand():
    ref = [0.9, 0.5, 0.7, 0.1]  # order: 0, 2, 1, 3
    est = [0.4, 0.6, 0.3, 0.2]  # order: 1, 0, 2, 3
    assert swapped_pairs(ref, est) == [(0, 1), (2, 1)]
    assert swapped_pairs(ref, [1, 1, 1, 1]) == []


def test_replicate_means_by_a_loop():
    rng = np.random.default_rng(5)
    per_topic = rng.random((4, 6))
    judged = np.array([True, True, False, True, True, False])
    weights = cluster_weights(np.random.default_rng(6), 6, 50)
    got = replicate_means(weights, per_topic, judged)
    for r in range(50):
        drawn = [t for t in range(6) for _ in range(weights[r, t]) if judged[t]]
        for s in range(4):
            want = np.mean([per_topic[s, t] for t in drawn]) if drawn else np.nan
            assert got[r, s] == pytest.approx(want, abs=1e-12, nan_ok=True)


def test_bootstrap_by_a_plain_loop_and_seeded():
    rng = np.random.default_rng(7)
    ref, est = rng.random((5, 8)), rng.random((5, 8))
    judged = np.ones(8, bool)
    boot = bootstrap_rankings(ref, judged, est, judged, n_resamples=40, rng=np.random.default_rng(11))
    again = bootstrap_rankings(ref, judged, est, judged, n_resamples=40, rng=np.random.default_rng(11))
    draws = np.random.default_rng(11).integers(8, size=(40, 8))
    for r in range(40):
        a, b = ref[:, draws[r]].mean(axis=1), est[:, draws[r]].mean(axis=1)
        assert boot.values["kendall_tau"][r] == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
        assert boot.values["spearman"][r] == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
        assert boot.values["tau_ap"][r] == pytest.approx(tau_ap_paper(a.tolist(), b.tolist()), abs=1e-12)
        assert again.values["tau_ap"][r] == boot.values["tau_ap"][r]
    assert boot.empty == 0


def test_bootstrap_equals_the_loop_with_topics_one_qrels_lacks():
    rng = np.random.default_rng(9)
    ref, est = rng.random((7, 5)), rng.random((7, 5))
    judged_ref = np.array([True, True, True, True, False])
    judged_est = np.array([False, True, True, True, True])
    ours = bootstrap_rankings(ref, judged_ref, est, judged_est, n_resamples=300, rng=np.random.default_rng(3))
    loop = bootstrap_loop(ref, judged_ref, est, judged_est, n_resamples=300, rng=np.random.default_rng(3))
    for name in ("kendall_tau", "tau_ap", "spearman"):
        assert np.allclose(ours.values[name], loop[name], atol=1e-12, rtol=0, equal_nan=True)
    assert ours.empty == int(np.isnan(loop["tau_ap"]).sum())


def test_many_rows_equal_scipy_row_by_row():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 4, (200, 9)).astype(float)
    y = np.where(rng.random((200, 9)) < 0.5, rng.integers(0, 4, (200, 9)), rng.random((200, 9)))
    x[0] = 1.0  # a constant row: undefined, as in scipy
    tau, rho = kendall_tau_many(x, y), spearman_many(x, y)
    assert math.isnan(tau[0]) and math.isnan(rho[0])
    for r in range(1, 200):
        assert tau[r] == pytest.approx(stats.kendalltau(x[r], y[r]).statistic, abs=1e-12)
        assert rho[r] == pytest.approx(stats.spearmanr(x[r], y[r]).statistic, abs=1e-12)
