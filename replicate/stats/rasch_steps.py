"""The Newton and chord steps of :mod:`replicate.stats.rasch`: scores and information, many rows at once (pure).

Bins first throughout: ``th`` is ``(K + 1, r)`` (alpha, then lambda of the K
bins), a :class:`Strata` holds the counts. With
``g_k = exp(lambda_k)`` (0 for an empty bin), ``w = exp(alpha)``, per stratum
``t = 0..K+1``: ``A_t = g_(t-1) + g_(t-2)`` (the weight of the patterns with
the old side right, over w), ``G_t = g_t + g_(t-1) + w A_t`` and
``q_t = n_t / G_t``. Bin k takes part in stratum ``t = k + j`` with
coefficient ``c_j`` (1, 1 + w, w), so its expected items are
``E_k = g_k sum_j c_j q_(k+j)``; the old side is right in strata k + 1 and
k + 2, so its expected right count is ``w sum_k g_k (q_(k+1) + q_(k+2))``. The
information is the covariance of these counts within each stratum, summed
with weights ``n_t / G_t^2``: alpha, a five-band lambda block and their border.

Every array of a step is written into buffers (:class:`Work`) kept for the
whole fit: a fresh array of this size each time costs the page faults of
memory the allocator took from and gave back to the system, which here cost
more than the arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from replicate.stats.band_cholesky import Factor, factor, solve

RIDGE = 1e-13


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


class Work:
    """Named buffers reused by the steps of one fit; a view of the first ``r`` columns is handed out (rows
    only leave a fit, so the first size is the largest)."""

    def __init__(self) -> None:
        self._bufs: dict[str, np.ndarray] = {}

    def get(self, name: str, n: int, r: int) -> np.ndarray:
        buf = self._bufs.get(name)
        if buf is None or buf.shape[0] < n or buf.shape[1] < r:
            buf = self._bufs[name] = np.empty((n, r))
        return buf[:n, :r]


class Rows(NamedTuple):
    """The rows of a fit: their counts, which bins hold items (``live``) and which lambdas do not move
    (``fixed``), and the same as 0/1 floats, which the steps multiply by (a product costs a small part of a
    masked write): ``on`` (live), ``hollow`` (strata without items, (K + 2, r)), ``free`` (not fixed) and
    ``free1``, ``free2`` (band entries between two free bins); ``scale`` is each row's items (at least 1)."""

    s: Strata
    live: np.ndarray
    fixed: np.ndarray
    on: np.ndarray
    hollow: np.ndarray
    free: np.ndarray
    free1: np.ndarray
    free2: np.ndarray
    scale: np.ndarray

    def rows(self, idx: np.ndarray) -> Rows:
        return Rows(self.s.rows(idx), *(a[..., idx] for a in self[1:]))


def rows_of(s: Strata, live: np.ndarray, fixed: np.ndarray) -> Rows:
    """:class:`Rows` of counts ``s`` with ``live`` and ``fixed`` bins (K, r)."""
    free = ~fixed
    f = np.float64
    return Rows(
        s, live, fixed, live.astype(f), (s.n <= 0).astype(f), free.astype(f), (free[:-1] & free[1:]).astype(f),
        (free[:-2] & free[2:]).astype(f), np.maximum(s.items, 1.0),
    )


def terms(th: np.ndarray, rows: Rows, ws: Work) -> tuple[np.ndarray, ...]:
    """``w`` (r,), ``g`` (K, r), and per stratum ``A``, ``G``, ``q`` (K + 2, r); a stratum without items has
    ``q = 0`` (its G is taken 1 larger, so that no division is by 0: a product of masks, not a masked write)."""
    K, r = th.shape[0] - 1, th.shape[1]
    w = np.exp(th[0])
    gp = ws.get("g", K + 4, r)
    gp[:2] = 0.0
    gp[K + 2 :] = 0.0
    g = gp[2 : K + 2]
    np.exp(th[1:], out=g)
    g *= rows.on
    A = np.add(gp[1 : K + 3], gp[0 : K + 2], out=ws.get("A", K + 2, r))
    G = np.multiply(w, A, out=ws.get("G", K + 2, r))
    G += gp[2 : K + 4]
    G += gp[1 : K + 3]
    G += rows.hollow
    q = np.divide(rows.s.n, G, out=ws.get("q", K + 2, r))
    return w, g, A, G, q


