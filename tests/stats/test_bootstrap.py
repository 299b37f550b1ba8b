"""The bootstrap of replicate.stats.bootstrap against a plain loop, and its coverage by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.stats.bootstrap import (
    CATEGORIES,
    CLUSTER_METHOD,
    EDGE_BLOCK,
    ITEM_METHOD,
    Clusters,
    PairBootstrap,
    bootstrap_pairs,
    cluster_category_counts,
    cluster_replicates,
    cluster_weights,
    figures_from_counts,
    interval_figures,
    mirrored,
    percentile_bounds,
)
from replicate.stats.few_clusters import T_METHOD
from support.plainfigures import plain_figures

FIGURES = interval_figures()  # every edge figure of the one table

# (old label, new label) for each category when gold is 0: both right; old right only;
# new right only; both wrong with one label; both wrong with different labels.
CATEGORY_LABELS = np.array([(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)], dtype=np.int8)


def labels_of(categories: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two runs' labels (and gold 0) realising the given item categories."""
    return CATEGORY_LABELS[categories].T.copy(), np.zeros(len(categories), dtype=np.int16)


def plain_cluster_bootstrap(labels, gold, pairs, codes, n_clusters, *, policy, n_resamples, seed, level=0.95):
    """A loop over replicates and edges: draw clusters, gather their items, count."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(codes == c) for c in range(n_clusters)]
    values = {(p, f): [] for p in range(len(pairs)) for f in FIGURES}
    for _ in range(n_resamples):
        drawn = rng.integers(n_clusters, size=n_clusters)
        items = [i for c in drawn for i in members[c]]
        for p, (a, b) in enumerate(pairs):
            figs = plain_figures([labels[a][i] for i in items], [labels[b][i] for i in items], [gold[i] for i in items], policy)
            for f, v in figs.items():
                if v is not None:
                    values[p, f].append(v)
    alpha = 1 - level
    return {k: tuple(np.quantile(v, [alpha / 2, 1 - alpha / 2])) for k, v in values.items() if v}


def small_release(seed: int = 3, runs: int = 4, clusters: int = 9):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, clusters)
    codes = np.repeat(np.arange(clusters), sizes)
    n = len(codes)
    gold = rng.integers(0, 3, n).astype(np.int16)
    labels = np.where(rng.random((runs, n)) < 0.6, gold, rng.integers(-1, 3, (runs, n))).astype(np.int8)
    perm = rng.permutation(n)  # clusters need not be contiguous
    return labels[:, perm], gold[perm], codes[perm]


@pytest.mark.parametrize("policy", ["intersect", "wrong"])
def test_cluster_bootstrap_matches_a_plain_loop_with_the_same_seed(policy):
    labels, gold, codes = small_release()
    pairs = [(0, 1), (1, 0), (2, 3), (0, 3)]
    clusters = Clusters(codes, int(codes.max()) + 1, "query_id")
    ours = bootstrap_pairs(labels, gold, pairs, clusters=clusters, policy=policy, n_resamples=300, seed=11)
    plain = plain_cluster_bootstrap(labels, gold, pairs, codes, clusters.count, policy=policy, n_resamples=300, seed=11)
    raw = ours.percentiles()
    intervals = ours.intervals()
    checked = 0
    for p in range(len(pairs)):
        for f in FIGURES:
            iv = intervals[p][f]
            assert iv.method == T_METHOD and iv.replicates == 300 and iv.cluster == "query_id"
            low, high, undefined = (x[p] for x in raw[f])
            if (p, f) in plain:
                assert (low, high) == pytest.approx(plain[p, f], abs=1e-12), (pairs[p], f)
                checked += 1
            else:
                assert np.isnan(low) and iv.low is None and undefined == iv.undefined == 300
    assert checked >= 28


def test_category_counts_per_cluster_match_counting_by_hand():
    labels, gold, codes = small_release(seed=5)
    G = int(codes.max()) + 1
    counts = cluster_category_counts(labels, gold, [(0, 2)], codes, G, policy="intersect")
    for c in range(G):
        idx = np.flatnonzero(codes == c)
        figs = plain_figures(labels[0][idx].tolist(), labels[2][idx].tolist(), gold[idx].tolist(), "intersect")
        n = int(counts[c, 0].sum())
        both, only_old, only_new = (int(x) for x in counts[c, 0, :3])
        if n:
            assert figs["regression_rate"] == pytest.approx(only_old / n)
            assert figs["em_new"] == pytest.approx((both + only_new) / n)
    assert counts.shape == (G, 1, len(CATEGORIES))


def test_same_seed_same_numbers_other_seed_other_numbers():
    labels, gold, codes = small_release()
    cl = Clusters(codes, int(codes.max()) + 1, "q")
    a = bootstrap_pairs(labels, gold, [(0, 1)], clusters=cl, seed=1).intervals()[0]["regression_rate"]
    b = bootstrap_pairs(labels, gold, [(0, 1)], clusters=cl, seed=1).intervals()[0]["regression_rate"]
    c = bootstrap_pairs(labels, gold, [(0, 1)], clusters=cl, seed=2).intervals()[0]["regression_rate"]
    assert a == b and (a.low, a.high) != (c.low, c.high)
    assert a.seed == 1 and c.seed == 2


def test_item_bootstrap_agrees_with_a_plain_resampling_loop():
    rng = np.random.default_rng(8)
    cats = rng.choice(5, 400, p=[0.5, 0.15, 0.1, 0.15, 0.1])
    labels, gold = labels_of(cats)
    ours = bootstrap_pairs(labels, gold, [(0, 1)], n_resamples=4000, seed=4).intervals()[0]
    assert ours["regression_rate"].method == ITEM_METHOD and ours["regression_rate"].cluster is None
    loop_rng = np.random.default_rng(99)
    vals: dict[str, list[float]] = {f: [] for f in FIGURES}
    for _ in range(4000):
        idx = loop_rng.integers(400, size=400)
        for f, v in plain_figures(labels[0][idx].tolist(), labels[1][idx].tolist(), gold[idx].tolist(), "intersect").items():
            vals[f].append(v)
    for f in FIGURES:
        lo, hi = np.quantile(vals[f], [0.025, 0.975])
        tol = 0.06 * (hi - lo)  # Monte Carlo error of a percentile at 4,000 replicates
        assert ours[f].low == pytest.approx(lo, abs=tol), f
        assert ours[f].high == pytest.approx(hi, abs=tol), f


def test_clusters_from_keys_take_the_named_field():
    cl = Clusters.from_keys(["q1|a", "q2|b", "q1|c"], field=0, name="query_id", sep="|")
    assert cl.count == 2 and cl.codes.tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="has no field 1"):
        Clusters.from_keys(["q1|a", "q2"], field=1, name="x", sep="|")


def test_bad_arguments_are_named():
    labels, gold = labels_of(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_pairs(labels, gold, [(0, 1)], n_resamples=0)
    with pytest.raises(ValueError, match="policy"):
        bootstrap_pairs(labels, gold, [(0, 1)], policy="drop")
    with pytest.raises(ValueError, match="clusters cover"):
        bootstrap_pairs(labels, gold, [(0, 1)], clusters=Clusters.items(2))


# -- coverage by simulation ---------------------------------------------------------
#
# A study whose truth is known: each query draws its own category shares from a
# Dirichlet around PI (small concentration = strongly clustered items), then its
# items from those shares. The population figures are functions of PI.
PI = np.array([0.45, 0.12, 0.08, 0.2, 0.15])
TRUTH = {
    "regression_rate": PI[1],
    "accuracy_difference": PI[1] - PI[2],
    "em_new": PI[0] + PI[2],
    "change_rate": PI[1] + PI[2] + PI[4],
    "independence_ratio": PI[1] / ((PI[0] + PI[1]) * (1 - PI[0] - PI[2])),
}


def simulated_release(rng: np.random.Generator, *, queries: int, per_query: int, concentration: float | None):
    if concentration is None:  # independent items
        cats = rng.choice(5, queries * per_query, p=PI)
    else:
        shares = rng.dirichlet(concentration * PI, size=queries)
        # rng.choice(5, per_query, p=s) for each query in turn, in one step: choice draws per_query
        # uniforms and counts the normalised cumulative shares at or below each, so the same draws
        # give the same categories (test_vectorised_draws_are_the_query_by_query_ones)
        cdf = shares.cumsum(axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((queries, per_query))
        cats = (u[:, :, None] >= cdf[:, None, :]).sum(axis=2).ravel()
    return cats, np.repeat(np.arange(queries), per_query)


def test_vectorised_draws_are_the_query_by_query_ones():
    for seed in range(3):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        cats, codes = simulated_release(a, queries=60, per_query=10, concentration=4.0)
        shares = b.dirichlet(4.0 * PI, size=60)
        assert (cats == np.concatenate([b.choice(5, 10, p=s) for s in shares])).all()
        assert (codes == np.repeat(np.arange(60), 10)).all() and a.random() == b.random()


@pytest.mark.parametrize("largest", [7, 1 << 24], ids=["float32-int32", "float64-int64"])
def test_replicate_counts_are_the_integer_products_of_weights_and_cluster_counts(largest):
    """Both precisions (int32 from float32 products while sums stay below 2**24, int64 from float64
    beyond) give exactly the integer product of the draws' weights and the per-cluster counts."""
    per_cluster = np.random.default_rng(5).integers(0, largest + 1, size=(40, 3, 5))
    per_cluster[0, 0, 0] = largest
    reps = cluster_replicates(np.random.default_rng(9), per_cluster, 300)
    W = cluster_weights(np.random.default_rng(9), 40, 300)
    plain = np.einsum("bg,gpk->bpk", W, per_cluster)  # int64 sums, no floats
    assert reps.dtype == (np.int32 if 40 * largest < (1 << 24) else np.int64)
    assert plain.max() > (1 << 24) or largest == 7
    np.testing.assert_array_equal(reps, plain)


