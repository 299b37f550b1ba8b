"""The conditional Rasch fit of the difficulty baseline against a plain fit, plain sums over response patterns
and a dense solver: cold fits, refits from a predicted start, chord steps, the arrow solver."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from replicate.stats import band_cholesky, rasch
from replicate.stats.independence_boot import full_sample, refit
from support.rasch_plain import esf, plain_fit


def random_cells(rng, K: int, *, empty: int | None = None) -> np.ndarray:
    """(4, K) counts with a finite maximum: every pattern of the middle bins holds items; bin ``empty`` none."""
    means = rng.uniform(2, 30, size=(4, K)) * np.exp(rng.normal(0, 0.5, size=(4, 1)))
    cells = rng.poisson(means).astype(np.float64)
    cells[:, 1:-1] = np.maximum(cells[:, 1:-1], 1)
    if empty is not None:
        cells[:, empty] = 0
    return cells


def assert_matches_plain(cells: np.ndarray, reg: float, prog: float) -> None:
    want_reg, want_prog, _, _ = plain_fit(cells)
    assert reg == pytest.approx(want_reg, rel=1e-10)
    assert prog == pytest.approx(want_prog, rel=1e-10)


@pytest.mark.parametrize("K", [3, 5, 9])
def test_cold_fits_match_a_plain_newton_fit(K):
    rng = np.random.default_rng(K)
    rows = [random_cells(rng, K, empty=(None if r % 3 else r % K)) for r in range(12)]
    s = rasch.strata(np.stack(rows))
    theta, done = rasch.fit(s)
    assert done.all()
    reg, prog = rasch.expected(theta, s)
    for cells, a, b in zip(rows, reg, prog):
        assert_matches_plain(cells, a, b)
    # alpha against the plain fit's
    for cells, th in zip(rows, theta):
        assert th[0] == pytest.approx(plain_fit(cells)[2], abs=1e-9)


def test_refits_from_the_predicted_start_match_a_plain_fit():
    """Replicates of 3 edges refit from each edge's full-sample fit moved by one chord step; some replicates
    empty a bin (no predicted start) or change the fullest bin."""
    rng = np.random.default_rng(5)
    K, P, B = 6, 3, 8
    full = np.stack([random_cells(rng, K) * 4 for _ in range(P)])  # (P, 4, K)
    s_full = rasch.strata(full)
    theta, _ = rasch.fit(s_full)
    reps = rng.poisson(np.broadcast_to(full, (B, P, 4, K))).astype(np.float64)
    reps[:, :, :, 1:-1] = np.maximum(reps[:, :, :, 1:-1], 1)
    reps[0, 1, :, 0] = 0  # an emptied bin
    reps[1, 2, :, 2] *= 3  # another fullest bin
    s = rasch.strata(reps)
    reg, prog, regressed, progressed, items = refit(s, B, *full_sample(s_full, theta))
    for b, p in itertools.product(range(B), range(P)):
        assert_matches_plain(reps[b, p], reg[b, p], prog[b, p])
        assert regressed[b, p] == reps[b, p, 2].sum() and progressed[b, p] == reps[b, p, 1].sum()
        assert items[b, p] == reps[b, p].sum()


def test_chord_steps_change_no_fit(monkeypatch):
    """Fits with chord steps (the default) equal fits by Newton steps only."""
    rng = np.random.default_rng(9)
    s = rasch.strata(np.stack([random_cells(rng, 7, empty=(3 if r % 4 == 0 else None)) for r in range(40)]))
    theta, _ = rasch.fit(s)
    monkeypatch.setattr(rasch, "_CHORD_STEP", -1.0)
    newton_only, _ = rasch.fit(s)
    np.testing.assert_allclose(rasch.expected(theta, s), rasch.expected(newton_only, s), rtol=1e-11)


def test_the_model_is_the_rasch_model_given_each_items_total():
    """Judges right with probability expit(a_j - d): summed over every response pattern of an item, the share of
    (old right, new wrong) among the patterns of each total is what the fit's formula gives with
    ``alpha = a_old - a_new`` and ``g_k = e_k(exp(a_others)) exp(-k a_new)`` (elementary symmetric functions)."""
    abilities = [0.4, -0.3, 0.9, -1.2, 0.1, 0.5]  # old, new, then four other runs
    m = len(abilities) - 2
    totals = {t: 0.0 for t in range(m + 3)}
    regress = dict(totals)
    for d in (-1.0, 0.3, 2.0):  # any item difficulty: it cancels given the total
        p = [1 / (1 + math.exp(-(a - d))) for a in abilities]
        by_total = dict.fromkeys(totals, 0.0)
        reg_by_total = dict.fromkeys(totals, 0.0)
        for right in itertools.product((0, 1), repeat=len(abilities)):
            prob = math.prod(pj if r else 1 - pj for pj, r in zip(p, right))
            by_total[sum(right)] += prob
            reg_by_total[sum(right)] += prob * (right[0] == 1 and right[1] == 0)
        for t in totals:
            totals[t] += 10.0  # ten items of each total
            regress[t] += 10.0 * reg_by_total[t] / by_total[t]
    n = np.array([[totals[t]] for t in range(m + 3)])  # (K + 2, 1)
    K = m + 1
    g = [e * math.exp(-k * abilities[1]) for k, e in enumerate(esf([math.exp(a) for a in abilities[2:]]))]
    theta = np.array([[abilities[0] - abilities[1], *np.log(g)]])
    items = n.sum()  # only n enters the expected count (h, old and new only rule out the limits)
    half = np.array([items / 2])
    s = rasch.Strata(np.full((K, 1), items / K), n, half, half, np.array([10.0]))
    reg, _ = rasch.expected(theta, s)
    assert reg[0] == pytest.approx(sum(regress.values()), rel=1e-12)


@pytest.mark.parametrize("K", [1, 2, 3, 8])
def test_the_arrow_solver_matches_a_dense_solve(K):
    rng = np.random.default_rng(K)
    r = 7
    dense = np.zeros((r, K + 1, K + 1))
    for j in range(r):
        a = rng.normal(size=(K + 1, K + 1))
        band = np.abs(np.subtract.outer(np.arange(K), np.arange(K))) <= 2
        m = a @ a.T
        m[1:, 1:] *= band
        m += np.eye(K + 1) * (K + 2) * 4  # positive definite
        dense[j] = m
    i = np.arange(K)
    f = band_cholesky.factor(
        dense[:, 1 + i, 1 + i].T.copy(),
        dense[:, 1 + i[:-1], 2 + i[:-1]].T.copy(),
        dense[:, 1 + i[:-2], 3 + i[:-2]].T.copy(),
        dense[:, 1:, 0].T.copy(),
        dense[:, 0, 0].copy(),
        np.zeros(r),
    )
    rhs = rng.normal(size=(r, K + 1))
    got = band_cholesky.solve(f, rhs[:, 1:].T.copy(), rhs[:, 0].copy()).T
    want = np.linalg.solve(dense, rhs[..., None])[..., 0]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_a_singular_information_predicts_no_move():
    """An edge whose old side is always right: its information at the bound is singular to rounding; its
    inverse is finite or zero, and the refit still takes the limit."""
    rng = np.random.default_rng(1)
    cells = random_cells(rng, 4)
    cells[[0, 1]] = 0  # old always right
    s_full = rasch.strata(cells[None])
    theta, _ = rasch.fit(s_full)
    inverse = rasch.inverse_information(theta, s_full)
    assert np.isfinite(inverse).all()
    reps = np.stack([cells, cells + 1])[:, None]
    s = rasch.strata(reps)
    reg, _, _, _, items = refit(s, 2, *full_sample(s_full, theta))
    assert reg[0, 0] == cells[2].sum()  # every item the new side has wrong is a regression
    assert_matches_plain(reps[1, 0], reg[1, 0], refit(s, 2, *full_sample(s_full, theta))[1][1, 0])


def test_columns_are_the_strata_of_the_cells():
    rng = np.random.default_rng(4)
    cells = rng.integers(0, 9, size=(3, 5, 4, 6)).astype(np.float32)
    got = rasch.from_columns(rasch.columns(cells).reshape(-1, 17))
    want = rasch.strata(cells)
    for a, b in zip((got.h, got.n, got.old, got.new, got.regressed), (want.h, want.n, want.old, want.new, want.regressed)):
        np.testing.assert_array_equal(a, b)
    # by hand, one row: items by k, by total, old right, new right, regressed
    c = cells[1, 2].astype(np.float64)
    row = rasch.columns(cells)[1, 2]
    np.testing.assert_array_equal(row[:6], c.sum(axis=0))
    n = np.zeros(8)
    for x, y in itertools.product((0, 1), repeat=2):
        n[x + y : x + y + 6] += c[2 * x + y]
    np.testing.assert_array_equal(row[6:14], n)
    assert (row[14], row[15], row[16]) == (c[2:].sum(), c[1].sum() + c[3].sum(), c[2].sum())


def test_items_only_in_an_end_stratum_leave_the_fit_at_once():
    """A bin whose items all sit in an end stratum (every run wrong, or every run right) has its maximum at
    g = 0: the fit says so at once (no creeping towards it, a bounded step at a time) and gives the plain fit
    of the counts without those items, which carry no information given their totals."""
    rng = np.random.default_rng(21)
    K = 7
    rows = [random_cells(rng, K) for _ in range(10)]
    for r, cells in enumerate(rows):
        cells[1:, 0] = 0  # bin 0 (no other run right): only items with both sides wrong (total 0)
        cells[0, 0] = max(cells[0, 0], 1)
        if r % 2:
            cells[:3, K - 1] = 0  # and bin K - 1 (every other run right): only both sides right (total K + 1)
    s = rasch.strata(np.stack(rows))
    theta, done = rasch.fit(s, max_steps=12)
    assert done.all()
    reg, prog = rasch.expected(theta, s)
    for r, cells in enumerate(rows):
        told = cells.copy()
        told[0, 0] = 0
        if r % 2:
            told[3, K - 1] = 0
        assert_matches_plain(told, reg[r], prog[r])
        assert theta[r, 1] == -rasch._BOUND  # g_0 = 0


def test_certain_strata_cascade_out_of_the_fit():
    """Strata that hold one possible pattern once a bin is found empty: bin K - 1 holds no item, bin K - 2
    only items with both sides right (total K, which then only that pattern can reach), bin K - 3 some items
    with both sides right too (total K - 1, which bins K - 1 and K - 2 no longer reach). Each of those
    strata is certain given its total; bin K - 2 is then as empty as bin K - 1 (its maximum is g = 0). The
    fit converges at once to the plain fit of the counts without the certain items; before, it crept
    towards g = 0 a bounded step at a time and stopped at its step limit with scores above the tolerance."""
    rng = np.random.default_rng(33)
    K = 8
    rows = [random_cells(rng, K) for _ in range(6)]
    for cells in rows:
        cells[:, K - 1] = 0
        cells[:3, K - 2] = 0
        cells[3, K - 2] = max(cells[3, K - 2], 2)
    s = rasch.strata(np.stack(rows))
    theta, done = rasch.fit(s, max_steps=20)
    assert done.all()
    reg, prog = rasch.expected(theta, s)
    for r, cells in enumerate(rows):
        told = cells.copy()
        told[3, K - 2] = 0  # total K: certain
        told[3, K - 3] = 0  # total K - 1: certain once bin K - 2 is out
        assert_matches_plain(told, reg[r], prog[r])
    told = rasch.informative(s)
    np.testing.assert_array_equal(told.h[K - 2], 0)
    np.testing.assert_array_equal(told.n[K - 1 :], 0)


_Z = [0] * 7
#: Cells of one edge of a 44-run synthetic release whose lower bins' maximum lies far out.
FAR_OUT = np.array([
    _Z + [2, 1, 3, 5, 5, 7, 19, 29, 31, 40, 52, 68, 82, 110, 144, 113, 184, 138, 158, 148, 137, 123, 103,
         75, 80, 48, 33, 27, 18, 6, 2, 2, 0, 0, 0, 0],
    _Z + [1, 1, 0, 0, 1, 3, 11, 9, 12, 21, 31, 35, 42, 60, 84, 77, 99, 111, 128, 138, 120, 136, 146, 101,
         74, 89, 66, 55, 32, 13, 13, 4, 6, 0, 1, 0],
    _Z + [0, 0, 0, 0, 1, 8, 12, 8, 18, 26, 26, 50, 72, 87, 126, 132, 173, 217, 253, 260, 289, 299, 286,
         294, 241, 204, 138, 75, 74, 42, 32, 12, 9, 0, 2, 0],
    _Z + [1, 0, 0, 0, 0, 1, 2, 4, 6, 13, 16, 24, 41, 51, 63, 76, 102, 126, 156, 185, 235, 237, 255, 246,
         240, 216, 178, 171, 126, 84, 71, 41, 17, 14, 4, 0],
], dtype=np.float64)


def test_a_maximum_far_out_is_reached_within_the_bounds():
    """Counts of an edge of a 44-run synthetic release (one per bin of the other runs' count, by cell)
    whose lower bins' maximum lies further than 60 apart (the old bound): the fit converges to its
    tolerance (it stalled at the bound with scores of about 1e-3) and its expected counts are those of
    the items' totals (regressions and progressions add to the discordant items' expectation)."""
    cells = FAR_OUT
    s = rasch.strata(cells[None])
    theta, done = rasch.fit(s)
    assert done.all()
    told = rasch.informative(s)
    rows = rasch.steps.rows_of(told, told.h > 0, rasch._pinned(told.h))
    sa, sl, _ = rasch.steps.scores(np.ascontiguousarray(theta.T), rows, rasch.steps.Work())
    assert max(abs(sa[0]), np.abs(sl * rows.free).max()) <= rasch.TOLERANCE * cells.sum()
    assert np.abs(theta).max() > 60



def test_extended_steps_change_no_fit_and_walk_out_faster(monkeypatch):
    """Steps that repeat themselves (a walk towards a maximum at infinity) are doubled while the likelihood
    rises: the fit of the far-out counts ends at the same expected counts as plain Newton steps, in fewer
    steps (plain steps take over 25 here)."""
    s = rasch.strata(FAR_OUT[None])
    theta, done = rasch.fit(s, max_steps=20)
    assert done.all()
    monkeypatch.setattr(rasch, "_MAX_WALK", 1.0)
    assert not rasch.fit(s, max_steps=20)[1].any()
    plain, plain_done = rasch.fit(s)
    assert plain_done.all()
    np.testing.assert_allclose(rasch.expected(theta, s), rasch.expected(plain, s), rtol=1e-10)


@pytest.mark.parametrize("pause_below", [2, 8, 1000])
def test_rows_set_aside_and_stepped_on_together_fit_as_alone(pause_below):
    """Three fits of replicate-like rows (one with an empty middle bin, one with fewer bins used, one with a
    far-out maximum) set aside once fewer than ``pause_below`` rows are still stepping, then stepped on
    together (:func:`rasch.resume`): every row's parameters and its converged flag are bit for bit those of
    each fit run to its end alone, also where the step bound stops some rows."""
    rng = np.random.default_rng(21)
    K = FAR_OUT.shape[1]
    fits = []
    for j in range(3):
        rows = [random_cells(rng, K, empty=(5 if j == 0 and r % 3 == 0 else None)) for r in range(12)]
        if j == 1:
            rows = [np.concatenate([c[:, : K - 4], np.zeros((4, 4))], axis=1) for c in rows]
        if j == 2:
            rows[4] = FAR_OUT.copy()
        fits.append(rasch.strata(np.stack(rows)))
    for max_steps in (rasch.MAX_STEPS, 4):
        work = rasch.steps.Work()
        want = [rasch.fit(s, max_steps=max_steps, work=work) for s in fits]
        begun = [rasch.fit_paused(s, max_steps=max_steps, work=work, pause_below=pause_below) for s in fits]
        paused = [p for _, _, p in begun if p is not None]
        assert paused or pause_below < 1000  # every fit set aside after its first step
        finished = iter(rasch.resume(paused, max_steps=max_steps, work=work))
        for (theta, done), (got, got_done, p) in zip(want, begun):
            if p is not None:
                th, d = next(finished)
                got[np.ix_(p.todo, p.params)] = th.T
                got_done[p.todo] = d
            np.testing.assert_array_equal(got, theta)
            np.testing.assert_array_equal(got_done, done)
        if max_steps == 4:
            assert not all(d.all() for _, d in want)  # the bound stopped some rows
