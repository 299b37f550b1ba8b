"""Bootstrap replicates of the difficulty-aware baseline: the fit redone in every replicate (pure, vectorised).

The fit of :func:`replicate.stats.independence.difficulty_baseline` reads only
counts (:class:`~replicate.stats.independence.DifficultyCounts`): per edge,
its items by how many other runs are right (``h``, K bins), and how many of
them each side has right (``O``, ``N``). A replicate's counts are the
clusters' counts weighted by how often each cluster was drawn (``W @ counts``,
the draws of :func:`replicate.stats.bootstrap.bootstrap_pairs` with the same
seed, so the edge's own regression rate moves with the baseline and the ratio
is resampled jointly). For the item bootstrap, each replicate's category
counts (the edges' own multinomial draws) are split over the K bins by a
seeded multinomial given the category: the same distribution as drawing the
items, and the same draws as the edge's other figures.

Each replicate then refits both sides' shifts: the theta with
``sum_k h_k expit(l_k + theta) = O`` (and ``N``), by Newton's method from the
full-sample theta. ``expit(l_k + theta + d)`` is expanded in ``d`` around the
full-sample theta (:data:`TERMS` terms; the series converges for ``|d| < pi``
and is used only for ``|d| <=`` :data:`RADIUS`, where its error is below
1e-11 of the edge's items), so every replicate's function of theta is one
small matrix product of its counts; a replicate the series does not fit to
the tolerance is refit exactly. With both shifts, the expected regression
count of errors independent given the item has a closed form::

    sum_k h_k q_old,k (1 - q_new,k) = (N - O) / (exp(theta_new - theta_old) - 1)

(partial fractions of the two logistic terms, using both fitted sums), and
``sum_k h_k q_k (1 - q_k)`` when ``N = O``.

An edge ``(b, a)`` of a matrix reads what ``(a, b)`` reads with the sides
swapped (the same bins; old right is the other's new right); where its counts
and full-sample shifts are exactly that, its replicates are read off the
other's refit shifts, swapped, instead of being refit (the same values).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from replicate.stats.bootstrap import reverse_partners
from replicate.stats.independence import DifficultyBaseline, DifficultyCounts, _expit, smoothed_logits

#: Terms of the series of expit around the full-sample shift, and the shift change up to which it is used.
TERMS = 10
RADIUS = 0.25
TOLERANCE = 1e-10  # |sum h q - target| <= TOLERANCE * max(n, 1), as the full-sample fit
EXACT_TOLERANCE = 1e-13  # the exact refit goes on to here (a step or two more): the closed form divides by a difference
NEWTON_STEPS = 2
_ROWS = 32768  # (replicate, edge) rows refit at once


def _block(n_edges: int) -> int:
    return max(1, _ROWS // max(n_edges, 1))


def sigmoid_series(x0: np.ndarray, terms: int = TERMS) -> np.ndarray:
    """Coefficients ``a[..., j]`` with ``expit(x0 + d) = sum_j a_j d**j`` (from ``s' = s - s**2``)."""
    a = np.empty(np.shape(x0) + (terms,))
    a[..., 0] = _expit(np.asarray(x0, dtype=np.float64))
    for n in range(terms - 1):
        conv = sum(a[..., i] * a[..., n - i] for i in range(n + 1))
        a[..., n + 1] = (a[..., n] - conv) / (n + 1)
    return a


def solve_series(M: np.ndarray, target: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row, the shift change d with ``sum_j M[:, j] d**j = target``: (d, derivative at d, fitted to tolerance).

    ``M`` is (B, TERMS, P), ``target`` and ``n`` (B, P). The start solves the
    quadratic part; then Newton steps on the whole series.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        eps = target - M[:, 0]
        disc = M[:, 1] * M[:, 1] + 4 * M[:, 2] * eps
        d = np.where(disc >= 0, 2 * eps / (M[:, 1] + np.sqrt(np.maximum(disc, 0))), eps / M[:, 1])
        d = np.clip(np.nan_to_num(d), -2 * RADIUS, 2 * RADIUS)
        for _ in range(NEWTON_STEPS):
            f, df = _horner(M, d)
            d = np.clip(d - np.where(df > 0, (f - target) / df, 0.0), -2 * RADIUS, 2 * RADIUS)
        f, df = _horner(M, d)
    ok = (np.abs(d) <= RADIUS) & (np.abs(f - target) <= TOLERANCE * np.maximum(n, 1))
    return d, df, ok


def _horner(M: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value and derivative of ``sum_j M[:, j] d**j``."""
    f = M[:, -1].copy()
    df = np.zeros_like(d)
    for j in range(M.shape[1] - 2, -1, -1):
        df *= d
        df += f
        f *= d
        f += M[:, j]
    return f, df


def exact_shift(logits: np.ndarray, h: np.ndarray, target: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method on the exact sums, each row stopped at :data:`EXACT_TOLERANCE` (rows (r, K)): (theta, sum h q (1 - q))."""
    theta = theta.astype(np.float64, copy=True)
    n = h.sum(axis=1)
    todo = np.arange(len(theta))
    for _ in range(60):
        if not len(todo):
            break
        q = _expit(logits[None, :] + theta[todo, None])
        w = h[todo]
        f = (w * q).sum(axis=1) - target[todo]
        d = (w * q * (1 - q)).sum(axis=1)
        move = np.abs(f) > EXACT_TOLERANCE * np.maximum(n[todo], 1)
        step = np.divide(f, d, out=np.zeros_like(f), where=d > 1e-300)
        theta[todo[move]] = np.clip(theta[todo[move]] - step[move], -40.0, 40.0)
        todo = todo[move]
    q = _expit(logits[None, :] + theta[:, None])
    return theta, (h * q * (1 - q)).sum(axis=1)


def expected_from_shifts(
    old_right: np.ndarray, new_right: np.ndarray, n: np.ndarray, t_old: np.ndarray, t_new: np.ndarray, slope_old: np.ndarray
) -> np.ndarray:
    """The regression count expected given item difficulty from both sides' fitted shifts (closed form; module doc).

    ``slope_old`` is ``sum_k h_k q_old,k (1 - q_old,k)``, the count when ``N = O``;
    sides with no item right (or all) take q = 0 (or 1) as the full-sample fit does.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = (new_right - old_right) / np.expm1(t_new - t_old)
    out = np.where(new_right == old_right, slope_old, out)
    out = np.where((old_right <= 0) | (new_right >= n), 0.0, out)
    out = np.where((old_right >= n) & (new_right < n), n - new_right, out)
    out = np.where((new_right <= 0) & (old_right > 0) & (old_right < n), old_right, out)
    return np.where(n > 0, out, np.nan)


def _block_shifts(
    logits: np.ndarray, base: DifficultyBaseline, M: list[np.ndarray], sides: np.ndarray, h_of
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Both sides' refit shifts and their slopes ``sum_k h_k q_k (1 - q_k)``, each (B, P), of one block of replicates.

    ``M[s]`` is side s's series (B, TERMS, P), ``sides`` (4, B, P) = old right,
    new right, regressed, items; ``h_of(b, p)`` gives rows' counts by bin (for
    the few rows the series does not fit).
    """
    assert base.theta is not None
    old_right, new_right, _, n = sides
    fits = [solve_series(M[s], t, n) for s, t in ((0, old_right), (1, new_right))]
    theta = [base.theta[None, :, s] + fits[s][0] for s in (0, 1)]
    slope = [fits[0][1], fits[1][1]]
    redo = np.argwhere(~(fits[0][2] & fits[1][2]) & (n > 0))
    if len(redo):  # the series did not fit: refit these exactly from their own counts
        b, p = redo[:, 0], redo[:, 1]
        h = h_of(b, p)
        for s, target in ((0, old_right), (1, new_right)):
            theta[s][b, p], slope[s][b, p] = exact_shift(logits, h, target[b, p], base.theta[p, s])
    return theta, slope


def _rate_ratio(
    old_right: np.ndarray, new_right: np.ndarray, reg: np.ndarray, n: np.ndarray, t_old: np.ndarray, t_new: np.ndarray,
    slope_old: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(expected regression rate, ratio of the regressions to it) from both sides' shifts."""
    expected = expected_from_shifts(old_right, new_right, n, t_old, t_new, slope_old)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, expected / n, np.nan), np.where(expected > 0, reg / expected, np.nan)


def _block_figures(
    logits: np.ndarray, base: DifficultyBaseline, M: list[np.ndarray], sides: np.ndarray, h_of
) -> tuple[np.ndarray, np.ndarray]:
    """(expected regression rate, ratio), each (B, P), of one block of replicates (arguments of :func:`_block_shifts`)."""
    theta, slope = _block_shifts(logits, base, M, sides, h_of)
    old_right, new_right, reg, n = sides
    return _rate_ratio(old_right, new_right, reg, n, theta[0], theta[1], slope[0])


def _series_of(counts: DifficultyCounts, base: DifficultyBaseline) -> tuple[np.ndarray, list[np.ndarray]]:
    assert base.theta is not None
    logits = smoothed_logits(counts.other_runs)
    return logits, [sigmoid_series(logits[None, :] + base.theta[:, s, None]) for s in (0, 1)]  # (P, K, TERMS)


def mirrored_edges(
    pairs: Sequence[tuple[int, int]], hist: np.ndarray, sides: np.ndarray, theta: np.ndarray
) -> np.ndarray:
    """Per edge, an earlier edge whose refits are its own with the sides swapped (else -1).

    What a refit reads, per cluster: the items by bin (``hist``, (G, P, K)),
    each side's right count and the regressions (``sides``, (G, 3, P)), and
    the full-sample shifts (``theta``, (P, 2)). Edge ``(b, a)`` mirrors
    ``(a, b)`` when its bins are the other's, its old and new right counts the
    other's new and old, its regressions the other's backward changes, and its
    shifts the other's swapped, bit for bit: then each replicate's counts,
    series and shifts are the other's swapped too (the refits are row by row).
    """
    partner = reverse_partners(pairs)
    later = np.flatnonzero(partner >= 0)
    if not len(later):
        return partner
    j = partner[later]
    old, new, reg = (sides[:, s] for s in range(3))
    same = (hist[:, later] == hist[:, j]).all(axis=(0, 2))
    same &= (old[:, later] == new[:, j]).all(axis=0) & (new[:, later] == old[:, j]).all(axis=0)
    same &= (reg[:, later] == new[:, j] - (old[:, j] - reg[:, j])).all(axis=0)
    same &= (theta[later] == theta[j][:, ::-1]).all(axis=1)
    partner[later[~same]] = -1
    return partner


def cluster_difficulty_replicates(
    counts: DifficultyCounts, base: DifficultyBaseline, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each replicate's (expected regression rate, ratio) ``(B, P)`` from cluster weights ``(B, G)``.

    A replicate's counts are one product of its weights with the clusters'
    counts (float32, exact while every count stays below 2**24); its series
    one small product of those counts per edge. An edge that mirrors an
    earlier one (:func:`mirrored_edges`) is not refit: its figures come from
    the other's shifts, swapped (the same values).
    """
    assert base.theta is not None
    G, _, K, P = counts.cells.shape
    hist = np.ascontiguousarray(counts.hist.transpose(0, 2, 1))  # (G, P, K)
    sides = counts.sides()
    partner = mirrored_edges(counts.pairs, hist, sides, base.theta)
    own, later = np.flatnonzero(partner < 0), np.flatnonzero(partner >= 0)
    of = np.searchsorted(own, partner[later])  # each mirror's partner among the edges refit
    theta = base.theta
    if len(later):
        hist, sides, theta = hist[:, own], sides[..., own], theta[own]
    Po = len(own)
    refit = DifficultyBaseline(tuple(counts.pairs[p] for p in own), base.expected[own], base.other_runs, theta)
    logits, series = _series_of(counts, refit)
    both = np.concatenate(series, axis=2)  # (Po, K, 2 * TERMS)
    per_cluster = np.concatenate([hist.reshape(G, Po * K), sides.reshape(G, 3 * Po)], axis=1)
    # (G, Po * K + 3 * Po): by bin, edge-major; then old right, new right, regressed
    largest = float(per_cluster.max(initial=0))
    exact32 = G * largest * max(int(weights.max(initial=0)), 1) < (1 << 24)
    dtype = np.float32 if exact32 else np.float64
    per_cluster = per_cluster.astype(dtype)
    rates, ratios = [], []
    step = _block(P)
    for lo in range(0, len(weights), step):
        w = weights[lo : lo + step].astype(dtype)
        B = len(w)
        drawn = np.rint(w @ per_cluster).astype(np.float64)
        h = drawn[:, : Po * K].reshape(B, Po, K)
        old_right, new_right, reg = drawn[:, Po * K :].reshape(B, 3, Po).transpose(1, 0, 2)
        M = np.matmul(h.transpose(1, 0, 2), both).transpose(1, 2, 0)  # (B, 2 * TERMS, Po)
        n = h.sum(axis=2)
        sides_b = np.stack([old_right, new_right, reg, n])

        def h_of(b: np.ndarray, p: np.ndarray, h: np.ndarray = h) -> np.ndarray:
            return h[b, p]

        t, slope = _block_shifts(logits, refit, [M[:, :TERMS], M[:, TERMS:]], sides_b, h_of)
        rate, ratio = np.empty((B, P)), np.empty((B, P))
        rate[:, own], ratio[:, own] = _rate_ratio(old_right, new_right, reg, n, t[0], t[1], slope[0])
        if len(later):  # the mirror's old side is its partner's new side: its regressions the partner's backward changes
            o, r = old_right[:, of], new_right[:, of]
            rate[:, later], ratio[:, later] = _rate_ratio(
                r, o, r - (o - reg[:, of]), n[:, of], t[1][:, of], t[0][:, of], slope[1][:, of]
            )
        rates.append(rate)
        ratios.append(ratio)
    return np.concatenate(rates), np.concatenate(ratios)


#: Category of :data:`replicate.stats.bootstrap.CATEGORIES` -> cell ``2 * x + y`` (old right x, new right y).
_CELL_OF_CATEGORY = (3, 2, 1, 0, 0)


def item_difficulty_replicates(
    rng: np.random.Generator, counts: DifficultyCounts, base: DifficultyBaseline, categories: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each replicate's (expected regression rate, ratio) ``(B, P)``, splitting its category counts ``(B, P, 5)``.

    ``counts`` holds one cluster (all items); each replicate's count of a cell
    (x, y) is split over the K bins by a multinomial with the cell's shares.
    """
    cells = counts.cells[0].astype(np.float64)  # (4, K, P)
    _, K, P = cells.shape
    logits, series = _series_of(counts, base)
    per_cell = np.zeros(categories.shape[:2] + (4,), dtype=np.int64)
    for k, cell in enumerate(_CELL_OF_CATEGORY):
        per_cell[:, :, cell] += categories[:, :, k]
    share = cells.transpose(0, 2, 1)  # (4, P, K)
    sums = share.sum(axis=2, keepdims=True)
    share = np.where(sums > 0, share / np.where(sums > 0, sums, 1), 1.0 / K)
    rates, ratios = [], []
    step = _block(P)
    for lo in range(0, len(categories), step):
        block = per_cell[lo : lo + step]  # (B, P, 4)
        h = np.zeros(block.shape[:2] + (K,))  # (B, P, K)
        for c in range(4):
            h += rng.multinomial(block[:, :, c], share[c])
        hp = np.ascontiguousarray(h.transpose(1, 0, 2))  # (P, B, K)
        M = [np.matmul(hp, a).transpose(1, 2, 0) for a in series]  # (B, TERMS, P)
        s = np.stack([block[:, :, 2] + block[:, :, 3], block[:, :, 1] + block[:, :, 3], block[:, :, 2],
                      block.sum(axis=2)]).astype(np.float64)

        def h_of(b: np.ndarray, p: np.ndarray, h: np.ndarray = h) -> np.ndarray:
            return h[b, p]

        rate, ratio = _block_figures(logits, base, M, s, h_of)
        rates.append(rate)
        ratios.append(ratio)
    return np.concatenate(rates), np.concatenate(ratios)
