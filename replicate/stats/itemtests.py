"""Per-cell test statistics: Fisher p-values (via lookup tables), BH q-values, the exact classification.

:func:`cell_tests` is used for the observed data and, with a leading
replication axis, for every permutation replication, so the null reruns the
very same tests (BH included) under the same :class:`Rule`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from replicate.stats.classify import diff_at_least
from replicate.stats.fisher import PValueTables


def bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values along the last axis: ``scipy.stats.false_discovery_control(p, axis=-1, method='bh')``."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=np.float64)
    if p.shape[-1] == 0:
        return p.copy()
    return np.asarray(false_discovery_control(p, axis=-1, method="bh"), dtype=np.float64)


@dataclass(frozen=True)
class Rule:
    """The test settings shared by the observed data and every null replication.

    ``eps_list[0]`` is the practical threshold of the classification; the others are
    the ``--sensitivity`` thresholds. ``tables`` caches Fisher p-values across cells.
    """

    tables: PValueTables
    alpha: float
    eps_list: tuple[Fraction, ...]


@dataclass(frozen=True)
class CellTests:
    """p, q and the exact threshold decisions for each eps (arrays shaped like ``a``)."""

    p: np.ndarray
    q: np.ndarray
    significant: np.ndarray
    up: tuple[np.ndarray, ...]  # per eps in ``rule.eps_list``: d >= eps
    down: tuple[np.ndarray, ...]  # per eps in ``rule.eps_list``: d <= -eps


def cell_tests(
    a: np.ndarray,
    n1: np.ndarray,
    b: np.ndarray,
    n2: np.ndarray,
    rule: Rule,
    *,
    offset: np.ndarray | None = None,
    stride: np.ndarray | None = None,
) -> CellTests:
    """Fisher p (two-sided), BH q along the last axis, significance and exact thresholds.

    ``offset``/``stride`` are ``rule.tables.prepare(n1, n2)``, passed when the caller
    reuses them across many calls on the same trial counts (the null).
    """
    if offset is None or stride is None:
        offset, stride = rule.tables.prepare(n1, n2)
    p = rule.tables.take(offset, stride, np.asarray(a, np.int64), np.asarray(b, np.int64))
    q = bh(p)
    sig = q <= rule.alpha
    ups, downs = [], []
    for e in rule.eps_list:
        u, d = diff_at_least(a, n1, b, n2, e)
        ups.append(u)
        downs.append(d)
    return CellTests(p, q, sig, tuple(ups), tuple(downs))
