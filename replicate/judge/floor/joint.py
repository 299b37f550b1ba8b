"""Intervals of figures that combine a floor with an edge or a main run: one shared bootstrap (pure).

- the **floor baseline** of an edge: the mean regression rate between repeats
  (``expected_regression_rate``) and the edge's regression rate over it
  (``ratio``);
- the inputs of the **far-beyond rule**: MAIN's smallest change rate against
  the repeats (``closest_change_rate``) and the largest repeat-to-repeat
  change rate (``largest_repeat_change_rate``);
- the ends of the **floor's regression range** (the smallest and the largest
  repeat-pair regression rate), which widen the range by its own sampling error.

Each is a function of several comparisons over different items (the repeats'
shared items, the edge's, MAIN's with each repeat), so every comparison is
resampled with the same draws (:func:`replicate.stats.joint.shared_replicates`)
over the clusters of all their items, and the figure is recomputed in each
replicate: the mean, the ratio, the min and the max. A replicate in which a
part is undefined leaves the figure undefined (counted, left out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.judge.align import Aligned
from replicate.judge.model import KEY_SEP
from replicate.judge.pairs import Policy
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.bootstrap import (
    Clusters,
    Interval,
    cluster_category_counts,
    figures_from_counts,
    interval_list,
    percentile_bounds,
)
from replicate.stats.few_clusters import T_METHOD, stretch
from replicate.stats.fourcell import CHANGE_RATE, REGRESSION_RATE
from replicate.stats.joint import shared_replicates


@dataclass(frozen=True)
class Resampled:
    """Figures over several aligned sets from one set of draws: per side, each figure ``(n_resamples + 1, P_s)``.

    The last row is the observed sample (every cluster once): a figure combined from the parts row by row
    has its point value there, which the interval's arms are stretched from (:mod:`replicate.stats.few_clusters`).
    """

    figures: list[dict[str, np.ndarray]]
    method: str
    cluster: str | None
    clusters: int
    #: per side, how many of the union's clusters (or items) the side has
    present: list[int]

    @property
    def rows(self) -> int:
        """Replicates plus the observed row."""
        return int(next(iter(self.figures[0].values())).shape[0]) if self.figures else 0

    def intervals(self, values: dict[str, np.ndarray], settings: Uncertainty) -> dict[str, Interval]:
        """An :class:`Interval` per named vector ``(n_resamples + 1,)``, replicates then the point (NaN = undefined).

        Percentile bounds of the replicates; a cluster bootstrap's arms stretched from the point for its
        number of clusters; none where the point is undefined.
        """
        names = list(values)
        stacked = np.stack([values[k] for k in names], axis=1)
        lo, hi, undefined = percentile_bounds(stacked[:-1], settings.confidence_level)
        point = stacked[-1]
        method = self.method
        if self.cluster is not None:
            lo, hi = stretch(point, lo, hi, self.clusters, settings.confidence_level)
            method = T_METHOD
        lo, hi = np.where(np.isnan(point), np.nan, np.fmax(lo, 0.0)), np.where(np.isnan(point), np.nan, hi)  # all >= 0
        ivs = interval_list(
            lo, hi, undefined, method=method, replicates=settings.replicates, cluster=self.cluster,
            clusters=self.clusters, confidence_level=settings.confidence_level, seed=settings.seed,
        )
        return dict(zip(names, ivs))


def resample_together(
    sides: Sequence[tuple[Aligned, Sequence[tuple[int, int]]]], settings: Uncertainty, *, policy: Policy
) -> Resampled:
    """Bootstrap the edges of every side ``(aligned, pairs)`` with shared draws over the union of their clusters."""
    keys = [np.asarray(al.keys) for al, _ in sides]
    joined = np.concatenate(keys) if keys else np.zeros(0, dtype=object)
    field = settings.cluster_field
    if field is None:  # the item bootstrap: each distinct item key is a cluster
        union = Clusters.from_values(joined, "item")
        name = None
    else:
        union = Clusters.from_keys(joined, field=field, name=settings.key_fields[field], sep=KEY_SEP)
        name = union.name
    cuts = np.cumsum([len(k) for k in keys])[:-1]
    codes = np.split(union.codes, cuts)
    per_cluster = [
        cluster_category_counts(al.labels, al.gold, list(pairs), c, union.count, policy=policy)
        for (al, pairs), c in zip(sides, codes)
    ]
    reps, method = shared_replicates(per_cluster, items=name is None, n_resamples=settings.replicates, seed=settings.seed)
    observed = [pc.sum(axis=0)[None] for pc in per_cluster]  # the sample itself, as a last row
    return Resampled(
        [figures_from_counts(np.concatenate([r, o])) for r, o in zip(reps, observed)], method, name, union.count,
        [len(np.unique(c)) for c in codes],
    )


def _all_defined(values: np.ndarray) -> np.ndarray:
    """Per replicate row, NaN where any column is NaN (the combined figure is undefined)."""
    return np.isnan(values).any(axis=1)


def floor_baseline_intervals(
    floor: Aligned,
    pairs: Sequence[tuple[int, int]],
    edge: Aligned,
    settings: Uncertainty,
    *,
    policy: Policy,
) -> tuple[dict[str, Interval], str]:
    """Intervals of the floor's mean regression rate and of the edge's rate over it, and how they were resampled.

    ``pairs`` are the repeat pairs whose regression rate enters the mean (those
    defined on the data); the edge is run 0 -> run 1 of ``edge``.
    """
    res = resample_together([(floor, pairs), (edge, [(0, 1)])], settings, policy=policy)
    rates = res.figures[0][REGRESSION_RATE.name]
    mean = np.full(res.rows, np.nan)
    if rates.shape[1]:
        total = np.zeros(res.rows)
        for col in rates.T:  # summed in pair order (a defined order, as a loop over the pairs sums them)
            total += col
        mean = total / rates.shape[1]
        mean[_all_defined(rates)] = np.nan
    edge_rate = res.figures[1][REGRESSION_RATE.name][:, 0]
    ratio = np.full_like(mean, np.nan)
    np.divide(edge_rate, mean, out=ratio, where=(mean > 0) & ~np.isnan(edge_rate))
    ivs = res.intervals({"expected_regression_rate": mean, "ratio": ratio}, settings)
    return ivs, _how(res, "the repeats' pairs", "the edge")


def far_beyond_intervals(
    floor: Aligned,
    pairs: Sequence[tuple[int, int]],
    against: Sequence[Aligned],
    settings: Uncertainty,
    *,
    policy: Policy,
) -> tuple[dict[str, Interval], str]:
    """Intervals of MAIN's smallest change rate against the repeats and of the largest repeat-to-repeat one.

    ``pairs`` are the floor's repeat pairs with a defined change rate;
    ``against`` MAIN aligned with each repeat whose change rate is defined
    (MAIN as run 0).
    """
    res = resample_together([(floor, pairs), *((al, [(0, 1)]) for al in against)], settings, policy=policy)
    largest = _reduce(res.figures[0][CHANGE_RATE.name], np.max, res.rows)
    closest_parts = np.stack([f[CHANGE_RATE.name][:, 0] for f in res.figures[1:]], axis=1) if against else np.zeros((res.rows, 0))
    closest = _reduce(closest_parts, np.min, res.rows)
    ivs = res.intervals({"closest_change_rate": closest, "largest_repeat_change_rate": largest}, settings)
    return ivs, _how(res, "the repeats' pairs", "MAIN against each repeat")


def floor_range_intervals(
    floor: Aligned, pairs: Sequence[tuple[int, int]], settings: Uncertainty, *, policy: Policy
) -> tuple[dict[str, Interval], str]:
    """Intervals of the ends of the floor's regression range: the smallest (``min``) and the largest (``max``)
    repeat-pair regression rate, taken again in each replicate from the same draws.

    ``pairs`` are the repeat pairs with a defined regression rate. Which pair is the largest can change
    from one replicate to the next; the interval of the max allows for that, as one pair's own interval
    does not.
    """
    res = resample_together([(floor, pairs)], settings, policy=policy)
    rates = res.figures[0][REGRESSION_RATE.name]
    n = res.rows
    ivs = res.intervals({"min": _reduce(rates, np.min, n), "max": _reduce(rates, np.max, n)}, settings)
    unit, whole = (f"{res.cluster} clusters", "whole clusters") if res.cluster else ("items", "one by one")
    return ivs, f"every repeat pair resampled with the same draws of the {res.clusters} {unit} ({whole})"


def _reduce(values: np.ndarray, op, n: int) -> np.ndarray:
    if values.shape[1] == 0:
        return np.full(n, np.nan)
    out = op(values, axis=1)
    out[_all_defined(values)] = np.nan
    return out


def _how(res: Resampled, first: str, second: str) -> str:
    """In words: what was resampled together, and how far the item sets differ."""
    unit, whole = (f"{res.cluster} clusters", "whole clusters") if res.cluster else ("items", "one by one")
    text = f"{first} and {second} resampled with the same draws of the {res.clusters} {unit} they cover ({whole})"
    if any(n != res.clusters for n in res.present):
        have = ", ".join(str(n) for n in res.present)
        text += (
            f"; their item sets differ (the parts cover {have} of the {res.clusters}): a drawn "
            f"{'cluster' if res.cluster else 'item'} adds to each part only the items that part has"
        )
    return text
