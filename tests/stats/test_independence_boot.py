"""Intervals of the difficulty-aware baseline: each replicate refit, against a plain loop and by simulation."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy.stats import t as t_dist

from replicate.stats.bootstrap import Clusters, bootstrap_pairs, cluster_weights, percentile_bounds
from replicate.stats.independence import (
    DifficultyBaseline,
    DifficultyCounts,
    difficulty_count_chunks,
    difficulty_counts,
    fit_difficulty,
)
from replicate.stats.independence_boot import (
    cluster_difficulty,
    cluster_difficulty_replicates,
    item_difficulty_replicates,
    log_t_bounds,
    mirrored_edges,
)
from support.rasch_reference import plain_expected


def clustered_judges(rng, n_judges: int, queries: int, per_query: int, *, spread: float = 1.2, unparsed: float = 0.0):
    """Judges right with probability expit(skill - difficulty), independent given the item; items share a query's difficulty."""
    n = queries * per_query
    codes = np.repeat(np.arange(queries), per_query)
    difficulty = rng.normal(0, spread, queries)[codes] + rng.normal(0, 0.5, n)
    skill = rng.normal(0, 0.3, n_judges)
    right = rng.random((n_judges, n)) < 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    labels = np.where(right, 0, 1 + (rng.random((n_judges, n)) < 0.5)).astype(np.int8)
    labels[rng.random(labels.shape) < unparsed] = -1
    return labels, np.zeros(n, np.int16), codes


def _six_runs_in_clusters(seed: int, weights_seed: int):
    """6 runs x 11 clusters of a seeded release, 5 edges, 40 replicates' weights: (labels, gold, codes, pairs,
    clusters, weights, the baseline and the replicates from every cluster's counts at once)."""
    labels, gold, codes = clustered_judges(np.random.default_rng(seed), 6, 11, 6, unparsed=0.03)
    pairs = [(0, 1), (1, 0), (2, 3), (3, 2), (4, 5)]
    G, B = 11, 40
    weights = cluster_weights(np.random.default_rng(weights_seed), G, B)
    counts = difficulty_counts(labels, gold, pairs, codes=codes, n_clusters=G)
    base = fit_difficulty(counts, pairs, 6)
    return labels, gold, codes, pairs, G, weights, base, cluster_difficulty_replicates(counts, base, weights)


def test_clusters_read_a_chunk_at_a_time_give_the_same_fit_and_replicates(monkeypatch):
    """The baseline and its replicates from chunks of 4 of 11 clusters (summed as they come; the mirrors
    checked chunk by chunk) equal those of every cluster's counts at once, bit for bit: the sums are exact
    integers."""
    import replicate.stats.independence as independence

    labels, gold, codes, pairs, G, weights, base, want = _six_runs_in_clusters(12, 3)
    monkeypatch.setattr(independence, "_CLUSTER_CHUNK", 4)
    got_base, got = cluster_difficulty(
        lambda: difficulty_count_chunks(labels, gold, pairs, codes=codes, n_clusters=G), pairs, 4, weights
    )
    np.testing.assert_array_equal(got_base.expected, base.expected)
    np.testing.assert_array_equal(got_base.theta, base.theta)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(got[0]).all()


