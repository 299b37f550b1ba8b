"""One run's labels against gold (pure): accuracy (EM), mean absolute error, Pearson's r.

EM and MAE are ratios of whole numbers, returned exact (:class:`~fractions.Fraction`;
``float()`` of one is the correctly rounded float). Pearson's r comes from
exact integer sums and one division by square roots. Undefined -> None, never 0.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from replicate.stats.fourcell import exact_ratio


def accuracy(correct: int, n: int) -> Fraction | None:
    """EM: ``correct / n``; None when ``n`` is 0."""
    return exact_ratio(correct, n)


def mean_absolute_error(abs_error: int, n: int) -> Fraction | None:
    """MAE: the sum of ``|label - gold|`` over ``n`` scored items, divided by ``n``; None when ``n`` is 0."""
    return exact_ratio(abs_error, n)


def pearson_r(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r of two integer arrays; None when either is constant or there are fewer than two values.

    Computed from exact integer sums (``n Σxy - Σx Σy`` over the square roots of
    the two ``n Σx² - (Σx)²``), clipped to [-1, 1] against rounding.
    """
    x = np.asarray(x, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    n = len(x)
    if n < 2:
        return None
    sx, sy = int(x.sum()), int(y.sum())
    sxx, syy, sxy = int((x * x).sum()), int((y * y).sum()), int((x * y).sum())
    vx, vy = n * sxx - sx * sx, n * syy - sy * sy
    if vx == 0 or vy == 0:
        return None
    cov = n * sxy - sx * sy
    return max(-1.0, min(1.0, cov / (math.sqrt(vx) * math.sqrt(vy))))
