"""Student's t distribution (pure): its tail through scipy, its quantile in closed form without scipy.

:func:`t_sf` is scipy's ``stdtr`` (exact far in the tail, at any degrees of
freedom). :func:`t_quantile` needs no scipy: the bootstrap intervals of
``parse``, ``floor`` and ``matrix`` stretch by it (:mod:`replicate.stats.few_clusters`),
and those commands import no scipy (``scipy.special`` costs about 185 ms to
import; a startup test holds them to it).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist


def _t_central(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer ``df`` >= 1: the closed-form finite series (Abramowitz-Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2:  # odd: (2 / pi) (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...)), df - 3 powers
        term = total = 1.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2 / math.pi * (theta + (s * math.cos(theta) * total if df > 1 else 0.0))
    term = total = 1.0  # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...), df - 2 powers
    for k in range(1, df // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


def t_sf(t: float, df: float) -> float:
    """P(T >= t) for Student's t with ``df`` > 0 degrees of freedom (scipy's ``stdtr``: exact far in the tail,
    at any ``df``)."""
    from scipy.special import stdtr

    return float(stdtr(df, -t))


@lru_cache(maxsize=256)
def t_quantile(df: int, q: float) -> float:
    """The ``q`` quantile (q > 1/2) of Student's t with integer ``df``, without scipy: the bootstrap intervals
    of ``parse``, ``floor`` and ``matrix`` stretch by it, and those commands import no scipy (scipy.special
    costs about 185 ms to import). Bisection on the closed-form distribution up to 400 degrees of freedom,
    beyond that the Cornish-Fisher expansion in 1/df to the fourth order; within 1e-12 of scipy's ``stdtrit``
    (tests/stats/test_t_value.py, up to 10^6)."""
    z = NormalDist().inv_cdf(q)
    if df > 400:
        v = float(df)
        return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
                + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
                + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4))
    target, lo, hi = 2 * q - 1, 0.0, 1.0
    while _t_central(hi, df) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if _t_central(mid, df) < target else (lo, mid)
    return (lo + hi) / 2