@pytest.mark.parametrize("clusters_a_chunk", [1, 3])
@pytest.mark.parametrize("product_bytes", [1, 1 << 25])
def test_chunks_bounded_in_bytes_hold_fewer_clusters_and_give_the_same_replicates(
    monkeypatch, clusters_a_chunk, product_bytes
):
    """With the chunks' bytes bounded to ``clusters_a_chunk`` clusters' cells (as many runs do), every chunk
    holds at most that many clusters and the baseline and its replicates are bit for bit those of every
    cluster's counts at once, whether the chunks' columns are multiplied by their weights a chunk at a time
    (``product_bytes`` 1) or all in one product."""
    import replicate.stats.independence as independence
    import replicate.stats.independence_boot as independence_boot

    monkeypatch.setattr(independence_boot, "_PRODUCT_BYTES", product_bytes)

    labels, gold, codes, pairs, G, weights, base, want = _six_runs_in_clusters(5, 4)
    # bytes of one cluster's Gram products (R + 1, 2R, 2R) and cells (4, K, P), float32, at R = 6 runs
    per_cluster = 4 * 7 * 12 * 12 + 4 * 4 * (6 - 1) * len(pairs)
    monkeypatch.setattr(independence, "_CHUNK_BYTES", per_cluster * clusters_a_chunk + per_cluster // 2)
    chunks = list(difficulty_count_chunks(labels, gold, pairs, codes=codes, n_clusters=G))
    assert [len(c) for c in chunks][:-1] == [clusters_a_chunk] * (len(chunks) - 1) and sum(map(len, chunks)) == G
    got_base, got = cluster_difficulty(
        lambda: difficulty_count_chunks(labels, gold, pairs, codes=codes, n_clusters=G), pairs, 4, weights
    )
    np.testing.assert_array_equal(got_base.theta, base.theta)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_a_reverse_edge_that_does_not_mirror_is_summed_and_refit_on_its_own():
    """Counts whose edge (1, 0) is not (0, 1)'s with the sides swapped (the first pass sums only edges
    without an earlier reverse): the pass is made again over every edge, and the replicates are those of
    every cluster's counts at once."""
    rng = np.random.default_rng(8)
    G, K, pairs = 7, 4, ((0, 1), (1, 0))
    cells = rng.integers(1, 9, size=(G, 4, K, 2)).astype(np.float32)
    counts = DifficultyCounts(pairs, cells, K - 1)
    base = fit_difficulty(counts, pairs, K + 1)
    weights = cluster_weights(np.random.default_rng(1), G, 30)
    got_base, got = cluster_difficulty(lambda: [cells[:3], cells[3:]], pairs, K - 1, weights)
    np.testing.assert_array_equal(got_base.expected, base.expected)
    for a, b in zip(got, cluster_difficulty_replicates(counts, base, weights)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got[0][:, 0], got[0][:, 1])


def test_cluster_replicates_equal_a_plain_loop_over_the_same_draws():
    rng = np.random.default_rng(4)
    labels, gold, codes = clustered_judges(rng, 5, 9, 5, unparsed=0.04)
    pairs = [(0, 1), (3, 2), (4, 0)]
    G, B, seed = 9, 60, 7
    counts = difficulty_counts(labels, gold, pairs, codes=codes, n_clusters=G)
    base = fit_difficulty(counts, pairs, 5)
    weights = cluster_weights(np.random.default_rng(seed), G, B)
    rate, ratio = cluster_difficulty_replicates(counts, base, weights)
    # the edges' own bootstrap with the same seed draws the same clusters: same regressed counts
    boot = bootstrap_pairs(labels, gold, pairs, clusters=Clusters(codes, G, "query"), n_resamples=B, seed=seed)
    members = [np.flatnonzero(codes == c).tolist() for c in range(G)]
    draws = np.random.default_rng(seed)
    plain_rate = np.full((B, len(pairs)), np.nan)
    plain_ratio = np.full((B, len(pairs)), np.nan)
    for r in range(B):
        items = [i for c in draws.integers(G, size=G) for i in members[c]]
        for p, (a, b) in enumerate(pairs):
            exp, regressed, n = plain_expected(labels, gold, a, b, items)
            assert regressed == boot.replicates[r, p, 1] and n == boot.replicates[r, p].sum()
            if exp is not None:
                plain_rate[r, p] = exp / n
                plain_ratio[r, p] = np.nan if exp == 0 else regressed / exp
    assert np.array_equal(np.isnan(rate), np.isnan(plain_rate))
    # the fit stops with every score within 1e-12 of the items; where old right never comes without new right
    # the likelihood's maximum is at infinity and the expected rate below 1e-9 (the plain loop's ~1e-17), not 0
    np.testing.assert_allclose(rate, plain_rate, rtol=1e-9, atol=1e-9, equal_nan=True)
    np.testing.assert_allclose(ratio, plain_ratio, rtol=1e-9, equal_nan=True)
    for ours, plain in ((rate, plain_rate), (ratio, plain_ratio)):
        np.testing.assert_allclose(percentile_bounds(ours, 0.95)[:2], percentile_bounds(plain, 0.95)[:2], rtol=1e-9)


def _edges(counts, base, idx):
    """The counts and fitted shifts of some of the edges (the same bits: nothing refit)."""
    pairs = tuple(counts.pairs[p] for p in idx)
    return (DifficultyCounts(pairs, counts.cells[..., idx], counts.other_runs),
            DifficultyBaseline(pairs, base.expected[idx], base.other_runs, base.theta[idx]))


def test_a_reverse_edge_takes_its_refits_from_its_partner_bit_for_bit():
    """Edge (b, a) after (a, b) is not refit but read off (a, b)'s refit (its expected progressions): what refitting
    it gives, to rounding; a reverse edge whose counts are not its partner's swapped is refit."""
    rng = np.random.default_rng(11)
    labels, gold, codes = clustered_judges(rng, 6, 12, 6, unparsed=0.05)
    pairs = [(a, b) for a in range(6) for b in range(6) if a != b]  # each reverse after its partner or before
    counts = difficulty_counts(labels, gold, pairs, codes=codes, n_clusters=12)
    base = fit_difficulty(counts, pairs, 6)
    weights = cluster_weights(np.random.default_rng(3), 12, 150)
    partner = mirrored_edges(counts.pairs, counts.cells)
    assert [(pairs[k], pairs[j]) for k, j in enumerate(partner) if j >= 0] == [((a, b), (b, a)) for a, b in pairs if a > b]
    rate, ratio = cluster_difficulty_replicates(counts, base, weights)
    later = [k for k in range(len(pairs)) if partner[k] >= 0]
    alone_rate, alone_ratio = cluster_difficulty_replicates(*_edges(counts, base, later), weights)  # no partners
    np.testing.assert_allclose(rate[:, later], alone_rate, rtol=1e-9)
    np.testing.assert_allclose(ratio[:, later], alone_ratio, rtol=1e-9)
    assert np.isfinite(alone_ratio).mean() > 0.9
    # one reverse edge's counts moved (one item right-right -> right-wrong, one wrong-wrong -> wrong-right:
    # the same bins and right counts): it is refit
    cells = counts.cells.copy()
    k = later[3]
    c, t = np.argwhere((cells[:, 0, :, k] > 0) & (cells[:, 3, :, k] > 0))[0]
    cells[c, :, t, k] += np.array([-1, 1, 1, -1], dtype=cells.dtype)
    odd = DifficultyCounts(counts.pairs, cells, counts.other_runs)
    assert mirrored_edges(odd.pairs, odd.cells)[k] == -1
    _, ratio3 = cluster_difficulty_replicates(odd, base, weights)
    _, direct3 = cluster_difficulty_replicates(*_edges(odd, base, [k]), weights)
    np.testing.assert_allclose(ratio3[:, [k]], direct3, rtol=1e-12)  # to rounding: sums over bins of another width
    assert not np.allclose(ratio3[:, k], ratio[:, k], rtol=1e-6)


def test_every_weight_once_gives_the_full_sample_fit():
    rng = np.random.default_rng(2)
    labels, gold, codes = clustered_judges(rng, 7, 30, 8)
    pairs = [(i, j) for i in range(7) for j in range(7) if i != j]
    counts = difficulty_counts(labels, gold, pairs, codes=codes, n_clusters=30)
    base = fit_difficulty(counts, pairs, 7)
    rate, _ = cluster_difficulty_replicates(counts, base, np.ones((1, 30), dtype=np.int64))
    # a reverse edge reads its partner's fit, which met the tolerance (1e-12 of the items) on its own
    np.testing.assert_allclose(rate[0], base.expected, rtol=1e-9)
    # the per-cluster counts sum to the one-cluster counts the point fit reads
    assert np.array_equal(counts.cells.sum(axis=0), difficulty_counts(labels, gold, pairs).cells[0])


def test_item_bootstrap_splits_the_edges_own_replicates():
    rng = np.random.default_rng(5)
    labels, gold, _ = clustered_judges(rng, 6, 40, 10)
    pairs = [(0, 1), (2, 5)]
    counts = difficulty_counts(labels, gold, pairs)
    base = fit_difficulty(counts, pairs, 6)
    boot = bootstrap_pairs(labels, gold, pairs, n_resamples=400, seed=3)
    rate, ratio = item_difficulty_replicates(np.random.default_rng(1), counts, base, boot.replicates)
    lo, hi, undefined = percentile_bounds(rate, 0.95)
    assert (undefined == 0).all() and (lo < base.expected).all() and (base.expected < hi).all()
    # the ratio's numerator is each replicate's own regressed count: ratio * expected * n = regressed
    n = boot.replicates.sum(axis=2)
    np.testing.assert_allclose(ratio * rate * n, boot.replicates[:, :, 1], rtol=1e-9)


# -- coverage by simulation ---------------------------------------------------------
#
# Judges independent given the item, items clustered by query. The truth is the
# baseline's value on the population (the limit of the statistic as queries grow):
# its value on one very large release from the same model; the ratio's is 1.
JUDGES, QUERIES, PER_QUERY = 5, 40, 5


def _release(rng, queries: int):
    return clustered_judges(rng, JUDGES, queries, PER_QUERY)


def test_nominal_95_percent_intervals_of_the_difficulty_baseline_cover_about_95_percent():
    rng = np.random.default_rng(11)
    skill_rng = np.random.default_rng(0)  # the same judges in every release: a fixed population
    skill = skill_rng.normal(0, 0.3, JUDGES)

    def release(queries):
        n = queries * PER_QUERY
        codes = np.repeat(np.arange(queries), PER_QUERY)
        difficulty = rng.normal(0, 1.2, queries)[codes] + rng.normal(0, 0.5, n)
        right = rng.random((JUDGES, n)) < 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
        return np.where(right, 0, 1).astype(np.int8), np.zeros(n, np.int16), codes

    labels, gold, codes = release(40_000)
    big = fit_difficulty(difficulty_counts(labels, gold, [(0, 1)]), [(0, 1)], JUDGES)
    truth_rate = float(big.expected[0])
    truth_ratio = 1.0  # independent given the item: the ratio's population value
    hits = np.zeros(2)
    releases = 400
    for r in range(releases):
        labels, gold, codes = release(QUERIES)
        counts = difficulty_counts(labels, gold, [(0, 1)], codes=codes, n_clusters=QUERIES)
        base = fit_difficulty(counts, [(0, 1)], JUDGES)
        rate, ratio = cluster_difficulty_replicates(counts, base, cluster_weights(np.random.default_rng(r), QUERIES, 400))
        lo, hi, _ = percentile_bounds(rate, 0.95)
        hits[0] += lo[0] <= truth_rate <= hi[0]
        lo, hi, _ = log_t_bounds(ratio, base.ratio, QUERIES, 0.95)  # the ratio's interval as printed
        hits[1] += lo[0] <= truth_ratio <= hi[0]
    shares = hits / releases
    # 400 releases: a share's standard error is about 1.1 points
    assert ((0.91 <= shares) & (shares <= 0.98)).all(), shares


def test_log_t_bounds_match_a_plain_computation():
    rng = np.random.default_rng(6)
    values = np.exp(rng.normal(0, 0.1, (300, 3)))
    values[:7, 1] = np.nan  # undefined replicates
    values[:3, 2] = 0.0  # no regression drawn: no log
    point = np.array([1.02, 0.9, 1.1])
    lo, hi, undefined = log_t_bounds(values, point, 12, 0.9)
    q = t_dist.ppf(0.95, 11) * math.sqrt(12 / 11)
    for j in range(3):
        logs = [math.log(v) for v in values[:, j] if v > 0]  # NaN > 0 is False
        sd = statistics.stdev(logs)
        assert lo[j] == pytest.approx(point[j] * math.exp(-q * sd), rel=1e-12)
        assert hi[j] == pytest.approx(point[j] * math.exp(q * sd), rel=1e-12)
    assert undefined.tolist() == [0, 7, 3]
    lo, hi, _ = log_t_bounds(values, np.array([np.nan, 0.0, 1.0]), 12, 0.9)
    assert np.isnan(lo[:2]).all() and np.isnan(hi[:2]).all() and lo[2] < 1 < hi[2]


@pytest.mark.parametrize("pause", [2, 10**6])
def test_rows_set_aside_from_every_block_give_the_same_replicates(monkeypatch, pause):
    """Blocks of 4 replicates whose last rows still stepping (fewer than ``pause``; every row after its
    first step with 10**6) are stepped on together after the last block: every replicate is bit for bit
    that of each block fit to its end alone (``_PAUSE`` 0), the mirrors read off as before."""
    import replicate.stats.independence_boot as independence_boot

    labels, gold, codes, pairs, G, weights, base, _ = _six_runs_in_clusters(9, 2)
    counts = difficulty_counts(labels, gold, pairs, codes=codes, n_clusters=G)
    monkeypatch.setattr(independence_boot, "_ROWS", 4 * len(pairs))
    monkeypatch.setattr(independence_boot, "_PAUSE", 0)
    want = cluster_difficulty_replicates(counts, base, weights)
    monkeypatch.setattr(independence_boot, "_PAUSE", pause)
    got = cluster_difficulty_replicates(counts, base, weights)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(got[0]).all()
