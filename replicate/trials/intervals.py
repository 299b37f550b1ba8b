"""Intervals of the K-trial figures, in the shape every command's JSON uses (pure).

Each is a :class:`replicate.stats.bootstrap.Interval` (``low``, ``high``,
``method``, ``replicates``, ``cluster``, ...), as the judge commands carry, so
one reader reads both. Items are the sampling unit (the trials of one item are
alike, and the per-item rates already hold the trial noise), so every interval
here assumes independent items; none is resampled (``replicates`` and ``seed``
are null):

- a share of a cell's items (P+, P-, Pchg, equivalent, inconclusive) and a
  screening share: the Wilson score interval of the count over the items;
- a mean accuracy (a side of a cell, a row of the accuracy table): the normal
  interval over items (:func:`replicate.stats.intervals.mean_interval`);
- delta, the difference of the two sides' mean accuracies over the same items:
  the paired normal interval over items of the per-item differences
  ``b/n2 - a/n1``.

P+ and P- stay lower bounds on churn at this K (see ``power_at_reference``):
their interval is the sampling error of the share this design *flags*, not of
the share of items that moved.
"""

from __future__ import annotations

import numpy as np

from replicate.stats.bootstrap import INDEPENDENT_ITEMS, Interval
from replicate.stats.countintervals import WILSON_METHOD
from replicate.stats.intervals import MEAN_INTERVAL, mean_interval, wilson_interval

CONFIDENCE_LEVEL = 0.95

#: The cell figures that are shares of its items, with the class counts they are made of.
SHARE_FIGURES = ("p_plus", "p_minus", "p_chg", "equivalent", "inconclusive")


def computed(low: float | None, high: float | None, method: str, n: int) -> Interval:
    """An interval computed over ``n`` independent items (not resampled)."""
    return Interval(low, high, method, None, None, n, CONFIDENCE_LEVEL, None, 0, INDEPENDENT_ITEMS)


def share_interval(k: int, n: int) -> Interval:
    """Wilson score interval of ``k`` of ``n`` items (null bounds over no items)."""
    ci = wilson_interval(k, n, confidence_level=CONFIDENCE_LEVEL)
    low, high = (None, None) if ci is None else ci
    return computed(low, high, WILSON_METHOD, n)


def mean_rate_interval(rates: np.ndarray, *, paired_difference: bool = False) -> Interval:
    """Normal interval over items of a mean of per-item rates (or, paired, of per-item differences)."""
    clip = (-1.0, 1.0) if paired_difference else (0.0, 1.0)
    low, high = mean_interval(rates, confidence_level=CONFIDENCE_LEVEL, clip=clip)
    return computed(low, high, MEAN_INTERVAL, int(np.asarray(rates).size))


def share_intervals(counts: dict[str, int], n: int) -> dict[str, Interval]:
    """The Wilson interval of each share of :data:`SHARE_FIGURES` (``counts``: its count of the ``n`` items)."""
    return {fig: share_interval(counts[fig], n) for fig in SHARE_FIGURES}


def cell_intervals(
    a: np.ndarray, n1: np.ndarray, b: np.ndarray, n2: np.ndarray, counts: dict[str, int]
) -> dict[str, Interval]:
    """A cell's (or a stratum's) delta (paired over its items) and its shares of items, each with its interval."""
    n = int(a.size)
    d = b / n2 - a / n1 if n else np.zeros(0)
    return {"delta": mean_rate_interval(d, paired_difference=True), **share_intervals(counts, n)}


#: The single draw's rates (one trial per item per model), each a share of the cell's items.
SINGLE_DRAW_FIGURES = ("correct_to_incorrect", "incorrect_to_correct", "changed")


def single_draw_intervals(correct_to_incorrect: int, incorrect_to_correct: int, n: int) -> dict[str, Interval]:
    """The Wilson interval of each single-draw rate over the ``n`` items."""
    counts = (correct_to_incorrect, incorrect_to_correct, correct_to_incorrect + incorrect_to_correct)
    return {fig: share_interval(k, n) for fig, k in zip(SINGLE_DRAW_FIGURES, counts)}
