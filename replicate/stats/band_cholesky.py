"""Symmetric positive definite arrow systems with a five-band block, many at once (pure numpy).

Each column r of the inputs is one system of order K + 1: a five-band K x K
block (the diagonal ``diag`` (K, r), the first and second off-diagonals
``band1`` (K - 1, r) and ``band2`` (K - 2, r)) bordered by one more variable
(its column ``border`` (K, r) and diagonal ``corner`` (r,)); the border
variable comes first in the solution. The Cholesky factor is computed once
(:func:`factor`, the border ordered last, so it costs one more forward column)
and applied to any right-hand side (:func:`solve`). The loops run over the K
rows of the band, each line vectorised over the systems.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Factor(NamedTuple):
    """Cholesky factor per column: diagonal (K, r), first and second subdiagonals shifted so that row k holds
    ``L[k, k-1]`` (K + 1, r) and ``L[k, k-2]`` (K + 2, r), the border's row (K, r) and one over its Schur
    complement (r,; 0 where that is not above the floor: the border variable's step is then 0)."""

    L0: np.ndarray
    L1: np.ndarray
    L2: np.ndarray
    border: np.ndarray
    inv_schur: np.ndarray


def factor(
    diag: np.ndarray, band1: np.ndarray, band2: np.ndarray, border: np.ndarray, corner: np.ndarray, floor: np.ndarray
) -> Factor:
    """The :class:`Factor` of each column's system; a pivot not above 0 is taken as 1e-300 (a huge step)."""
    K, r = diag.shape
    L0 = np.empty((K, r))
    L1 = np.zeros((K + 1, r))
    L2 = np.zeros((K + 2, r))
    z = np.zeros((K + 2, r))  # the border's row, shifted by 2
    t = np.empty(r)
    for k in range(K):
        d, l1, l2 = L0[k], L1[k], L2[k]
        np.multiply(l1, l1, out=d)
        np.subtract(diag[k], d, out=d)
        np.multiply(l2, l2, out=t)
        d -= t
        np.maximum(d, 1e-300, out=d)
        np.sqrt(d, out=d)
        o = z[k + 2]  # the border's row: forward substitution
        np.multiply(l1, z[k + 1], out=o)
        np.subtract(border[k], o, out=o)
        np.multiply(l2, z[k], out=t)
        o -= t
        o /= d
        if k + 1 < K:
            o = L1[k + 1]
            np.multiply(L2[k + 1], l1, out=o)
            np.subtract(band1[k], o, out=o)
            o /= d
        if k + 2 < K:
            np.divide(band2[k], d, out=L2[k + 2])
    z = z[2:]
    schur = corner - np.einsum("kr,kr->r", z, z)
    return Factor(L0, L1, L2, z, np.divide(1.0, schur, out=np.zeros(r), where=schur > floor))


def solve(
    f: Factor, rhs: np.ndarray, rhs_border: np.ndarray, scratch: Callable[[str, int, int], np.ndarray] | None = None
) -> np.ndarray:
    """The solution (K + 1, r), the border variable first, for right-hand sides ``rhs`` (K, r), ``rhs_border`` (r,).

    ``scratch(name, n, r)`` gives (n, r) arrays to work in (fresh ones when None)."""
    K, r = f.L0.shape
    get = scratch or (lambda name, n, r: np.empty((n, r)))
    z = get("solve_z", K + 2, r)
    z[:2] = 0.0
    t = np.empty(r)
    L0, L1, L2 = f.L0, f.L1, f.L2
    for k in range(K):
        o = z[k + 2]
        np.multiply(L1[k], z[k + 1], out=o)
        np.subtract(rhs[k], o, out=o)
        np.multiply(L2[k], z[k], out=t)
        o -= t
        o /= L0[k]
    z = z[2:]
    out = np.empty((K + 1, r))
    top = out[0]
    np.multiply(rhs_border - np.einsum("kr,kr->r", f.border, z), f.inv_schur, out=top)
    x = get("solve_x", K + 2, r)  # back substitution; x[k] is row k, rows K and K + 1 zero
    x[K:] = 0.0
    for k in range(K - 1, -1, -1):
        o = x[k]
        np.multiply(f.border[k], top, out=o)
        np.subtract(z[k], o, out=o)
        np.multiply(L1[k + 1], x[k + 1], out=t)
        o -= t
        np.multiply(L2[k + 2], x[k + 2], out=t)
        o -= t
        o /= L0[k]
    out[1:] = x[:K]
    return out


def factor_rows(f: Factor, idx: np.ndarray) -> Factor:
    """The factors of the columns ``idx``."""
    return Factor(*(a[..., idx] for a in f))