def test_weights_of_chosen_clusters_are_those_of_the_plain_draws(monkeypatch):
    """Weights drawn a block of replicates at a time (a block smaller than one replicate's draws here), all
    clusters or a chosen few, are the counts of a plain loop drawing each replicate's indices in turn."""
    import replicate.stats.bootstrap as bootstrap

    monkeypatch.setattr(bootstrap, "_DRAWS", 50)
    G, B = 37, 23
    rng = np.random.default_rng(4)
    plain = np.zeros((B, G), dtype=np.int64)
    for b in range(B):
        for c in rng.integers(G, size=G):
            plain[b, c] += 1
    np.testing.assert_array_equal(cluster_weights(np.random.default_rng(4), G, B), plain)
    chosen = np.array([0, 5, 6, 36])
    np.testing.assert_array_equal(cluster_weights(np.random.default_rng(4), G, B, columns=chosen), plain[:, chosen])
    assert cluster_weights(np.random.default_rng(4), G, B, columns=np.array([], dtype=np.int64)).shape == (B, 0)


def test_clusters_without_counts_change_no_replicate():
    """Replicates over many clusters of which few carry counts (the weights of the rest are not kept) equal
    the product of every cluster's weights with every cluster's counts."""
    per_cluster = np.zeros((500, 2, 5), dtype=np.int64)
    per_cluster[[3, 77, 499]] = np.random.default_rng(1).integers(0, 9, size=(3, 2, 5))
    reps = cluster_replicates(np.random.default_rng(2), per_cluster, 40)
    W = cluster_weights(np.random.default_rng(2), 500, 40)
    np.testing.assert_array_equal(reps, np.einsum("bg,gpk->bpk", W, per_cluster))
    assert cluster_replicates(np.random.default_rng(2), np.zeros((500, 1, 2), dtype=np.int64), 40).any() == False  # noqa: E712


