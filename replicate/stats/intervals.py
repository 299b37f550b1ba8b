"""Confidence intervals, vectorised: one proportion (Wilson), a difference of two independent proportions, and a mean accuracy.

:func:`wilson` is the one Wilson score interval; :func:`wilson_interval` is it for one count
(the four-cell figures), and Newcombe's interval below is built from it.

Difference ``d = x_t / n_t - x_s / n_s`` (target minus source), at
``confidence_level`` (default 0.95), by one of :data:`DIFF_METHODS`:

- ``newcombe``: Newcombe's hybrid score interval (1998, method 10), built from
  the two Wilson score intervals. The default; it stays inside [-1, 1] and
  behaves well at 0 and 1.
- ``wald``: ``d ± z * sqrt(p_s (1 - p_s) / n_s + p_t (1 - p_t) / n_t)``, clipped
  to [-1, 1]. Degenerate (zero width) when both sides are all-correct or all-wrong.
- ``agresti-caffo``: the Wald interval after adding one success and one failure
  to each side (Agresti & Caffo 2000), clipped to [-1, 1]. Its centre is the
  adjusted estimate, so it need not contain the raw ``d``.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Literal, get_args

import numpy as np

#: Intervals for a difference of two proportions.
DiffMethod = Literal["newcombe", "wald", "agresti-caffo"]
DIFF_METHODS: tuple[DiffMethod, ...] = get_args(DiffMethod)


def z_value(confidence_level: float) -> float:
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must lie in (0, 1), got {confidence_level}")
    return NormalDist().inv_cdf(0.5 + confidence_level / 2)


def wilson(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``x / n`` (``n > 0``)."""
    x = np.asarray(x, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    p = x / n
    z2 = z * z
    centre = (x + z2 / 2) / (n + z2)
    half = z * np.sqrt(n) / (n + z2) * np.sqrt(p * (1 - p) + z2 / (4 * n))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def wilson_interval(k: int, n: int, *, confidence_level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for ``k`` successes in ``n`` trials: :func:`wilson` of one count (None when n == 0)."""
    if n == 0:
        return None
    lo, hi = wilson(np.array([k]), np.array([n]), z_value(confidence_level))
    return float(lo[0]), float(hi[0])


def diff_interval(
    x_s: np.ndarray,
    n_s: np.ndarray,
    x_t: np.ndarray,
    n_t: np.ndarray,
    *,
    method: DiffMethod = "newcombe",
    confidence_level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval for ``x_t / n_t - x_s / n_s``; every ``n`` must be > 0."""
    if method not in DIFF_METHODS:
        raise ValueError(f"method must be one of {', '.join(DIFF_METHODS)}; got {method!r}")
    z = z_value(confidence_level)
    x_s = np.asarray(x_s, dtype=np.float64)
    n_s = np.asarray(n_s, dtype=np.float64)
    x_t = np.asarray(x_t, dtype=np.float64)
    n_t = np.asarray(n_t, dtype=np.float64)
    if method == "newcombe":
        p_t, p_s = x_t / n_t, x_s / n_s
        l_t, u_t = wilson(x_t, n_t, z)
        l_s, u_s = wilson(x_s, n_s, z)
        d = p_t - p_s
        lo = d - np.sqrt((p_t - l_t) ** 2 + (u_s - p_s) ** 2)
        hi = d + np.sqrt((u_t - p_t) ** 2 + (p_s - l_s) ** 2)
        return lo, hi
    if method == "agresti-caffo":
        x_s, n_s, x_t, n_t = x_s + 1, n_s + 2, x_t + 1, n_t + 2
    p_t, p_s = x_t / n_t, x_s / n_s
    d = p_t - p_s
    se = np.sqrt(p_s * (1 - p_s) / n_s + p_t * (1 - p_t) / n_t)
    return np.clip(d - z * se, -1.0, 1.0), np.clip(d + z * se, -1.0, 1.0)


MEAN_INTERVAL = "normal-over-items"


def mean_interval(
    values: np.ndarray, *, confidence_level: float = 0.95, clip: tuple[float, float] = (0.0, 1.0)
) -> tuple[float | None, float | None]:
    """Normal interval for a mean of per-item rates, items as the unit of sampling.

    ``mean ± z * sd / sqrt(n)`` with the sample standard deviation (ddof=1) of
    the per-item rates, clipped to ``clip`` ([0, 1] for rates; [-1, 1] for
    per-item differences, the paired interval of a difference of two mean
    accuracies over the same items). Treating items (not trials) as the
    sampling unit accounts for trials of one item being alike. Undefined (None)
    with fewer than two items.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return None, None
    z = z_value(confidence_level)
    m = float(v.mean())
    half = z * float(v.std(ddof=1)) / np.sqrt(v.size)
    return max(clip[0], m - half), min(clip[1], m + half)
