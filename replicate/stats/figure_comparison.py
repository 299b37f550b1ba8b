"""A fresh figure against the release's, by kind of figure: the pieces a replicated claim is judged with (pure).

:mod:`replicate.stats.replication` gives the intervals, the tests and the
verdict rule; ``replicate verify`` (:mod:`replicate.verify.replication`)
picks one for each metric family and reads the per-item counts from the
engine's tables. This module holds what sits between the two:

- **means over items** (an accuracy, a Δ, a ΔR): each side's trial-level error
  is a ``(variance, spread)`` pair (:data:`Error`), the terms of a sum of
  independent means added (:func:`added`); :func:`mean_comparison` is the
  paired t test with Welch-Satterthwaite degrees of freedom;
- **a pass/fail against a threshold** (a screening rule): the fresh share's
  Wilson interval against the threshold (:func:`threshold_comparison`);
- **a misprint carried** into a comparison: the interval moved by the
  difference between the printed figure and the release's (:func:`shifted`).
"""

from __future__ import annotations

from dataclasses import replace

from replicate.stats.replication import Comparison, paired_mean_difference, satterthwaite_df, wilson_interval

#: The trial-level error of a mean figure: ``(variance, spread)`` (:func:`~replicate.stats.replication.mean_rate_error`).
Error = tuple[float, float]

THRESHOLD_TEST = "Wilson score interval of the fresh share against the threshold"


def added(*errors: Error) -> Error:
    """The ``(variance, spread)`` of a sum of independent means: both add."""
    return sum(v for v, _ in errors), sum(s for _, s in errors)


def mean_comparison(fresh: float, released: float, fresh_error: Error, released_error: Error) -> Comparison:
    """fresh - released for a mean over the same items: the paired t test of
    :func:`~replicate.stats.replication.paired_mean_difference`, its degrees of freedom from both errors."""
    return paired_mean_difference(fresh, released, fresh_error[0], released_error[0],
                                  df=satterthwaite_df(fresh_error, released_error))


def threshold_comparison(k: int, n: int, threshold: float) -> tuple[str, Comparison]:
    """Whether ``k`` of ``n`` items pass a share ``threshold``: ``pass`` when the share's 95% Wilson interval lies
    at or above it, ``fail`` when wholly below, else ``undecided``; and the comparison share - threshold (no test)."""
    lo, hi = wilson_interval(k, n)
    outcome = "pass" if lo >= threshold else "fail" if hi < threshold else "undecided"
    return outcome, Comparison(k / n - threshold, lo - threshold, hi - threshold, THRESHOLD_TEST)


def shifted(c: Comparison, by: float) -> Comparison:
    """The comparison of fresh - (release + ``by``): the interval moved by -``by``; its test (of fresh = release)
    dropped."""
    if by == 0:
        return c
    return replace(c, difference=c.difference - by, low=c.low - by, high=c.high - by, p_value=None, statistic=None)
