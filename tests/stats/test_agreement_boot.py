"""Bootstrap intervals of agreement figures against a plain loop: the same cluster draws, the items of the
drawn clusters concatenated, each figure recomputed by sklearn / the krippendorff package / scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import norm, spearmanr, t as t_dist

from replicate.stats.agreement import Figure, all_figures, read_figure, reading
from replicate.stats.agreement_boot import agreement_intervals, cluster_tables, table_replicates
from replicate.stats.bootstrap import Clusters, percentile_bounds

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")

DOMAIN = [0, 1, 2, 3]


def _data(seed, n_clusters=12, per=(5, 30)):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(*per, n_clusters)
    qids = np.repeat([f"q{c}" for c in range(n_clusters)], sizes)
    shift = np.repeat(rng.integers(0, 2, n_clusters), sizes)  # clusters differ: items of one are alike
    gold = np.clip(rng.integers(0, 3, len(qids)) + shift, 0, 3)
    run = np.clip(gold + rng.integers(-1, 2, len(qids)), 0, 3)
    return qids, run, gold


def _plain(values_a, values_b, figure: Figure):
    """One figure of two label vectors by the reference libraries (binarized first when asked)."""
    a, b = np.asarray(values_a), np.asarray(values_b)
    domain = DOMAIN
    if figure.binarize is not None:
        a, b, domain = (a >= figure.binarize).astype(int), (b >= figure.binarize).astype(int), [0, 1]
    with warnings.catch_warnings(action="ignore"):
        if figure.name == "cohen_kappa":
            w = None if figure.weights == "none" else figure.weights
            return metrics.cohen_kappa_score(a, b, labels=domain, weights=w)
        if figure.name == "krippendorff_alpha":
            try:
                return krippendorff.alpha(np.vstack([a, b]).astype(float), value_domain=domain,
                                          level_of_measurement=figure.level)
            except ValueError:
                return np.nan
        return spearmanr(a, b).statistic


def _plain_bounds(qids, run, gold, figure, seed, n_resamples):
    names, codes = np.unique(qids, return_inverse=True)
    members = [np.flatnonzero(codes == c) for c in range(len(names))]
    draws = np.random.default_rng(seed).integers(len(names), size=(n_resamples, len(names)))
    vals = []
    for row in draws:
        idx = np.concatenate([members[c] for c in row])
        vals.append(_plain(run[idx], gold[idx], figure))
    vals = np.array(vals, dtype=float)
    ok = vals[~np.isnan(vals)]
    return np.percentile(ok, 2.5), np.percentile(ok, 97.5), int(np.isnan(vals).sum())


FIGS = [Figure("cohen_kappa"), Figure("cohen_kappa", weights="quadratic"), Figure("krippendorff_alpha", level="ordinal"),
        Figure("krippendorff_alpha", level="interval", binarize=2), Figure("spearman"), Figure("cohen_kappa", binarize=3)]


@pytest.mark.parametrize("seed", [0, 1])
def test_cluster_bootstrap_equals_a_plain_loop_over_the_same_draws(seed):
    qids, run, gold = _data(seed)
    clusters = Clusters.from_values(qids, "query_id")
    per_cluster = cluster_tables(run[None, :], gold[None, :], 5, clusters)
    ivs = agreement_intervals(per_cluster, FIGS, DOMAIN, clusters=clusters, n_resamples=200, seed=seed)[0]
    c = float(np.sqrt(12 / 11) * t_dist.ppf(0.975, 11) / norm.ppf(0.975))  # the small-cluster stretch, by scipy
    for fig, iv in zip(FIGS, ivs):
        lo, hi, undefined = _plain_bounds(qids, run, gold, fig, seed, 200)
        point = _plain(run, gold, fig)
        want = (max(-1.0, point - c * (point - lo)), min(1.0, point + c * (hi - point)))
        assert (iv.low, iv.high) == pytest.approx(want, abs=1e-10), fig
        assert iv.undefined == undefined
        assert iv.method == "cluster-bootstrap-t-percentile" and iv.cluster == "query_id" and iv.clusters == 12
        assert iv.seed == seed and iv.replicates == 200


def test_every_pair_shares_the_cluster_draws_and_the_seed_repeats():
    qids, run, gold = _data(5)
    other = np.clip(run + (np.arange(len(run)) % 3 == 0), 0, 3)
    clusters = Clusters.from_values(qids, "query_id")
    both = cluster_tables(np.stack([run, other]), np.stack([gold, gold]), 5, clusters)
    one = cluster_tables(other[None, :], gold[None, :], 5, clusters)
    figs = all_figures() + all_figures(1)
    a = agreement_intervals(both, figs, DOMAIN, clusters=clusters, n_resamples=100, seed=3)
    b = agreement_intervals(one, figs, DOMAIN, clusters=clusters, n_resamples=100, seed=3)
    assert a[1] == b[0]  # a pair's intervals do not depend on which other pairs are resampled with it
    assert agreement_intervals(both, figs, DOMAIN, clusters=clusters, n_resamples=100, seed=3) == a


def test_item_bootstrap_draws_cells_and_covers_the_point_value():
    qids, run, gold = _data(2)
    clusters = Clusters.items(len(run))
    per_cluster = cluster_tables(run[None, :], gold[None, :], 5, clusters)
    assert per_cluster.shape == (len(run), 1, 5, 5)
    (iv,) = agreement_intervals(per_cluster, [Figure("cohen_kappa")], DOMAIN, clusters=clusters, n_resamples=400)[0]
    point = metrics.cohen_kappa_score(run, gold, labels=DOMAIN)
    assert iv.method == "item-bootstrap-percentile" and iv.assumes == "independent items"
    assert iv.low < point < iv.high


def test_too_few_clusters_give_no_interval_and_say_why():
    # one cluster resampled whole gives the sample back every time: no interval, the reason said (issue 28)
    qids, run, gold = _data(4, n_clusters=1)
    clusters = Clusters.from_values(qids, "query_id")
    per_cluster = cluster_tables(run[None, :], gold[None, :], 5, clusters)
    (iv,) = agreement_intervals(per_cluster, [Figure("cohen_kappa")], DOMAIN, clusters=clusters, n_resamples=50)[0]
    assert iv.low is None and iv.high is None
    assert "cluster" in iv.to_json()["reason"]


def test_cluster_intervals_are_stretched_like_every_other_figure():
    # the small-cluster stretch of stats.few_clusters, applied around the sample's own kappa
    from replicate.stats.few_clusters import T_METHOD, stretch_factor

    qids, run, gold = _data(3, n_clusters=8)
    clusters = Clusters.from_values(qids, "query_id")
    per_cluster = cluster_tables(run[None, :], gold[None, :], 5, clusters)
    fig = Figure("cohen_kappa")
    (iv,) = agreement_intervals(per_cluster, [fig], DOMAIN, clusters=clusters, n_resamples=400, seed=7)[0]
    reps = table_replicates(per_cluster, clusters, n_resamples=400, seed=7)
    tables, domain = reading(reps, DOMAIN, None)
    lo, hi, _ = percentile_bounds(read_figure(tables, fig, domain), 0.95)
    point = metrics.cohen_kappa_score(run, gold, labels=DOMAIN)
    c = stretch_factor(8, 0.95)
    assert iv.method == T_METHOD
    assert iv.low == pytest.approx(max(-1.0, point - c * (point - lo[0])), abs=1e-12)
    assert iv.high == pytest.approx(min(1.0, point + c * (hi[0] - point)), abs=1e-12)


def test_bad_settings_are_refused():
    qids, run, gold = _data(1)
    clusters = Clusters.from_values(qids, "query_id")
    per_cluster = cluster_tables(run[None, :], gold[None, :], 5, clusters)
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        agreement_intervals(per_cluster, FIGS, DOMAIN, clusters=clusters, n_resamples=0)
    with pytest.raises(ValueError, match="policy must be one of intersect, wrong"):
        agreement_intervals(per_cluster, FIGS, DOMAIN, clusters=clusters, policy="drop")
