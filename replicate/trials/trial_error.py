"""The trial-level sampling error of the engine's mean figures, the items fixed (pure: a trials table in).

A replication asks the same models the same items again, so the error of a
mean over items is the trials' (each item's K draws), not the items'. Each
figure's error is a ``(variance, spread)`` pair
(:func:`replicate.stats.replication.mean_rate_error`; the spread gives the
Welch-Satterthwaite degrees of freedom), and the terms of a sum of
independent means add (:func:`replicate.stats.figure_comparison.added`):

- a model's accuracy on a benchmark: its per-item rates over the items with a
  non-error trial (the loose reading: over the items that have one);
- a cell's Δ: the source's and the target's mean rates;
- a cell's ΔR = R(target) - R(source), R = mean loose - mean strict per side,
  over the items with a loose reading on both sides: the variances of the four
  means add (the loose and strict readings of one trial are positively
  correlated, so this over-states the variance: a conservative interval).
"""

from __future__ import annotations

import numpy as np

from replicate.stats.figure_comparison import Error, added
from replicate.stats.replication import mean_rate_error
from replicate.trials.counts import aggregate
from replicate.trials.load import TrialsTable
from replicate.trials.results import CellResult


class TrialErrors:
    """The errors of the mean figures of one trials table (its counts aggregated once)."""

    def __init__(self, table: TrialsTable) -> None:
        self.counts = c = aggregate(table)[0]
        self._unit = {(c.benchmarks[int(b)], it): u for u, (b, it) in enumerate(zip(c.unit_benchmark.tolist(), c.unit_item))}

    def accuracy(self, model: str, benchmark: str, *, loose: bool = False) -> Error:
        """The error of ``model``'s accuracy on ``benchmark`` (strict, or ``loose``)."""
        c = self.counts
        m, b = c.models.index(model), c.benchmarks.index(benchmark)
        units = np.flatnonzero(c.unit_benchmark == b)
        correct, n = (c.loose_correct, c.loose_n) if loose else (c.correct, c.valid)
        u = units[n[m, units] > 0]
        return mean_rate_error(correct[m, u], n[m, u])

    @staticmethod
    def delta(cell: CellResult) -> Error:
        """The error of a cell's Δ: its two sides' mean rates over the cell's items."""
        rows = cell.rows
        assert rows is not None
        return added(mean_rate_error(rows.a, rows.n1), mean_rate_error(rows.b, rows.n2))

    def delta_r(self, cell: CellResult) -> Error:
        """The error of a cell's ΔR: the four means of its items with a loose reading on both sides."""
        rows, c = cell.rows, self.counts
        assert rows is not None
        units = np.array([self._unit[(b, it)] for b, it in zip(rows.benchmarks, rows.items)], dtype=np.int64)
        s, t = c.models.index(cell.source), c.models.index(cell.target)
        u = units[(c.loose_n[s, units] > 0) & (c.loose_n[t, units] > 0)]
        parts = [mean_rate_error(c.loose_correct[m, u], c.loose_n[m, u]) for m in (s, t)]
        parts += [mean_rate_error(c.correct[m, u], c.valid[m, u]) for m in (s, t)]
        return added(*parts)
