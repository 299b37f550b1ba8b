"""Bootstrap medians and shares against numpy on the values repeated by their weights, and a plain draw loop."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.stats.bootstrap import Clusters
from replicate.stats.medians import ratio_of_sums, resample_items, weighted_medians, weighted_sums


@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_weighted_medians_are_numpy_medians_of_the_repeated_values(n):
    rng = np.random.default_rng(n)
    values = rng.integers(0, 30, n).astype(float)  # ties on purpose
    values[rng.random(n) < 0.2] = np.nan
    weights = rng.integers(0, 3, (300, n))
    got = weighted_medians(values, weights)
    for b in range(weights.shape[0]):
        keep = ~np.isnan(values)
        sample = np.repeat(values[keep], weights[b, keep])
        if sample.size == 0:
            assert np.isnan(got[b])
        else:
            assert got[b] == np.median(sample)


def test_weighted_medians_of_no_values_are_nan():
    assert np.isnan(weighted_medians(np.array([np.nan, np.nan]), np.ones((3, 2), dtype=np.int64))).all()


def test_item_resampling_is_a_plain_loop_drawing_clusters():
    rng = np.random.default_rng(3)
    n, B = 25, 200
    d = rng.normal(size=n)
    d[[2, 9]] = np.nan
    groups = [f"g{i % 6}" for i in range(n)]
    clusters = Clusters.from_values(groups, "group")
    boot = resample_items(clusters, rng=np.random.default_rng(11), n_resamples=B, seed=11)
    iv = boot.interval(weighted_medians(d, boot.weights))
    share = boot.interval(ratio_of_sums(weighted_sums(np.where(np.isnan(d), np.nan, d > 0), boot.weights),
                                        weighted_sums((~np.isnan(d)).astype(float), boot.weights)))
    # reference: draw clusters one replicate at a time, rebuild the sample, take numpy's median
    ref = np.random.default_rng(11)
    members = [np.flatnonzero(clusters.codes == g) for g in range(clusters.count)]
    meds, shares = [], []
    for _ in range(B):
        drawn = ref.integers(clusters.count, size=clusters.count)
        sample = d[np.concatenate([members[g] for g in drawn])]
        sample = sample[~np.isnan(sample)]
        meds.append(np.median(sample))
        shares.append(np.mean(sample > 0))
    lo, hi = np.percentile(meds, [2.5, 97.5])
    assert (iv.low, iv.high) == pytest.approx((lo, hi), rel=1e-12)
    assert (share.low, share.high) == pytest.approx(tuple(np.percentile(shares, [2.5, 97.5])), rel=1e-12)
    assert iv.method == "cluster-bootstrap-percentile" and iv.cluster == "group" and iv.clusters == 6
    assert iv.seed == 11 and iv.replicates == B
