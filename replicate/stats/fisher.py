"""Fisher's exact test (two-sided) as lookup tables, bit-for-bit equal to scipy.

For an item with ``n1`` non-error trials on the source side and ``n2`` on the
target side, the test's p-value depends only on the correct counts ``(a, b)``:
there are ``(n1 + 1) * (n2 + 1)`` possible tables. :func:`fisher_table`
computes all of them at once by replaying ``scipy.stats.fisher_exact``'s
two-sided algorithm vectorised: the same ``hypergeom`` pmf/cdf/sf calls, the
same mode, the same relative tie tolerance (``1e-14``) and the same binary
search for the other tail. The tests compare every entry with ``fisher_exact``.

The 2x2 table is always oriented ``[[a, n1 - a], [b, n2 - b]]`` (rows: source,
target; columns: correct, not correct), exactly as passed to ``fisher_exact``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_EPSILON = 1e-14
_GAMMA = 1 + _EPSILON


def fisher_table(n1: int, n2: int) -> np.ndarray:
    """Two-sided Fisher p-values for every table with row sums ``n1`` and ``n2``.

    Returns a read-only float64 array ``P`` of shape ``(n1 + 1, n2 + 1)`` where
    ``P[a, b] == scipy.stats.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue``.
    """
    if n1 < 0 or n2 < 0:
        raise ValueError(f"n1 and n2 must be >= 0, got n1={n1}, n2={n2}")
    out = np.ones((n1 + 1, n2 + 1), dtype=np.float64)
    if n1 == 0 or n2 == 0:
        out.flags.writeable = False
        return out
    from scipy.stats import hypergeom

    M = n1 + n2
    grid_a, grid_b = np.meshgrid(np.arange(n1 + 1), np.arange(n2 + 1), indexing="ij")
    a, b = grid_a.ravel(), grid_b.ravel()
    n = a + b
    inner = (n > 0) & (n < M)  # a zero column sum gives p = 1 (scipy's early return)
    a, n = a[inner], n[inner]
    # pmf[n, k] for k = 0..M: the values scipy's binary search looks at.
    ks = np.arange(M + 1)
    pmf_grid = hypergeom.pmf(ks[None, :], M, n1, ks[:, None])

    mode = (((n + 1) * (n1 + 1)) / (M + 2)).astype(np.int64)
    pexact = pmf_grid[n, a]
    pmode = pmf_grid[n, mode]
    p = np.empty(a.shape, dtype=np.float64)

    tie = np.abs(pexact - pmode) / np.maximum(pexact, pmode) <= _EPSILON
    p[tie] = 1.0
    lower = ~tie & (a < mode)
    upper = ~tie & ~(a < mode)
    thresh = pexact * _GAMMA

    # Lower tail observed: p = cdf(a) + sf(guess) on the far side of the mode.
    plower = hypergeom.cdf(a, M, n1, n)
    lower_only = lower & (pmf_grid[n, n] > thresh)
    p[lower_only] = plower[lower_only]
    # Upper tail observed: p = sf(a - 1) + cdf(guess) below the mode.
    pupper = hypergeom.sf(a - 1, M, n1, n)
    upper_only = upper & (pmf_grid[n, 0] > thresh)
    p[upper_only] = pupper[upper_only]

    search_lo = lower & ~lower_only
    search_up = upper & ~upper_only
    sign = np.where(search_lo, -1.0, 1.0)
    lo = np.where(search_lo, mode, 0)
    hi = np.where(search_lo, n, mode)
    todo = search_lo | search_up
    guess = _binary_search(pmf_grid, n, sign, sign * thresh, lo, hi, todo)
    sel = np.flatnonzero(search_lo)
    p[sel] = plower[sel] + hypergeom.sf(guess[sel], M, n1, n[sel])
    sel = np.flatnonzero(search_up)
    p[sel] = pupper[sel] + hypergeom.cdf(guess[sel], M, n1, n[sel])

    flat = out.ravel()
    flat[np.flatnonzero(inner)] = np.minimum(p, 1.0)
    out.flags.writeable = False
    return out


def _binary_search(
    pmf_grid: np.ndarray,
    n: np.ndarray,
    sign: np.ndarray,
    d: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    todo: np.ndarray,
) -> np.ndarray:
    """scipy's ``_binary_search_for_binom_tst`` on ``f(k) = sign * pmf(k)``, vectorised."""
    lo = lo.copy()
    hi = hi.copy()
    result = np.zeros(lo.shape, dtype=np.int64)
    done = ~todo
    while True:
        act = ~done & (lo < hi)
        if not act.any():
            break
        mid = lo + (hi - lo) // 2
        val = sign * pmf_grid[n, np.clip(mid, 0, pmf_grid.shape[1] - 1)]
        less = act & (val < d)
        more = act & (val > d)
        equal = act & ~less & ~more
        lo = np.where(less, mid + 1, lo)
        hi = np.where(more, mid - 1, hi)
        result = np.where(equal, mid, result)
        done = done | equal
    rest = ~done
    val_lo = sign * pmf_grid[n, np.clip(lo, 0, pmf_grid.shape[1] - 1)]
    result = np.where(rest, np.where(val_lo <= d, lo, lo - 1), result)
    return result


@dataclass
class PValueTables:
    """A cache of :func:`fisher_table` per (n1, n2), flattened for vectorised look-up.

    ``lookup(a, n1, b, n2)`` works on arrays of any (broadcastable) shape.
    """

    _offsets: dict[tuple[int, int], int] = field(default_factory=dict)
    _chunks: list[np.ndarray] = field(default_factory=list)
    _flat: np.ndarray | None = None
    _size: int = 0

    def prepare(self, n1: np.ndarray, n2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Make sure the tables for these (n1, n2) exist; return (offset, stride) per entry."""
        n1 = np.asarray(n1, dtype=np.int64)
        n2 = np.asarray(n2, dtype=np.int64)
        pairs = np.unique(np.stack([n1.ravel(), n2.ravel()], axis=1), axis=0)
        for x, y in pairs.tolist():
            if (x, y) not in self._offsets:
                t = fisher_table(x, y)
                self._offsets[(x, y)] = self._size
                self._chunks.append(t.ravel())
                self._size += t.size
                self._flat = None
        if self._flat is None:
            self._flat = np.concatenate(self._chunks) if self._chunks else np.ones(0)
            self._flat.flags.writeable = False
        off_map = self._offsets
        offset = np.fromiter(
            (off_map[(x, y)] for x, y in zip(n1.ravel().tolist(), n2.ravel().tolist())),
            dtype=np.int64,
            count=n1.size,
        ).reshape(n1.shape)
        return offset, n2 + 1

    def lookup(self, a, n1, b, n2) -> np.ndarray:
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        offset, stride = self.prepare(np.asarray(n1), np.asarray(n2))
        return self.take(offset, stride, a, b)

    def take(self, offset: np.ndarray, stride: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Look up prepared tables: ``offset``/``stride`` from :meth:`prepare`."""
        assert self._flat is not None
        return self._flat[offset + a * stride + b]

    @property
    def n_tables(self) -> int:
        return len(self._offsets)
