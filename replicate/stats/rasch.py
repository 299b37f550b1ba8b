"""Conditional maximum likelihood of the difficulty-aware baseline, many edges and replicates at once (pure).

One edge (old run a, new run b) and ``m`` other runs, per item: whether a is
right (x), whether b is right (y), and how many other runs are right (k). The
null is the Rasch model: given the item (its difficulty ``d``) the runs are
right independently, run j with probability ``expit(a_j - d)``. Then, given
the item's total ``t = x + y + k``, which pattern it shows no longer depends
on ``d``::

    P(x, y, k | t) = w^x * g_k / G_t,    G_t = g_t + (1 + w) g_(t-1) + w g_(t-2)

with ``w = exp(a_a - a_b)`` and ``g_k`` the weight of k of the other runs
being right (an elementary symmetric function of their abilities). Here the
``g_k`` are free parameters, so the other runs need not be Rasch judges
among themselves: only their count enters, as in the log-linear model
``log mu(x, y, k) = x alpha + y beta + lambda_k + nu_(x+y+k)``. The fit
maximises the likelihood given every item's total, so no item's difficulty
is estimated (the noisy per-item estimate with its slope fixed at 1 is what
biased the smoothed-share baseline); it reproduces each side's right count
and the items per k. The expected regression count given the totals is
``sum_t n_t w g_(t-1) / G_t`` (``n_t`` items with total t), and the expected
progression count (the reverse edge's regressions) ``sum_t n_t g_(t-1) / G_t``.

What it reads, per row: ``h`` (items by k, (r, K), K = m + 1), ``n`` (items
by total, (r, K + 2)) and ``O`` (items old right). Parameters ``(alpha,
lambda_0..lambda_m)`` (``beta`` is 0: only ``a_a - a_b`` is identified; one
lambda, of the fullest bin, is pinned at 0; an empty bin has ``g = 0``).
Newton's method on all rows at once: the information matrix is an arrow
(alpha) on a five-band matrix (lambda), solved by a banded Cholesky whose
loop runs over the K bins, every step vectorised over rows. Steps that lower
the likelihood (it is concave) are halved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOLERANCE = 1e-12  # every score within TOLERANCE * max(items, 1)
MAX_STEPS = 100
_MAX_MOVE = 8.0  # a Newton step moves no parameter by more than this
_CHECKED_STEP = 0.5  # a step moving a parameter further is checked against the likelihood
_SMALL_STEP = 1e-6  # a step moving no parameter further ends the row's fit
_BOUND = 60.0  # parameters kept within +-_BOUND (a side always or never right drifts there)
_RIDGE = 1e-13


@dataclass(frozen=True)
class Strata:
    """The counts the fit reads, bins first: items by the other runs' count ``h`` (K, r), by total ``n``
    (K + 2, r); per row the old side's right count ``old``, the new side's ``new`` and the regressions."""

    h: np.ndarray
    n: np.ndarray
    old: np.ndarray
    new: np.ndarray
    regressed: np.ndarray

    @property
    def items(self) -> np.ndarray:
        return self.h.sum(axis=0)

    def rows(self, idx: np.ndarray) -> Strata:
        return Strata(self.h[:, idx], self.n[:, idx], self.old[idx], self.new[idx], self.regressed[idx])


def strata(cells: np.ndarray) -> Strata:
    """:class:`Strata` from cell counts ``cells[..., 2 * x + y, k]`` (old right x, new right y), rows flattened."""
    c = np.asarray(cells, dtype=np.float64)
    c = c.reshape(-1, 4, c.shape[-1]).transpose(1, 2, 0)  # (4, K, r)
    _, K, r = c.shape
    n = np.zeros((K + 2, r))
    n[0:K] += c[0]
    n[1 : K + 1] += c[1] + c[2]
    n[2 : K + 2] += c[3]
    return Strata(c.sum(axis=0), n, c[2:].sum(axis=(0, 1)), (c[1] + c[3]).sum(axis=0), c[2].sum(axis=0))


def start(s: Strata) -> np.ndarray:
    """A first guess ``(alpha, lambda)`` (r, K + 1): the sides' logit difference and the log share of each bin."""
    n = np.maximum(s.items, 1)
    po, pn = np.clip(s.old / n, 0.01, 0.99), np.clip(s.new / n, 0.01, 0.99)
    lam = np.log(np.maximum(s.h, 0.5) / n)
    return np.concatenate([(np.log(po / (1 - po)) - np.log(pn / (1 - pn)))[None], lam]).T


def _pinned(h: np.ndarray) -> np.ndarray:
    """Bins whose lambda does not move (K, r): the empty ones (g = 0) and, per row, the fullest (lambda = 0)."""
    fixed = h <= 0
    fixed[np.argmax(h, axis=0), np.arange(h.shape[1])] = True
    return fixed


