"""Intervals of every figure of a four-cell table given as counts, such as one printed in a paper (pure).

A table of counts carries no items, so no cluster key: every interval here
assumes independent items (``assumes`` says so). Where items are clustered
(a TREC query has ~200 judged passages) they are too narrow; an edge read
from files gets the cluster bootstrap instead
(:mod:`replicate.stats.bootstrap`).

- The proportions (:func:`~replicate.stats.fourcell.proportions`: EM old and
  new, regression rate, share of old-correct, backward rate): the Wilson score
  interval of their count (:meth:`FourCell.confidence_intervals`).
- The other edge figures (:func:`resampled`: the paired EM difference, the
  independent regression rate ``EM_old x (1 - EM_new)``, the independence
  ratio), which are not one proportion: the item bootstrap, which needs only
  the counts (each replicate one multinomial draw of n items over the four
  cells, :func:`~replicate.stats.bootstrap.item_replicates`), percentile method.

A figure needing the labels (the change rate) has none: a table of counts has no labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicate.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    INDEPENDENT_ITEMS,
    ITEM_METHOD,
    Interval,
    check_resampling,
    figures_from_counts,
    interval_list,
    item_replicates,
    percentile_bounds,
)
from replicate.stats.cimap import ci_map, wilson_intervals
from replicate.stats.fourcell import FIGURES, FourCell, figure_names, proportions

WILSON_METHOD = "wilson-score"


def resampled() -> tuple[str, ...]:
    """The edge figures of a four-cell table that are not one proportion (and need no labels): bootstrapped
    from the counts."""
    wilson = proportions()
    return tuple(f for f in figure_names("edge") if f not in wilson and not FIGURES[f].needs_labels)


@dataclass(frozen=True)
class CellFigures:
    """Every figure of a four-cell table with its interval (all assuming independent items)."""

    cells: FourCell
    interval: dict[str, Interval]
    replicates: int
    seed: int
    confidence_level: float

    #: A table of counts has no other runs to estimate item difficulty from (see the edges' baselines).
    difficulty_expected: None = None
    difficulty_other_runs: int = 0
    difficulty_interval: None = None
    difficulty_reason: None = None

    def to_json(self) -> dict:
        out = self.cells.to_json()
        out["ci"] = ci_map(self.interval)
        out["uncertainty"] = {
            "replicates": self.replicates,
            "seed": self.seed,
            "cluster": None,
            "confidence_level": self.confidence_level,
            "assumes": INDEPENDENT_ITEMS,
            "note": "a table of counts has no cluster key; for items clustered by query these intervals are too narrow",
        }
        return out


def cell_figures(
    cells: FourCell, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence_level: float = 0.95
) -> CellFigures:
    """Wilson intervals of the proportions and item-bootstrap intervals of the EM difference and the ratio."""
    check_resampling(n_resamples, confidence_level)
    n = cells.n
    out: dict[str, Interval] = wilson_intervals(cells, confidence_level)
    totals = np.array([[cells.both, cells.only_old, cells.only_new, cells.neither, 0]], dtype=np.int64)
    reps = item_replicates(np.random.default_rng(seed), totals, n, n_resamples)
    figures = resampled()
    values = figures_from_counts(reps, figures)
    stacked = np.stack([values[f][:, 0] for f in figures], axis=1)
    lo, hi, undefined = percentile_bounds(stacked, confidence_level)
    intervals = interval_list(
        lo, hi, undefined, method=ITEM_METHOD, replicates=n_resamples, cluster=None, clusters=n,
        confidence_level=confidence_level, seed=seed,
    )
    out.update(zip(figures, intervals))
    return CellFigures(cells, out, n_resamples, seed, confidence_level)
