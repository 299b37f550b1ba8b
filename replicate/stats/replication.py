"""Is a fresh collection's figure consistent with the release's? Intervals, tests and the verdict rule (pure).

A replication asks the same models the same items again, so the items are
fixed and the sampling error is the trials' (each item's K draws), not the
items'. :mod:`replicate.verify.replication` compares the fresh figure with the
release's on the same items (the items both hold):

- **a mean over items of per-item rates** (an accuracy, a Δ, a ΔR): with
  items fixed, ``Var(mean_i p̂_i) = sum_i Var(p̂_i) / N²`` and
  ``Var(p̂_i) = p_i (1 - p_i) / K_i``, estimated without bias by
  ``p̂ (1 - p̂) / (K - 1)`` (:func:`mean_rate_variance`; an item with one
  trial gets the largest possible value, 1/4); the two sides' variances add
  (:func:`paired_mean_difference`, a t test with Welch-Satterthwaite degrees
  of freedom: each item's variance estimate counts K - 1 of them,
  :func:`mean_rate_error`, :func:`satterthwaite_df`; with few trials per item
  the summed estimate is noisy and a z test rejects too often, measured
  5.2-6.0% at K = 2-5, against 4.9-5.1% with t, see
  bench/bench_replication_calibration.py).
- **the share of items in a class** (P+, P-, a class share): each item's
  class on the two sides crossed into a 2 x 2 table, Newcombe's paired score
  interval (:func:`paired_share_difference`); "does not replicate" also needs
  the exact McNemar test on the discordant items (:func:`paired_share_verdict`).
- **a share with no per-item reading** (a null percentile, a screening
  share): Newcombe's hybrid score interval for two independent shares
  (:func:`share_difference`), conservative.

The verdict compares the 95% interval for the difference with 0 and with a
stated tolerance τ (:func:`verdict`): the figure **does not replicate** when
the interval excludes 0; it **replicates** when the interval lies inside
[-τ, τ] (the data show the difference is smaller than τ); otherwise the
fresh data could not tell a difference of τ from none: **underpowered**.
(:func:`z_test` and :func:`share_difference` also serve a comparison with a
printed figure whose items are the fresh ones.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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


def mean_rate_error(correct: np.ndarray, valid: np.ndarray) -> tuple[float, float]:
    """``(variance, spread)`` of ``mean_i correct_i / valid_i`` with the items fixed (every ``valid_i > 0``).

    ``variance = sum_i v_i`` with ``v_i = p̂_i (1 - p̂_i) / (valid_i - 1) / N²``; an item with a single trial
    contributes 1/4 / N² (the largest variance one draw can have: fixed, not estimated). ``spread =
    sum_i v_i² / (valid_i - 1)`` over the estimated terms: the denominator of :func:`satterthwaite_df`.
    """
    c = np.asarray(correct, dtype=np.float64)
    k = np.asarray(valid, dtype=np.float64)
    n = c.shape[0]
    if n == 0:
        return math.nan, math.nan
    p = c / k
    per = np.where(k > 1, p * (1 - p) / np.maximum(k - 1, 1), 0.25) / (n * n)
    spread = np.where(k > 1, per * per / np.maximum(k - 1, 1), 0.0)
    return float(per.sum()), float(spread.sum())


def mean_rate_variance(correct: np.ndarray, valid: np.ndarray) -> float:
    """The variance of :func:`mean_rate_error`: ``sum_i p̂_i (1 - p̂_i) / (valid_i - 1) / N²``."""
    return mean_rate_error(correct, valid)[0]


def satterthwaite_df(*errors: tuple[float, float]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of ``(variance, spread)`` terms (:func:`mean_rate_error`):
    ``(sum variance)² / sum spread``; infinite when nothing is estimated (no spread)."""
    total = math.fsum(v for v, _ in errors)
    spread = math.fsum(s for _, s in errors)
    return total * total / spread if spread > 0 else math.inf


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


PAIRED_SHARE_INTERVAL = ("Newcombe's paired score interval (method 10) for fresh share - released share "
                         "on the same items")
PAIRED_T_TEST = ("paired t test on fresh - released over the same items, trial-level standard errors (items fixed), "
                 "Welch-Satterthwaite degrees of freedom")


