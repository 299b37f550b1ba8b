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


def min_attainable_p(n1: np.ndarray, n2: np.ndarray, c: np.ndarray, tables: PValueTables) -> np.ndarray:
    """Per item: the smallest two-sided Fisher p-value any table with its margins can give.

    Margins are the trial counts ``n1``, ``n2`` and the pooled correct count ``c = a + b``;
    the permutation null keeps all three, so the value is the same in every replication.
    An item whose minimum exceeds the BH level can never be significant (q >= p): Tarone's
    (1990) untestable items. All-correct or all-wrong pooled items have minimum 1.
    """
    n1 = np.asarray(n1, dtype=np.int64)
    n2 = np.asarray(n2, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    out = np.ones(c.shape, dtype=np.float64)
    if c.size == 0:
        return out
    pairs = np.unique(np.stack([n1, n2], axis=1), axis=0)
    for x, y in pairs.tolist():
        a, b = np.meshgrid(np.arange(x + 1), np.arange(y + 1), indexing="ij")
        p = tables.lookup(a, np.full_like(a, x), b, np.full_like(b, y))
        by_c = np.full(x + y + 1, np.inf)
        np.minimum.at(by_c, (a + b).ravel(), p.ravel())
        sel = (n1 == x) & (n2 == y)
        out[sel] = by_c[c[sel]]
    return out
