"""Per-cell test statistics: Fisher p-values (via lookup tables), BH q-values, the exact classification.

:func:`classify_cell` is used for the observed data and, with a leading
replication axis, for every permutation replication, so the null reruns the
very same classification (BH included).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from replicate.trials.classify import diff_at_least
from replicate.trials.fisher import PValueTables


def bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values along the last axis: ``scipy.stats.false_discovery_control(p, axis=-1, method='bh')``."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=np.float64)
    if p.shape[-1] == 0:
        return p.copy()
    return np.asarray(false_discovery_control(p, axis=-1, method="bh"), dtype=np.float64)


@dataclass(frozen=True)
class CellTests:
    """p, q and the exact threshold decisions for each eps (arrays shaped like ``a``)."""

    p: np.ndarray
    q: np.ndarray
    significant: np.ndarray
    up: tuple[np.ndarray, ...]  # per eps: d >= eps
    down: tuple[np.ndarray, ...]  # per eps: d <= -eps


def cell_tests(
    a: np.ndarray,
    n1: np.ndarray,
    b: np.ndarray,
    n2: np.ndarray,
    *,
    tables: PValueTables,
    alpha: float,
    eps_list: Sequence[Fraction],
    offset: np.ndarray | None = None,
    stride: np.ndarray | None = None,
) -> CellTests:
    """Fisher p (two-sided), BH q along the last axis, significance and exact thresholds."""
    if offset is None or stride is None:
        offset, stride = tables.prepare(n1, n2)
    p = tables.take(offset, stride, np.asarray(a, np.int64), np.asarray(b, np.int64))
    q = bh(p)
    sig = q <= alpha
    ups, downs = [], []
    for e in eps_list:
        u, d = diff_at_least(a, n1, b, n2, e)
        ups.append(u)
        downs.append(d)
    return CellTests(p, q, sig, tuple(ups), tuple(downs))
