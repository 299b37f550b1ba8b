"""The permutation null: reassign each item's pooled outcomes, keep each side's trial count.

For an item with ``a`` of ``n1`` (source) and ``b`` of ``n2`` (target) correct,
pooling gives ``c = a + b`` correct among ``n1 + n2`` outcomes. A random
reassignment that keeps ``n1`` outcomes on the source side puts a
hypergeometric number ``a* ~ Hypergeom(ngood=c, nbad=n1 + n2 - c, nsample=n1)``
of the correct ones there, and ``b* = c - a*`` on the target side. Only the
counts matter to the classification, so each replication is one vectorised
draw per item, and the whole classification (Fisher p by table look-up, BH
across the cell's items, the exact threshold) is rerun on the drawn counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from replicate.stats.itemtests import Rule, cell_tests

QUANTILE = 0.95
QUANTILE_METHOD: Final[Literal["linear"]] = "linear"  # numpy.quantile's default (type 7 in R)


@dataclass(frozen=True)
class NullDraws:
    """Per replication, eps and group: counts of improved and regressed items.

    ``counts`` has shape ``(n_resamples, n_eps, n_groups, 2)``; the last axis is
    (improved, regressed).
    """

    counts: np.ndarray

    def shares_p95(self, group_sizes: np.ndarray, *, eps_index: int = 0, group: int | None = None) -> dict:
        c: np.ndarray = self.counts[:, eps_index]  # (R, G, 2)
        if group is None:
            c = c.sum(axis=1)
            size = float(group_sizes.sum())
        else:
            c = c[:, group]
            size = float(group_sizes[group])
        if size == 0 or c.shape[0] == 0:
            return {"p_plus": None, "p_minus": None, "p_chg": None}
        plus = c[:, 0] / size
        minus = c[:, 1] / size
        chg = (c[:, 0] + c[:, 1]) / size
        q = [float(np.quantile(x, QUANTILE, method=QUANTILE_METHOD)) for x in (plus, minus, chg)]
        return {"p_plus": q[0], "p_minus": q[1], "p_chg": q[2]}

    def summary(
        self, group_sizes: np.ndarray, observed: tuple[int, int], *, eps_index: int = 0
    ) -> dict | None:
        """Beyond the 95th percentile, over the whole cell: the null's mean shares,
        Monte Carlo p-values ``(1 + #{null count >= observed count}) / (R + 1)`` for
        P+, P- and Pchg (the share of replications at least as extreme as the data,
        counting the data as one replication; never 0), and the false discoveries:
        every item flagged under the null is one, so ``expected_false_discoveries``
        is the mean number of flagged items per cell and ``p_at_least_one`` the share
        of replications with any. (Under BH at 5% the 95th percentile is 0 by
        construction: P(at least one) is about alpha or less.)
        """
        c = self.counts[:, eps_index].sum(axis=1)  # (R, 2)
        size = float(group_sizes.sum())
        n_rep = c.shape[0]
        if size == 0 or n_rep == 0:
            return None
        stats = {"p_plus": c[:, 0], "p_minus": c[:, 1], "p_chg": c[:, 0] + c[:, 1]}
        obs = {"p_plus": observed[0], "p_minus": observed[1], "p_chg": observed[0] + observed[1]}
        return {
            "replications": int(n_rep),
            "mean": {k: float(v.mean() / size) for k, v in stats.items()},
            "p_value": {k: (1 + int((v >= obs[k]).sum())) / (n_rep + 1) for k, v in stats.items()},
            "expected_false_discoveries": {k: float(v.mean()) for k, v in stats.items()},
            "p_at_least_one": {k: float((v >= 1).mean()) for k, v in stats.items()},
        }


def permutation_null(
    a: np.ndarray,
    n1: np.ndarray,
    b: np.ndarray,
    n2: np.ndarray,
    rule: Rule,
    *,
    n_resamples: int,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
    n_groups: int = 1,
    chunk: int = 256,
) -> NullDraws:
    """Run ``n_resamples`` replications of the classification under the permutation null
    (the same :func:`cell_tests` with the same ``rule`` as the observed data)."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    n1 = np.asarray(n1, np.int64)
    n2 = np.asarray(n2, np.int64)
    n = a.shape[0]
    out = np.zeros((n_resamples, len(rule.eps_list), n_groups, 2), dtype=np.int64)
    if n == 0 or n_resamples == 0:
        return NullDraws(out)
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, np.int64)
    onehot = np.zeros((n, n_groups), dtype=np.int64)
    onehot[np.arange(n), g] = 1
    c = a + b
    bad = n1 + n2 - c
    offset, stride = rule.tables.prepare(n1, n2)
    for start in range(0, n_resamples, chunk):
        r = min(chunk, n_resamples - start)
        a_star = rng.hypergeometric(c, bad, n1, size=(r, n)).astype(np.int64)
        b_star = c - a_star
        t = cell_tests(a_star, n1, b_star, n2, rule, offset=offset, stride=stride)
        for k in range(len(rule.eps_list)):
            out[start : start + r, k, :, 0] = (t.significant & t.up[k]).astype(np.int64) @ onehot
            out[start : start + r, k, :, 1] = (t.significant & t.down[k]).astype(np.int64) @ onehot
    out.flags.writeable = False
    return NullDraws(out)
