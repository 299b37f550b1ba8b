"""Per-model accuracy and strict vs loose readings (pure: counts in, result objects out).

Strict vs loose compares the two readings *per response*: over an item's non-error
trials that carry a loose reading, the share read correct loosely minus the share of
the same responses read correct strictly. Trials without a loose reading, and API
errors (whatever their ``correct_loose`` says), are in neither.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from replicate.stats.intervals import MEAN_INTERVAL, mean_interval
from replicate.stats.rational import mean_of_ratios
from replicate.trials.counts import Counts
from replicate.trials.load import CATEGORIES
from replicate.trials.results import Looseness, ModelAccuracy


def strict_loose_means(counts: Counts, m: int, units: np.ndarray) -> tuple[Fraction, Fraction]:
    """Over units that each have a loose reading: the mean strict and mean loose rate of the same responses, exactly."""
    n = counts.loose_n[m, units]
    strict = mean_of_ratios(counts.loose_strict_correct[m, units], n)
    loose = mean_of_ratios(counts.loose_correct[m, units], n)
    assert strict is not None and loose is not None  # callers pass at least one unit
    return strict, loose


def looseness(counts: Counts, s: int, t: int, keep: np.ndarray) -> Looseness | None:
    """R = mean loose - mean strict per side, over the kept units with a loose reading on both."""
    both = (counts.loose_n[s, keep] > 0) & (counts.loose_n[t, keep] > 0)
    if not both.any():
        return None
    u = keep[both]

    def r_of(m: int) -> Fraction:
        strict, loose = strict_loose_means(counts, m, u)
        return loose - strict

    return Looseness(int(both.sum()), r_of(s), r_of(t))


def accuracy_table(counts: Counts) -> tuple[ModelAccuracy, ...]:
    """Per model and benchmark: mean over items of p̂ with a normal-over-items 95% interval."""
    out = []
    for m, model in enumerate(counts.models):
        for k, bench in enumerate(counts.benchmarks):
            units = np.flatnonzero((counts.unit_benchmark == k) & (counts.trials[m] > 0))
            if units.size == 0:
                continue
            valid = counts.valid[m, units]
            ok = units[valid > 0]
            rates = counts.correct[m, ok] / counts.valid[m, ok]
            lo, hi = mean_interval(rates)
            cats = counts.categories[m, units].sum(axis=0)
            lo_units = ok[counts.loose_n[m, ok] > 0]
            strict = loose = None
            if lo_units.size:
                strict, loose = strict_loose_means(counts, m, lo_units)
            out.append(
                ModelAccuracy(
                    model=model,
                    benchmark=bench,
                    n_items=int(ok.size),
                    items_without_valid_trials=int(units.size - ok.size),
                    trials=int(counts.trials[m, units].sum()),
                    categories={c: int(cats[i]) for i, c in enumerate(CATEGORIES)},
                    accuracy_exact=mean_of_ratios(counts.correct[m, ok], counts.valid[m, ok]),
                    ci_low=lo,
                    ci_high=hi,
                    interval=MEAN_INTERVAL,
                    strict_exact=strict,
                    loose_exact=loose,
                    loose_items=int(lo_units.size),
                )
            )
    return tuple(out)
