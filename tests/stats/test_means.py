"""Bootstrap intervals of means (replicate.stats.means) against a plain loop with the same draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from replicate.stats.bootstrap import ITEM_METHOD, Clusters
from replicate.stats.few_clusters import T_METHOD
from replicate.stats.means import bootstrap_means, cluster_sums


def _data(seed: int, n: int = 90, rows: int = 3):
    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, 0.5, 1.0, 2.0, 7.5, 10.0], size=(rows, n))
    counted = rng.random((rows, n)) < 0.8
    codes = rng.integers(0, 12, n)
    return values, counted, codes


def test_cluster_sums_by_hand():
    values = np.array([[1.0, 2.0, 8.5, 4.0]])
    counted = np.array([[True, True, False, True]])
    sums, counts = cluster_sums(values, counted, np.array([0, 0, 1, 1]), 2)
    assert sums.tolist() == [[3.0], [4.0]] and counts.tolist() == [[2.0], [1.0]]


def test_cluster_bootstrap_of_means_matches_a_plain_loop_with_the_same_seed():
    values, counted, codes = _data(3)
    G, B = 12, 400
    ivs = bootstrap_means(values, counted, clusters=Clusters(codes, G, "question_id"), n_resamples=B, seed=11)
    draws = np.random.default_rng(11).integers(G, size=(B, G))
    c = np.sqrt(G / (G - 1)) * stats.t.ppf(0.975, G - 1) / stats.norm.ppf(0.975)
    for r, iv in enumerate(ivs):
        reps = []
        for b in range(B):
            items = np.concatenate([np.flatnonzero(codes == g) for g in draws[b]])
            keep = items[counted[r, items]]
            reps.append(values[r, keep].mean())
        lo, hi = np.percentile(reps, [2.5, 97.5])
        point = values[r, counted[r]].mean()
        want_lo = max(min(lo, point - c * (point - lo)), values[r, counted[r]].min())
        want_hi = min(max(hi, point + c * (hi - point)), values[r, counted[r]].max())
        assert iv.low == pytest.approx(want_lo, abs=1e-12) and iv.high == pytest.approx(want_hi, abs=1e-12)
        assert iv.method == T_METHOD and iv.cluster == "question_id" and iv.clusters == G and iv.seed == 11


def test_item_bootstrap_is_the_plain_percentile_interval():
    values, counted, _ = _data(4, n=60, rows=1)
    ivs = bootstrap_means(values, counted, n_resamples=300, seed=2)
    n = values.shape[1]
    draws = np.random.default_rng(2).integers(n, size=(300, n))
    reps = [values[0, d][counted[0, d]].mean() for d in draws]
    lo, hi = np.percentile(reps, [2.5, 97.5])
    assert (ivs[0].low, ivs[0].high) == pytest.approx((lo, hi), abs=1e-12)
    assert ivs[0].method == ITEM_METHOD and ivs[0].assumes == "independent items"


def test_a_row_with_nothing_counted_has_no_interval_and_bad_input_is_refused():
    values = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0] * 6])
    counted = np.array([[True] * 6, [False] * 6])
    ivs = bootstrap_means(values, counted, n_resamples=50, seed=0)
    assert ivs[0].low is not None and ivs[1].low is None and ivs[1].undefined == 50
    with pytest.raises(ValueError, match="one shape"):
        bootstrap_means(values, counted[:1], n_resamples=10)
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_means(np.array([[np.nan, 1.0]]), np.array([[True, True]]), n_resamples=10)
    few = bootstrap_means(values[:1], counted[:1], clusters=Clusters(np.array([0, 0, 1, 1, 2, 2]), 3, "question_id"),
                          n_resamples=20)
    assert few[0].low is None and "too few question_id clusters" in few[0].reason


def test_no_items_at_all_gives_rows_without_an_interval():
    """Zero items (every pairwise record dropped as unparsed): each row's interval is None, where the clip to the
    counted values' range raised numpy's ValueError (a minimum of a zero-size array)."""
    ivs = bootstrap_means(np.empty((2, 0)), np.empty((2, 0), dtype=bool), n_resamples=30, seed=0)
    assert [(iv.low, iv.high, iv.undefined) for iv in ivs] == [(None, None, 30), (None, None, 30)]
