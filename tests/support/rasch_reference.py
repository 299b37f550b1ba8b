"""An independent computation of the difficulty-aware baseline: a loop over items and a root finder.

For edge a -> b, each item's (x, y, k): whether a and b are right and how many
other runs are right. Under the Rasch model, given the item's total
t = x + y + k, its pattern has probability proportional to
``exp(x * alpha + lambda_k)``; the fit solves the score equations (observed
minus expected, summed item by item) with :func:`scipy.optimize.root`, and
the baseline is the sum over items of P(x = 1, y = 0 | t).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import root


def patterns(labels, gold, a: int, b: int, items) -> list[tuple[int, int, int]]:
    """(x, y, k) per item valid for both sides (repeats kept), unparsed other runs counting as not right."""
    others = [r for r in range(labels.shape[0]) if r not in (a, b)]
    out = []
    for i in items:
        if labels[a, i] < 0 or labels[b, i] < 0:
            continue
        k = sum(int(labels[r, i] == gold[i]) for r in others)
        out.append((int(labels[a, i] == gold[i]), int(labels[b, i] == gold[i]), k))
    return out


def _alternatives(t: int, live: list[int]) -> list[tuple[int, int, int]]:
    return [(x, y, t - x - y) for x in (0, 1) for y in (0, 1) if t - x - y in live]


def plain_expected(labels, gold, a: int, b: int, items=None) -> tuple[float | None, int, int]:
    """(expected regression count, regressions, items) of edge a -> b over ``items`` (all when None)."""
    items = range(labels.shape[1]) if items is None else items
    pats = patterns(labels, gold, a, b, items)
    n = len(pats)
    if n == 0:
        return None, 0, 0
    old = sum(p[0] for p in pats)
    new = sum(p[1] for p in pats)
    regressed = sum(1 for x, y, _ in pats if x and not y)
    if old == 0 or new == n:
        return 0.0, regressed, n
    if old == n:
        return float(n - new), regressed, n
    if new == 0:
        return float(old), regressed, n
    live = sorted({k for _, _, k in pats})
    free = live[1:]  # lambda of the first live bin is 0

    def probs(theta, t):
        alpha, lam = theta[0], {live[0]: 0.0, **dict(zip(free, theta[1:]))}
        alts = _alternatives(t, live)
        w = [math.exp(x * alpha + lam[k]) for x, _, k in alts]
        s = sum(w)
        return [(alt, v / s) for alt, v in zip(alts, w)]

    def score(theta):
        out = np.zeros(len(theta))
        for x, y, k in pats:
            out[0] += x
            if k in free:
                out[1 + free.index(k)] += 1
            for (x2, _, k2), p in probs(theta, x + y + k):
                out[0] -= x2 * p
                if k2 in free:
                    out[1 + free.index(k2)] -= p
        return out

    sol = root(score, np.zeros(1 + len(free)), method="hybr", tol=1e-14)
    assert np.max(np.abs(score(sol.x))) < 1e-8 * n, sol
    expected = sum(p for x, y, k in pats for (x2, y2, _), p in probs(sol.x, x + y + k) if x2 == 1 and y2 == 0)
    return expected, regressed, n