def _weights(th: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per stratum t = 0..K+1 (rows of ``(K + 2, r)``) the four patterns' weights, (00, k=t), (10, k=t-1),
    (01, k=t-1), (11, k=t-2), and their sum G_t; ``th`` is bins first, (K + 1, r)."""
    K1, r = th.shape
    K = K1 - 1
    w = np.exp(th[0])
    gp = np.zeros((K + 4, r))
    np.exp(th[1:], out=gp[2 : K + 2])
    gp[2 : K + 2][~live] = 0.0
    a, b, c = gp[2 : K + 4], gp[1 : K + 3], gp[0 : K + 2]
    ten, eleven = b * w, c * w
    return a, ten, b, eleven, a + ten + b + eleven


def loglik(th: np.ndarray, s: Strata, live: np.ndarray) -> np.ndarray:
    """The conditional log-likelihood of each row (up to a constant); ``th`` bins first."""
    *_, G = _weights(th, live)
    logG = np.log(np.where(s.n > 0, G, 1.0))
    return s.old * th[0] + (s.h * np.where(live, th[1:], 0.0)).sum(axis=0) - (s.n * logG).sum(axis=0)


def _score_information(th: np.ndarray, s: Strata, live: np.ndarray):
    """Scores (alpha, lambda) and the information's parts, bins first: alpha-alpha, alpha-lambda, lambda
    diagonal, bands 1 and 2."""
    K = th.shape[0] - 1
    a, ten, one, eleven, G = _weights(th, live)
    inv = np.divide(1.0, G, out=np.zeros_like(G), where=G > 0)
    pa, p10, pc = a * inv, ten * inv, eleven * inv
    pb = one * inv
    pb += p10
    x = p10 + pc
    n = s.n
    na, nb, nc, nx = n * pa, n * pb, n * pc, n * x
    score_a = s.old - nx.sum(axis=0)
    score_l = s.h - na[0:K] - nb[1 : K + 1] - nc[2 : K + 2]
    i_aa = (nx - nx * x).sum(axis=0)
    i_al = (n * p10 - nx * pb)[1 : K + 1] + (nc - nx * pc)[2 : K + 2] - (nx * pa)[0:K]
    diag = (na - na * pa)[0:K] + (nb - nb * pb)[1 : K + 1] + (nc - nc * pc)[2 : K + 2]
    band1 = -((na * pb)[1:K] + (nb * pc)[2 : K + 1])  # (k, k + 1), k = 0..K-2
    band2 = -(na * pc)[2:K]  # (k, k + 2), k = 0..K-3
    return score_a, score_l, i_aa, i_al, diag, band1, band2


def banded_solve(diag: np.ndarray, band1: np.ndarray, band2: np.ndarray, rhs: list[np.ndarray]) -> list[np.ndarray]:
    """Solve a symmetric positive definite five-band system per column (bins first: ``diag`` (K, r), ``band1``
    (K - 1, r), ``band2`` (K - 2, r)) for each right-hand side (K, r), by Cholesky."""
    K, r = diag.shape
    L0 = np.empty((K, r))
    L1 = np.zeros((K, r))  # L[k + 1, k]
    L2 = np.zeros((K, r))  # L[k + 2, k]
    z = [np.empty((K, r)) for _ in rhs]
    for k in range(K):
        v = diag[k].copy()
        accs = [b[k].copy() for b in rhs]
        if k >= 1:
            v -= L1[k - 1] * L1[k - 1]
            for acc, zz in zip(accs, z):
                acc -= L1[k - 1] * zz[k - 1]
        if k >= 2:
            v -= L2[k - 2] * L2[k - 2]
            for acc, zz in zip(accs, z):
                acc -= L2[k - 2] * zz[k - 2]
        np.sqrt(np.maximum(v, 1e-300), out=L0[k])
        for acc, zz in zip(accs, z):
            np.divide(acc, L0[k], out=zz[k])
        if k + 1 < K:
            off = band1[k] - L2[k - 1] * L1[k - 1] if k >= 1 else band1[k]
            np.divide(off, L0[k], out=L1[k])
        if k + 2 < K:
            np.divide(band2[k], L0[k], out=L2[k])
    out = [np.empty((K, r)) for _ in rhs]
    for k in range(K - 1, -1, -1):
        for x, zz in zip(out, z):
            acc = zz[k].copy()
            if k + 1 < K:
                acc -= L1[k] * x[k + 1]
            if k + 2 < K:
                acc -= L2[k] * x[k + 2]
            np.divide(acc, L0[k], out=x[k])
    return out


def newton_step(th: np.ndarray, s: Strata, live: np.ndarray, fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the Newton step (K + 1, r), the largest score of each row); bins first."""
    sa, sl, iaa, ial, diag, b1, b2 = _score_information(th, s, live)
    sl[fixed] = 0.0
    ial[fixed] = 0.0
    scale = np.maximum(s.items, 1.0)
    diag += _RIDGE * scale
    diag[fixed] = np.broadcast_to(scale, diag.shape)[fixed]
    b1[fixed[:-1] | fixed[1:]] = 0.0
    b2[fixed[:-2] | fixed[2:]] = 0.0
    u, v = banded_solve(diag, b1, b2, [sl, ial])
    schur = iaa - (ial * v).sum(axis=0)
    da = np.divide(sa - (ial * u).sum(axis=0), schur, out=np.zeros_like(sa), where=schur > _RIDGE * scale)
    u -= v * da
    biggest = np.maximum(np.abs(sa), np.abs(sl).max(axis=0, initial=0.0))
    return np.concatenate([da[None], u]), biggest


def fit(
    s: Strata, theta: np.ndarray | None = None, *, tolerance: float = TOLERANCE, max_steps: int = MAX_STEPS
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's maximum-likelihood ``(alpha, lambda)`` (r, K + 1) and whether it converged (r,).

    ``theta`` is the start (:func:`start` when None); lambda is shifted so that
    the fullest bin's is 0. A row is done when every score is within
    ``tolerance`` of its items, or when its Newton step moved no parameter by
    more than :data:`_SMALL_STEP` (Newton converges quadratically: its scores
    are then far inside the tolerance). A step that moves a parameter by more
    than :data:`_CHECKED_STEP` is halved while it lowers the likelihood. Rows
    whose sides are always or never right drift to the bounds; their expected
    counts are set in :func:`expected` outright. ``max_steps`` bounds the Newton
    steps (a row stopped by it is not done).
    """
    live = s.h > 0
    fixed = _pinned(s.h)
    r = s.h.shape[1]
    theta = (start(s) if theta is None else np.asarray(theta, dtype=np.float64)).T.copy()  # bins first
    theta[1:] -= theta[1 + np.argmax(s.h, axis=0), np.arange(r)]
    theta[1:][~live] = 0.0
    done = np.zeros(r, dtype=bool)
    todo = np.arange(r)
    sub, th, sub_live, sub_fixed = s, theta, live, fixed
    limit = tolerance * np.maximum(s.items, 1.0)
    for _ in range(max_steps):
        step, biggest = newton_step(th, sub, sub_live, sub_fixed)
        moved = np.abs(step).max(axis=0)
        step *= np.minimum(1.0, _MAX_MOVE / np.maximum(moved, 1e-300))
        met = biggest <= limit[todo]
        step[:, met] = 0.0
        check = np.flatnonzero((moved > _CHECKED_STEP) & ~met)
        if len(check):
            step[:, check] = _halved(th[:, check], step[:, check], sub.rows(check), sub_live[:, check])
        th = np.clip(th + step, -_BOUND, _BOUND)
        theta[:, todo] = th
        finished = met | (moved <= _SMALL_STEP)
        done[todo[finished]] = True
        if finished.all():
            break
        keep = np.flatnonzero(~finished)
        if len(keep) < len(todo):
            todo, th, sub = todo[keep], th[:, keep], sub.rows(keep)
            sub_live, sub_fixed = sub_live[:, keep], sub_fixed[:, keep]
    return theta.T, done


def _halved(th: np.ndarray, step: np.ndarray, sub: Strata, live: np.ndarray) -> np.ndarray:
    """``step`` halved, column by column, until it no longer lowers the likelihood (at most 40 times)."""
    before = loglik(th, sub, live)
    for _ in range(40):
        worse = loglik(np.clip(th + step, -_BOUND, _BOUND), sub, live) < before - 1e-12 * np.abs(before)
        if not worse.any():
            break
        step[:, worse] *= 0.5
    return step


def expected(theta: np.ndarray, s: Strata) -> tuple[np.ndarray, np.ndarray]:
    """(expected regression count, expected progression count) per row given the items' totals.

    A side always or never right has its limit outright: old never right or
    new always right, no regression; old always right, every new wrong item;
    new never right, every old right item (and the same for progressions).
    """
    _, ten, one, _, G = _weights(np.asarray(theta).T, s.h > 0)
    q = np.divide(s.n, G, out=np.zeros_like(G), where=s.n > 0)
    reg, prog = (ten * q).sum(axis=0), (one * q).sum(axis=0)
    items, old, new = s.items, s.old, s.new
    reg = _limits(reg, old, new, items)
    prog = _limits(prog, new, old, items)
    return np.where(items > 0, reg, np.nan), np.where(items > 0, prog, np.nan)


def _limits(out: np.ndarray, old: np.ndarray, new: np.ndarray, items: np.ndarray) -> np.ndarray:
    out = np.where((old <= 0) | (new >= items), 0.0, out)
    out = np.where((old >= items) & (new < items), items - new, out)
    return np.where((new <= 0) & (old > 0) & (old < items), old, out)