def coverage(*, clustered_data: bool, cluster_bootstrap: bool, releases: int = 1000) -> dict[str, float]:
    rng = np.random.default_rng(2024)
    hits = {f: 0 for f in TRUTH}
    for r in range(releases):
        cats, codes = simulated_release(rng, queries=60, per_query=10, concentration=4.0 if clustered_data else None)
        labels, gold = labels_of(cats)
        clusters = Clusters(codes, 60, "query") if cluster_bootstrap else None
        iv = bootstrap_pairs(labels, gold, [(0, 1)], clusters=clusters, n_resamples=1000, seed=r).intervals()[0]
        for f, truth in TRUTH.items():
            hits[f] += iv[f].contains(truth)
    return {f: h / releases for f, h in hits.items()}


@pytest.mark.parametrize("clustered", [True, False], ids=["clustered-queries", "independent-items"])
def test_nominal_95_percent_intervals_cover_in_93_to_97_percent_of_releases(clustered):
    for figure, share in coverage(clustered_data=clustered, cluster_bootstrap=clustered).items():
        assert 0.93 <= share <= 0.97, (figure, share)


def test_the_item_bootstrap_on_clustered_data_undercovers():
    """Why the cluster key matters: treating clustered items as independent makes intervals too narrow."""
    shares = coverage(clustered_data=True, cluster_bootstrap=False, releases=300)
    assert shares["regression_rate"] < 0.9 and shares["em_new"] < 0.9