def scores(th: np.ndarray, rows: Rows, ws: Work) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """(score of alpha (r,), of lambda (K, r), the terms :func:`information` reuses)."""
    s = rows.s
    w, g, A, G, q = terms(th, rows, ws)
    K, r = g.shape
    U = np.add(q[1 : K + 1], q[2 : K + 2], out=ws.get("U", K, r))
    E = np.multiply(w, U, out=ws.get("E", K, r))
    E += q[0:K]
    E += q[1 : K + 1]
    E *= g
    right = w * np.einsum("kr,kr->r", g, U)
    return s.old - right, np.subtract(s.h, E, out=ws.get("sl", K, r)), (w, g, A, G, q, U, E, right)


def information(parts: tuple[np.ndarray, ...], ws: Work) -> tuple[np.ndarray, ...]:
    """The information: alpha-alpha (r,), alpha-lambda (K, r), lambda diagonal (K, r), bands 1 and 2."""
    w, g, A, G, q, U, E, right = parts
    K, r = g.shape
    sq = np.divide(q, G, out=ws.get("sq", K + 2, r))  # n_t / G_t^2
    sA = np.multiply(sq, A, out=ws.get("sA", K + 2, r))
    i_aa = right - (w * w) * np.einsum("tr,tr->r", sA, A)
    i_al = np.add(sA[1 : K + 1], sA[2 : K + 2], out=ws.get("ial", K, r))
    i_al *= w
    i_al += sA[0:K]
    i_al += sA[1 : K + 1]
    np.subtract(U, i_al, out=i_al)
    i_al *= g
    i_al *= w
    c1 = 1.0 + w
    diag = np.multiply(w * w, sq[2 : K + 2], out=ws.get("diag", K, r))
    t = np.multiply(c1 * c1, sq[1 : K + 1], out=ws.get("t", K, r))
    diag += t
    diag += sq[0:K]
    np.multiply(g, g, out=t)
    diag *= t
    np.subtract(E, diag, out=diag)
    band1 = np.multiply(w, sq[2 : K + 1], out=ws.get("b1", K - 1, r))
    band1 += sq[1:K]
    band1 *= -c1
    band1 *= g[:-1]
    band1 *= g[1:]
    band2 = np.multiply(-w, sq[2:K], out=ws.get("b2", max(K - 2, 0), r))
    band2 *= g[:-2]
    band2 *= g[2:]
    return i_aa, i_al, diag, band1, band2


def largest(sa: np.ndarray, sl: np.ndarray) -> np.ndarray:
    """Each row's largest score in absolute value."""
    return np.maximum(np.abs(sa), np.abs(sl).max(axis=0, initial=0.0))


def newton_step(th: np.ndarray, rows: Rows, ws: Work) -> tuple[np.ndarray, np.ndarray, Factor]:
    """(the Newton step (K + 1, r), the largest score of each row, the information's factor).

    A ``fixed`` bin's lambda does not move: its score and border are 0, its row of the band the identity's
    (times the items); every diagonal gets a ridge of ``RIDGE`` times the items.
    """
    sa, sl, parts = scores(th, rows, ws)
    iaa, ial, diag, b1, b2 = information(parts, ws)
    sl *= rows.free
    ial *= rows.free
    diag += RIDGE * rows.scale
    diag *= rows.free
    fixed_diag = np.multiply(rows.scale, rows.fixed, out=ws.get("t", *diag.shape))
    diag += fixed_diag
    b1 *= rows.free1
    b2 *= rows.free2
    f = factor(diag, b1, b2, ial, iaa, RIDGE * rows.scale)
    return solve(f, sl, sa, ws.get), largest(sa, sl), f


def chord_step(th: np.ndarray, rows: Rows, f: Factor, ws: Work) -> tuple[np.ndarray, np.ndarray]:
    """(the step (K + 1, r) taken with an earlier information's factor ``f``, the largest score of each row)."""
    sa, sl, _ = scores(th, rows, ws)
    sl *= rows.free
    return solve(f, sl, sa, ws.get), largest(sa, sl)