def paired_share_difference(both: int, only_released: int, only_fresh: int, neither: int, *,
                            confidence_level: float = 0.95) -> Comparison:
    """Newcombe's interval for a difference of two shares over the same items (paired; 1998, method 10).

    The four counts cross the two readings of each item: in the class on both
    sides, on the released side only, on the fresh side only, on neither. The
    difference is ``(only_fresh - only_released) / n``; the interval combines
    the two Wilson intervals of the margins with the correlation of the two
    readings (``phi``, its numerator shrunk by ``n / 2`` towards 0 when positive,
    as Newcombe does), so items both readings put in the class count as
    agreement, not as two independent draws.
    """
    n = both + only_released + only_fresh + neither
    if n <= 0:
        raise ValueError("paired_share_difference needs at least one item")
    z = z_value(confidence_level)
    k_f, k_r = both + only_fresh, both + only_released
    p_f, p_r = k_f / n, k_r / n
    (lf, uf), (lr, ur) = ((float(a[0]), float(b[0])) for a, b in
                          (wilson(np.array([k_f]), np.array([n]), z), wilson(np.array([k_r]), np.array([n]), z)))
    margins = float(k_f) * (n - k_f) * k_r * (n - k_r)
    phi = 0.0
    if margins > 0:
        cross = float(both) * neither - float(only_released) * only_fresh
        shrunk = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = shrunk / math.sqrt(margins)
    d = p_f - p_r
    low = d - math.sqrt(max((p_f - lf) ** 2 - 2 * phi * (p_f - lf) * (ur - p_r) + (ur - p_r) ** 2, 0.0))
    high = d + math.sqrt(max((uf - p_f) ** 2 - 2 * phi * (uf - p_f) * (p_r - lr) + (p_r - lr) ** 2, 0.0))
    return Comparison(d, max(low, -1.0), min(high, 1.0), PAIRED_SHARE_INTERVAL)


def paired_mean_difference(fresh: float, released: float, var_fresh: float, var_released: float, *,
                           df: float = math.inf, confidence_level: float = 0.95) -> Comparison:
    """A t test of a mean over the same items on both sides (fresh - released; trial noise only).

    ``df`` (:func:`satterthwaite_df`) is rounded down to an integer (a wider interval); infinite or above
    10^6 it is the z test (:func:`z_test`).
    """
    if df > 1e6:
        c = z_test(fresh, released, var_fresh, var_released, confidence_level=confidence_level)
        return Comparison(c.difference, c.low, c.high, PAIRED_T_TEST, c.p_value, c.statistic)
    from replicate.stats.student_t import t_quantile, t_sf

    k = max(int(math.floor(df)), 1)
    d = fresh - released
    se = math.sqrt(var_fresh + var_released)
    if se == 0:
        return Comparison(d, d, d, PAIRED_T_TEST, 1.0 if d == 0 else 0.0, None)
    stat = d / se
    half = t_quantile(k, 0.5 + confidence_level / 2) * se
    return Comparison(d, d - half, d + half, PAIRED_T_TEST, min(2 * t_sf(abs(stat), k), 1.0), stat)


def paired_share_verdict(c: Comparison, tolerance: float, *, alpha: float = 0.05) -> str:
    """:func:`verdict` for a paired share whose ``p_value`` tests "the same truth" on the same items.

    Newcombe's interval alone excludes 0 too often when few items change class,
    and the items' classes are not independent draws (one side's BH step decides
    them together): **does not replicate** needs the interval to exclude 0 and
    the test to reject (verify gives the swap null's p, :mod:`replicate.stats.swapnull`);
    when the interval excludes 0 but the test does not reject, the interval still
    decides **replicates** (inside [-τ, τ]), otherwise **underpowered**.
    """
    v = verdict(c.low, c.high, tolerance)
    if v != DOES_NOT_REPLICATE or c.p_value is None or c.p_value < alpha:
        return v
    return not_rejected(c.low, c.high, tolerance)


def not_rejected(low: float, high: float, tolerance: float) -> str:
    """The verdict of an interval that excludes 0 while its test does not reject: ``replicates`` inside
    [-τ, τ], else ``underpowered`` (never ``does not replicate``)."""
    return REPLICATES if -tolerance <= low and high <= tolerance else UNDERPOWERED


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given): the i-th smallest p times (m - i), made
    non-decreasing in that order and capped at 1. Rejecting where the adjusted p is below alpha keeps the
    chance of any false rejection among the m tests at most alpha, whatever their dependence."""
    m = len(p_values)
    order = sorted(range(m), key=lambda k: p_values[k])
    out = [1.0] * m
    running = 0.0
    for rank, k in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[k])))
        out[k] = running
    return out


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
