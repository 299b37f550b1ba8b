"""Stratified random samples without replacement (pure, seeded).

:func:`proportional_allocation` splits a sample size over strata in proportion
to their sizes by the largest-remainder (Hamilton) rule: every stratum gets the
whole part of ``n * size / total``; the units left go to the largest remainders,
ties to the earlier stratum. :func:`stratified_draw` draws that many units of
each stratum uniformly without replacement, strata in their given order, from
one ``numpy.random.default_rng(seed)`` stream.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np


def proportional_allocation(sizes: Sequence[int], n: int) -> list[int]:
    """How many of ``n`` units each stratum of ``sizes`` gets (exact arithmetic; sums to ``n``)."""
    total = sum(sizes)
    if n < 0 or n > total:
        raise ValueError(f"n must lie in [0, {total}] (the units there are), got {n}")
    if total == 0:
        return [0] * len(sizes)
    quotas = [Fraction(n * s, total) for s in sizes]
    alloc = [int(q) for q in quotas]
    left = n - sum(alloc)
    order = sorted(range(len(sizes)), key=lambda i: (-(quotas[i] - alloc[i]), i))
    for i in order[:left]:
        alloc[i] += 1
    return alloc


def stratified_draw(strata: Sequence[np.ndarray], counts: Sequence[int], *, seed: int) -> list[np.ndarray]:
    """For each stratum (an array of unit indices), ``counts[k]`` of them drawn without replacement, sorted."""
    if len(strata) != len(counts):
        raise ValueError("strata and counts must have the same length")
    rng = np.random.default_rng(seed)
    out = []
    for units, k in zip(strata, counts):
        if not 0 <= k <= len(units):
            raise ValueError(f"cannot draw {k} of a stratum of {len(units)}")
        out.append(np.sort(rng.choice(np.asarray(units), size=k, replace=False)) if k else np.zeros(0, dtype=np.int64))
    return out