def test_gram_and_mask_paths_give_the_same_category_counts():
    labels, gold, codes = small_release(seed=9, runs=5)
    G = int(codes.max()) + 1
    every = [(i, j) for i in range(5) for j in range(5) if i != j]  # a matrix: Gram path
    few = every[:3]  # a few edges: mask path
    for policy in ("intersect", "wrong"):
        full = cluster_category_counts(labels, gold, every, codes, G, policy=policy)
        part = cluster_category_counts(labels, gold, few, codes, G, policy=policy)
        assert (full[:, :3] == part).all()
        for c in range(G):
            idx = np.flatnonzero(codes == c)
            for p, (a, b) in enumerate(every):
                figs = plain_figures(labels[a][idx].tolist(), labels[b][idx].tolist(), gold[idx].tolist(), policy)
                n = int(full[c, p].sum())
                if n:
                    assert figs["change_rate"] == pytest.approx((full[c, p, 1] + full[c, p, 2] + full[c, p, 4]) / n)
                    assert figs["regression_rate"] == pytest.approx(full[c, p, 1] / n)


def test_intervals_over_several_edge_blocks_are_each_columns_own_percentiles():
    """More edges than four blocks of EDGE_BLOCK (a short last block, mirrored edges too): each edge's bounds are
    numpy's quantiles of that edge's own replicate values, and figures_from_counts gives any subset of figures."""
    rng = np.random.default_rng(5)
    codes = np.repeat(np.arange(12), rng.integers(1, 9, 12))
    gold = rng.integers(0, 3, len(codes)).astype(np.int16)
    labels = np.where(rng.random((17, len(codes))) < 0.6, gold, rng.integers(-1, 3, (17, len(codes)))).astype(np.int8)
    pairs = [(a, b) for a in range(17) for b in range(17) if a != b]
    assert len(pairs) > 4 * EDGE_BLOCK and (len(pairs) // 2) % EDGE_BLOCK  # two blocks or more of each kind
    boot = bootstrap_pairs(labels, gold, pairs, clusters=Clusters(codes, 12, "query_id"), n_resamples=200, seed=2)
    intervals = raw_intervals(boot)
    assert len(intervals) == len(pairs)
    for f in FIGURES:
        values = boot.values(f)
        low, high, _ = percentile_bounds(values, 0.95)  # all edges at once, no blocks: the same numbers
        assert [iv[f][0] for iv in intervals] == [None if np.isnan(x) else x for x in low.tolist()]
        assert [iv[f][1] for iv in intervals] == [None if np.isnan(x) else x for x in high.tolist()]
        for p in range(len(pairs)):
            column = values[:, p][~np.isnan(values[:, p])]
            iv = intervals[p][f]
            assert iv[2] == 200 - len(column), (pairs[p], f)
            if len(column):
                assert iv[:2] == pytest.approx(tuple(np.quantile(column, [0.025, 0.975])), abs=1e-12), f
            else:
                assert iv[0] is None and iv[1] is None
    some = figures_from_counts(boot.replicates, ("independence_ratio", "em_old"))
    assert list(some) == ["independence_ratio", "em_old"]
    for f, v in some.items():
        np.testing.assert_array_equal(v, boot.values(f))
    with pytest.raises(ValueError, match="'kappa'"):
        figures_from_counts(boot.replicates, ("em_old", "kappa"))


def raw_intervals(boot):
    """Per edge and figure, (low, high, undefined) of :meth:`PairBootstrap.percentiles` (None for NaN)."""
    raw = boot.percentiles()
    return [{f: tuple(None if isinstance(x, float) and np.isnan(x) else x for x in (lo[p].item(), hi[p].item(), int(u[p])))
             for f, (lo, hi, u) in raw.items()} for p in range(len(boot.pairs))]


def direct_bounds(boot):
    """Every figure's bounds computed for every edge, no edge taking another's."""
    return {f: [(None if np.isnan(lo) else lo, None if np.isnan(hi) else hi, int(u))
                for lo, hi, u in zip(*percentile_bounds(boot.values(f), boot.confidence_level))] for f in FIGURES}


def test_an_edge_whose_reverse_came_first_takes_its_swapped_figures_bit_for_bit():
    """(b, a) after (a, b) takes em_old/em_new, regression/backward and change rate from it; the rest are
    computed; a repeat of a mirrored edge, or an edge without its reverse, is computed in full."""
    labels, gold, codes = small_release(seed=4, runs=5, clusters=7)
    pairs = [(0, 1), (2, 3), (1, 0), (1, 0), (0, 1), (4, 2), (3, 2), (2, 4), (0, 4)]
    boot = bootstrap_pairs(labels, gold, pairs, clusters=Clusters(codes, 7, "query_id"), n_resamples=300, seed=5)
    assert boot.mirrors().tolist() == [-1, -1, 0, 0, -1, -1, 1, 5, -1]  # (0, 1) again: its reverses are mirrors
    intervals = raw_intervals(boot)
    direct = direct_bounds(boot)
    for f in FIGURES:
        assert [iv[f] for iv in intervals] == direct[f], f
    # what the mirror takes really is the partner's other figure, and it is not trivially so
    reg, back = boot.values("regression_rate"), boot.values("backward_rate")
    np.testing.assert_array_equal(reg[:, 2], back[:, 0])
    assert not np.array_equal(reg[:, 2], reg[:, 0])
    assert set(mirrored()) | {"accuracy_difference"} < set(FIGURES)


def test_counts_that_do_not_mirror_are_computed_in_full():
    """An edge (b, a) is a mirror only if its per-cluster counts are (a, b)'s swapped, count by count; the item
    bootstrap (each edge drawn on its own) has none."""
    rng = np.random.default_rng(8)
    per_cluster = rng.integers(0, 20, (6, 2, 5))
    per_cluster[:, 1] = per_cluster[:, 0][:, [0, 2, 1, 3, 4]]
    per_cluster[3, 1, 0] += 1  # one count off
    weights = rng.integers(0, 3, (50, 6))
    reps = np.einsum("bg,gpk->bpk", weights, per_cluster)
    boot = PairBootstrap(((0, 1), (1, 0)), reps, CLUSTER_METHOD, "query_id", 6, 0.95, 0, per_cluster=per_cluster)
    assert boot.mirrors().tolist() == [-1, -1]
    intervals = raw_intervals(boot)
    direct = direct_bounds(boot)
    for f in FIGURES:
        assert [iv[f] for iv in intervals] == direct[f], f
    labels, gold, _ = small_release(seed=4, runs=3)
    items = bootstrap_pairs(labels, gold, [(0, 1), (1, 0)], n_resamples=100, seed=1)
    assert items.mirrors().tolist() == [-1, -1]


def test_no_parsed_label_gives_zero_counts_on_both_paths():
    """Every label unparsed (a strict parser reads none): under intersect every count is 0, under wrong every
    item is 'neither' or counted as wrong, on the Gram path and the mask path alike (the Gram path used to
    fail stacking no label values)."""
    from replicate.parsing import UNPARSED

    runs, n = 4, 12
    labels = np.full((runs, n), UNPARSED, dtype=np.int64)
    gold = np.ones(n, dtype=np.int64)
    codes = np.arange(n) % 3
    every = [(i, j) for i in range(runs) for j in range(runs) if i != j]
    for policy, want in (("intersect", [0, 0, 0, 0, 0]), ("wrong", [0, 0, 0, 4, 0])):
        full = cluster_category_counts(labels, gold, every, codes, 3, policy=policy)
        part = cluster_category_counts(labels, gold, every[:2], codes, 3, policy=policy)
        assert (full == np.array(want)).all() and (part == full[:, :2]).all(), policy
