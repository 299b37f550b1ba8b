"""Bootstrap intervals of shares (replicate.stats.shares) against a plain loop; intervals of a table of counts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from replicate.stats.bootstrap import ITEM_METHOD, Clusters
from replicate.stats.countintervals import cell_figures
from replicate.stats.few_clusters import T_METHOD
from replicate.stats.fourcell import FourCell
from replicate.stats.shares import bootstrap_shares, share_counts


def _data(seed: int, n: int = 120, rows: int = 3):
    rng = np.random.default_rng(seed)
    hits = rng.random((rows, n)) < np.array([0.2, 0.5, 0.8])[:rows, None]
    counted = rng.random((rows, n)) < 0.9
    codes = rng.integers(0, 15, n)
    return hits, counted, codes


def test_share_counts_per_cluster_by_hand():
    hits = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], bool)
    counted = np.array([[1, 1, 0, 1], [1, 1, 1, 1]], bool)
    codes = np.array([0, 0, 1, 1])
    got = share_counts(hits, counted, codes, 2)
    # cluster 0 = items 0, 1; cluster 1 = items 2, 3 (item 2 not counted in row 0)
    assert got.tolist() == [[[1, 1], [0, 2]], [[1, 0], [1, 1]]]


def test_cluster_bootstrap_of_shares_matches_a_plain_loop_with_the_same_seed():
    hits, counted, codes = _data(1)
    G, B = 15, 300
    ivs = bootstrap_shares(hits, counted, clusters=Clusters(codes, G, "query_id"), n_resamples=B, seed=7)
    rng = np.random.default_rng(7)
    draws = rng.integers(G, size=(B, G))
    reps = np.empty((B, len(hits)))
    for b in range(B):
        items = np.concatenate([np.flatnonzero(codes == c) for c in draws[b]])
        for r in range(len(hits)):
            c = counted[r, items]
            reps[b, r] = (hits[r, items] & c).sum() / c.sum()
    c = np.sqrt(G / (G - 1)) * stats.t.ppf(0.975, G - 1) / stats.norm.ppf(0.975)
    for r, iv in enumerate(ivs):
        lo, hi = np.percentile(reps[:, r], [2.5, 97.5])
        k, n = int((hits[r] & counted[r]).sum()), int(counted[r].sum())
        point = k / n  # the arms stretched from the point for G clusters, then at least Wilson's interval
        wilson = stats.binomtest(k, n).proportion_ci(method="wilson")
        want = (min(lo, point - c * (point - lo), wilson.low), max(hi, point + c * (hi - point), wilson.high))
        assert (iv.low, iv.high) == pytest.approx(want, abs=1e-12)
        assert (iv.method, iv.cluster, iv.clusters, iv.replicates, iv.seed, iv.assumes, iv.at_least) == (
            T_METHOD, "query_id", G, B, 7, None, "wilson-score",
        )


def test_item_bootstrap_of_shares_agrees_with_resampling_items_one_by_one():
    hits, counted, _ = _data(2, n=400, rows=1)
    ivs = bootstrap_shares(hits, counted, n_resamples=4000, seed=3)
    rng = np.random.default_rng(11)
    idx = rng.integers(400, size=(4000, 400))
    c = counted[0, idx]
    reps = (hits[0, idx] & c).sum(axis=1) / c.sum(axis=1)
    lo, hi = np.percentile(reps, [2.5, 97.5])
    iv = ivs[0]
    assert iv.method == ITEM_METHOD and iv.cluster is None and iv.assumes == "independent items"
    # two independent simulations of one distribution: the bounds agree to Monte Carlo error
    assert iv.low == pytest.approx(lo, abs=0.015) and iv.high == pytest.approx(hi, abs=0.015)


def test_a_share_with_nothing_counted_has_no_interval():
    ivs = bootstrap_shares(np.zeros((1, 5), bool), np.zeros((1, 5), bool), n_resamples=10)
    assert (ivs[0].low, ivs[0].high, ivs[0].undefined) == (None, None, 10)
    with pytest.raises(ValueError, match="hits and counted must have one shape"):
        bootstrap_shares(np.zeros((1, 5), bool), np.zeros((1, 4), bool))
    with pytest.raises(ValueError, match="n_resamples must be a positive integer; got 0"):
        bootstrap_shares(np.zeros((1, 5), bool), np.ones((1, 5), bool), n_resamples=0)


def test_cell_intervals_wilson_for_proportions_and_item_bootstrap_from_counts_for_the_rest():
    cells = FourCell(60, 20, 10, 30)
    figs = cell_figures(cells, n_resamples=2000, seed=5)
    iv = figs.interval
    # Wilson of 20 / 120 at 95% (statsmodels' proportion_confint(method="wilson") formula, by scipy's z)
    z = stats.norm.ppf(0.975)
    p, n = 20 / 120, 120
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert iv["regression_rate"].low == pytest.approx(centre - half) and iv["regression_rate"].high == pytest.approx(centre + half)
    assert iv["regression_rate"].method == "wilson-score" and iv["regression_rate"].replicates is None
    # the EM difference by resampling the 120 items themselves (a plain loop over rows of categories)
    cats = np.repeat([0, 1, 2, 3], [60, 20, 10, 30])
    rng = np.random.default_rng(1)
    draws = cats[rng.integers(120, size=(4000, 120))]
    diff = ((draws == 1).sum(axis=1) - (draws == 2).sum(axis=1)) / 120
    lo, hi = np.percentile(diff, [2.5, 97.5])
    d = iv["accuracy_difference"]
    assert d.method == "item-bootstrap-percentile" and d.replicates == 2000 and d.seed == 5
    assert d.low == pytest.approx(lo, abs=0.01) and d.high == pytest.approx(hi, abs=0.01)
    assert all(v.assumes == "independent items" and v.cluster is None for v in iv.values())
    js = figs.to_json()
    assert "interval" not in js and set(js["ci"]) == {
        "em_old", "em_new", "regression_rate", "regression_share_of_old_correct", "backward_rate",
        "accuracy_difference", "independent_regression_rate", "independence_ratio",
    }
    assert js["uncertainty"]["assumes"] == "independent items" and js["regression_rate"] == 20 / 120


def test_value_counts_by_cluster_in_blocks_against_a_plain_count(monkeypatch):
    import replicate.stats.shares as shares

    rng = np.random.default_rng(5)
    values, codes = rng.integers(-1, 4, 1000).astype(np.int8), rng.integers(0, 9, 1000).astype(np.int32)
    want = np.zeros((9, 5), np.int64)
    for v, c in zip(values.tolist(), codes.tolist()):
        want[c, v + 1] += 1
    monkeypatch.setattr(shares, "_ITEM_BLOCK", 128)  # several blocks, the last one short
    before = values.copy()
    assert np.array_equal(shares.value_counts(values, codes, 9, 5, low=-1), want)
    assert np.array_equal(shares.value_counts(values, None, 1, 5, low=-1), want.sum(axis=0, keepdims=True))
    assert np.array_equal(values, before)  # the caller's values are not shifted in place


def test_intervals_from_counts_are_those_from_rows():
    hits, counted, codes = _data(4)
    clusters = Clusters(codes, 15, "query_id")
    from replicate.stats.shares import bootstrap_share_counts

    for cl, counts in ((clusters, share_counts(hits, counted, codes, 15)),
                       (Clusters.items(len(codes)), share_counts(hits, counted, np.zeros(len(codes), np.int64), 1))):
        rows = bootstrap_shares(hits, counted, clusters=None if cl.is_items else cl, n_resamples=200, seed=2)
        assert bootstrap_share_counts(counts, clusters=cl, n_resamples=200, seed=2) == rows
