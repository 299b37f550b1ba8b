"""Is a fresh collection's figure consistent with a printed one? Intervals, a z test and the verdict rule (pure).

A replication asks the same models the same items again, so the items are
fixed and the sampling error is the trials' (each item's K draws), not the
items'. Two families of figures:

- **a mean over items of per-item rates** (an accuracy, a Δ, a ΔR): with
  items fixed, ``Var(mean_i p̂_i) = sum_i Var(p̂_i) / N²`` and
  ``Var(p̂_i) = p_i (1 - p_i) / K_i``, estimated without bias by
  ``p̂ (1 - p̂) / (K - 1)`` (:func:`mean_rate_variance`; an item with one
  trial gets the largest possible value, 1/4). The printed figure and the
  fresh one are compared by a **two-sample z test** on their difference,
  ``z = (fresh - printed) / sqrt(se_fresh² + se_printed²)``, the printed
  side's standard error estimated from the released table
  (:func:`z_test`).
- **a share of items** (P+, P-, an equivalence share, a screening share):
  each item's class is a draw of its own, so the share's variance is at most
  that of a binomial share over the N items (equality when every item has the
  same chance); the interval for the difference fresh - printed is
  **Newcombe's hybrid score interval** (from the two Wilson intervals), with
  the printed share over the released cell's N items
  (:func:`share_difference`). Conservative: it is never narrower than the
  variation it stands for.

The verdict compares the 95% interval for the difference with 0 and with a
stated tolerance τ (:func:`verdict`): the figure **does not replicate** when
the interval excludes 0; it **replicates** when the interval lies inside
[-τ, τ] (the data show the difference is smaller than τ); otherwise the
fresh data could not tell a difference of τ from none: **underpowered**.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from replicate.stats.intervals import diff_interval, wilson, z_value

REPLICATES = "replicates"
DOES_NOT_REPLICATE = "does not replicate"
UNDERPOWERED = "underpowered"
VERDICTS = (REPLICATES, DOES_NOT_REPLICATE, UNDERPOWERED)

Z_TEST = "two-sample z test on fresh - printed, trial-level standard errors (items fixed)"
SHARE_INTERVAL = "Newcombe hybrid score interval for fresh share - printed share (items as draws)"


def mean_rate_variance(correct: np.ndarray, valid: np.ndarray) -> float:
    """Estimated variance of ``mean_i correct_i / valid_i`` with the items fixed (every ``valid_i > 0``).

    ``sum_i p̂_i (1 - p̂_i) / (valid_i - 1) / N²``; an item with a single trial
    contributes 1/4 (the largest variance one draw can have).
    """
    c = np.asarray(correct, dtype=np.float64)
    k = np.asarray(valid, dtype=np.float64)
    n = c.shape[0]
    if n == 0:
        return math.nan
    p = c / k
    per = np.where(k > 1, p * (1 - p) / np.maximum(k - 1, 1), 0.25)
    return float(per.sum()) / (n * n)


@dataclass(frozen=True, slots=True)
class Comparison:
    """The difference fresh - printed, its 95% interval and, for a test, the p-value."""

    difference: float
    low: float
    high: float
    test: str
    p_value: float | None = None
    statistic: float | None = None

    def to_json(self) -> dict:
        return {"difference": self.difference, "low": self.low, "high": self.high, "test": self.test,
                "p_value": self.p_value, "statistic": self.statistic}


def z_test(fresh: float, printed: float, var_fresh: float, var_printed: float, *,
           confidence_level: float = 0.95) -> Comparison:
    """Two-sided z test of fresh = printed with the two variances given; the interval is fresh - printed ± z se."""
    d = fresh - printed
    se = math.sqrt(var_fresh + var_printed)
    z = z_value(confidence_level)
    if se == 0:
        p = 1.0 if d == 0 else 0.0
        return Comparison(d, d, d, Z_TEST, p, None)
    stat = d / se
    p = 2 * NormalDist().cdf(-abs(stat))
    return Comparison(d, d - z * se, d + z * se, Z_TEST, p, stat)


def share_difference(k_fresh: float, n_fresh: int, printed: float, n_printed: int, *,
                     confidence_level: float = 0.95) -> Comparison:
    """Newcombe's interval for ``k_fresh / n_fresh - printed`` (printed a share over ``n_printed`` items)."""
    lo, hi = diff_interval(np.array([printed * n_printed]), np.array([n_printed]), np.array([k_fresh]),
                           np.array([n_fresh]), method="newcombe", confidence_level=confidence_level)
    return Comparison(k_fresh / n_fresh - printed, float(lo[0]), float(hi[0]), SHARE_INTERVAL)


def wilson_interval(k: int, n: int, *, confidence_level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``k / n``."""
    lo, hi = wilson(np.array([k]), np.array([n]), z_value(confidence_level))
    return float(lo[0]), float(hi[0])


def verdict(low: float, high: float, tolerance: float) -> str:
    """``does not replicate`` (0 outside [low, high]), ``replicates`` (inside [-τ, τ]) or ``underpowered``."""
    if low > 0 or high < 0:
        return DOES_NOT_REPLICATE
    if -tolerance <= low and high <= tolerance:
        return REPLICATES
    return UNDERPOWERED
