"""Rerun floors: the churn between repeats of one model (pure).

A *floor* is what an upgrade edge must exceed before it says anything about the
new version. For repeats R1..Rm of one model and configuration this module
computes, over the items every repeat has:

- the four cells, regression_rate and change_rate of every ordered pair of
  repeats, and the min-max range of each rate (:class:`Span`);
- each repeat's EM against gold, with the mean and the *sample* standard
  deviation (ddof=1) across repeats;
- the Jaccard overlap of the regression sets (the items each ordered pair
  regressed on) between pairs of repeat pairs;
- optionally an edge old -> new set against the regression range and a
  main-results run set against the change range (:mod:`.floor_checks`).

Ranges and placement (below / inside / above, exact at the bounds) live in
:mod:`.floor_range`; the names are re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np

from replicate.errors import UsageError
from replicate.judge.align import Aligned, align
from replicate.judge.floor.checks import (  # noqa: F401  (re-exported)
    FAR_BEYOND_FACTOR,
    FAR_BEYOND_RULE,
    EdgeCheck,
    FloorBounds,
    MainCheck,
    check_edge,
    check_main,
    far_beyond,
    floor_bounds,
)
from replicate.judge.floor.joint import far_beyond_intervals, floor_baseline_intervals, floor_range_intervals
from replicate.judge.floor.paired import PAIRED_RULE, PairedTest, paired_test  # noqa: F401  (re-exported)
from replicate.judge.model import LabelledRun
from replicate.judge.pairs import Policy, outcomes, pair_counts
from replicate.judge.samples import SampleFlag, small_sample_flag
from replicate.judge.uncertainty import Uncertainty, edge_uncertainty, em_intervals
from replicate.labels import absent_figures
from replicate.stats.bootstrap import Interval
from replicate.stats.fourcell import CHANGE_RATE, REGRESSION_RATE, FourCell, as_float, float_ratio
from replicate.stats.gold import accuracy
from replicate.stats.ranges import Placement, Span, place  # noqa: F401


@dataclass(frozen=True, slots=True)
class FloorPair:
    """One ordered pair of repeats: its cells with label changes (figures from :class:`FourCell`)."""

    old: str
    new: str
    cells: FourCell
    interval: dict[str, Interval] | None = None  # bootstrap intervals, when asked for

    @property
    def n(self) -> int:
        return self.cells.n

    @property
    def changed(self) -> int:
        return int(self.cells.changed or 0)

    @property
    def regression(self) -> Fraction | None:
        return self.cells.exact(REGRESSION_RATE.name)

    @property
    def change(self) -> Fraction | None:
        return self.cells.exact(CHANGE_RATE.name)

    @property
    def regression_rate(self) -> float | None:
        return self.cells.regression_rate

    @property
    def change_rate(self) -> float | None:
        return self.cells.change_rate

    def to_json(self) -> dict:
        return {
            "old": self.old,
            "new": self.new,
            "n": self.n,
            "cells": self.cells.figures()["cells"],
            REGRESSION_RATE.name: self.regression_rate,
            CHANGE_RATE.name: self.change_rate,
            "changed": self.changed if self.cells.changed is not None else None,
            **({} if self.interval is None else {"interval": {k: v.to_json() for k, v in self.interval.items()}}),
        }


@dataclass(frozen=True, slots=True)
class Overlap:
    """Jaccard overlap of the regression sets of two ordered repeat pairs."""

    first: tuple[str, str]
    second: tuple[str, str]
    intersection: int
    union: int

    @property
    def jaccard(self) -> float | None:
        return float_ratio(self.intersection, self.union)

    def to_json(self) -> dict:
        return {
            "first": list(self.first),
            "second": list(self.second),
            "intersection": self.intersection,
            "union": self.union,
            "jaccard": self.jaccard,
        }


@dataclass(frozen=True, slots=True)
class RepeatInfo:
    """One repeat: its items before alignment, what alignment dropped, its EM on shared items."""

    name: str
    items: int
    dropped: int
    unparsed: int  # on the shared items
    n: int  # items entering EM under the policy
    correct: int
    interval: dict[str, Interval] | None = None  # of ``em``, with uncertainty settings

    @property
    def em(self) -> float | None:
        return as_float(accuracy(self.correct, self.n))

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "name": self.name,
            "items": self.items,
            "dropped": self.dropped,
            "unparsed": self.unparsed,
            "n": self.n,
            "correct": self.correct,
            "em": self.em,
        }
        if self.interval is not None:
            out["interval"] = {k: v.to_json() for k, v in self.interval.items()}
        return out


@dataclass(frozen=True)
class Floor:
    """The rerun floor of a set of repeats, plus optional edge and main checks."""

    repeats: tuple[RepeatInfo, ...]
    pairs: tuple[FloorPair, ...]
    overlaps: tuple[Overlap, ...]
    shared_items: int
    parser: str
    unparsed_policy: Policy
    edge: EdgeCheck | None = None
    main: MainCheck | None = None
    reader: str = "-"  # the reader(s) of the repeats' files
    settings: Uncertainty | None = None
    sample_flags: tuple[SampleFlag, ...] = ()
    #: Intervals of the regression range's ``min`` and ``max`` (taken again in each replicate), and how resampled.
    range_interval: dict[str, Interval] | None = None
    range_resampling: str | None = None

    @property
    def regression_mean(self) -> Fraction | None:
        """Mean regression rate over the ordered repeat pairs: the rerun baseline of an edge."""
        rates = [p.regression for p in self.pairs if p.regression is not None]
        return sum(rates, Fraction(0)) / len(rates) if rates else None

    @property
    def regression_span_with_error(self) -> FloorBounds | None:
        """The regression range widened by the floor's own sampling error (:func:`.checks.floor_bounds`)."""
        return floor_bounds(self.range_interval, self.regression_span)

    absent: Mapping[str, str] = field(default_factory=dict)  # figure -> why these repeats cannot give it

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.repeats)

    @property
    def regression_span(self) -> Span | None:
        return Span.of([p.regression for p in self.pairs])

    @property
    def change_span(self) -> Span | None:
        return Span.of([p.change for p in self.pairs])

    def change_against_others(self, run: str) -> list[Fraction]:
        """Change rates of repeat ``run`` against each other repeat (both directions are equal)."""
        return [p.change for p in self.pairs if p.old == run and p.change is not None]

    def far_beyond_repeats(self) -> list[tuple[str, list[Fraction], list[Fraction]]]:
        """Each repeat, among three or more, whose closest change rate against the others is far beyond the
        largest between them (:func:`~replicate.judge.floor.checks.far_beyond`, the rule of ``--main``): the
        repeat, its change rates against the others, and theirs between themselves."""
        out = []
        for run in self.names if len(self.names) >= 3 else ():
            mine = self.change_against_others(run)
            others = [p.change for p in self.pairs if run not in (p.old, p.new) and p.change is not None]
            if mine and others and far_beyond(min(mine), max(others)):
                out.append((run, mine, others))
        return out

    @property
    def em_mean(self) -> float | None:
        ems = [r.em for r in self.repeats if r.em is not None]
        return math.fsum(ems) / len(ems) if ems else None

    @property
    def em_sd(self) -> float | None:
        """Sample standard deviation (ddof=1): repeats are a sample of possible reruns."""
        ems = [r.em for r in self.repeats if r.em is not None]
        if len(ems) < 2:
            return None
        return float(np.std(np.array(ems), ddof=1))

    @property
    def jaccard_span(self) -> tuple[float, float, float] | None:
        """(min, mean, max) of the defined Jaccard overlaps."""
        values = [o.jaccard for o in self.overlaps if o.jaccard is not None]
        if not values:
            return None
        return min(values), math.fsum(values) / len(values), max(values)

    @property
    def items_differ(self) -> bool:
        return any(r.dropped for r in self.repeats)

    def to_json(self) -> dict:
        def span(s: Span | None) -> dict:
            return {"min": None, "max": None, "width": None} if s is None else s.to_json()

        js = self.jaccard_span
        out: dict[str, Any] = {
            "repeats": [r.to_json() for r in self.repeats],
            "shared_items": self.shared_items,
            "items_differ": self.items_differ,
            "parser": self.parser,
            "reader": self.reader,
            **({"absent": dict(self.absent)} if self.absent else {}),
            "unparsed_policy": self.unparsed_policy,
            "pairs": [p.to_json() for p in self.pairs],
            REGRESSION_RATE.name: {
                **span(self.regression_span),
                **({} if self.range_interval is None else {
                    "interval": {k: v.to_json() for k, v in self.range_interval.items()},
                    "resampling": self.range_resampling,
                }),
            },
            CHANGE_RATE.name: span(self.change_span),
            "em": {"mean": self.em_mean, "sd": self.em_sd, "sd_ddof": 1},
            "jaccard": {
                "min": None if js is None else js[0],
                "mean": None if js is None else js[1],
                "max": None if js is None else js[2],
                "overlaps": [o.to_json() for o in self.overlaps],
            },
        }
        if self.edge is not None:
            out["edge"] = self.edge.to_json()
        if self.settings is not None:
            with_error = self.regression_span_with_error
            out["uncertainty"] = self.settings.to_json()
            out["regression_rate_with_error"] = None if with_error is None else with_error.to_json()
        out["sample_flags"] = [f.to_json() for f in self.sample_flags]
        if self.main is not None:
            out["main"] = self.main.to_json()
        return out


def regression_sets(aligned: Aligned, pairs: Sequence[tuple[int, int]], *, policy: Policy = "intersect") -> np.ndarray:
    """Boolean matrix (len(pairs), n_items): the items each ordered pair regressed on.

    Item i is in the regression set of (a, b) when run a is right on it and run
    b is wrong (under ``intersect`` both must be parsed; under ``wrong`` an
    unparsed label counts as wrong).
    """
    correct, valid = outcomes(aligned, policy)
    wrong = valid & ~correct
    return np.stack([correct[a] & valid[a] & wrong[b] for a, b in pairs]) if pairs else np.zeros((0, aligned.n_items), bool)


def overlaps(aligned: Aligned, pairs: Sequence[tuple[int, int]], *, policy: Policy = "intersect") -> tuple[Overlap, ...]:
    """Jaccard overlaps between the regression sets of ordered pairs.

    Pairs whose regression sets are disjoint by construction are skipped: when
    the old run of one is the new run of the other, an item cannot be right
    and wrong in that run at once, so the overlap is always 0.
    """
    sets = regression_sets(aligned, pairs, policy=policy)
    f = sets.astype(np.float64)
    inter = np.rint(f @ f.T).astype(np.int64)
    sizes = sets.sum(axis=1)
    names = aligned.names
    out = []
    for p, q in combinations(range(len(pairs)), 2):
        (a, b), (c, d) = pairs[p], pairs[q]
        if a == d or b == c:
            continue
        union = int(sizes[p] + sizes[q] - inter[p, q])
        out.append(Overlap((names[a], names[b]), (names[c], names[d]), int(inter[p, q]), union))
    return tuple(out)




def floor(
    repeats: Sequence[LabelledRun],
    *,
    policy: Policy | None = None,
    edge: tuple[LabelledRun, LabelledRun] | None = None,
    main: LabelledRun | None = None,
    uncertainty: Uncertainty | None = None,
) -> Floor:
    """The rerun floor of ``repeats`` (at least two), with optional edge and main checks.

    Repeats are compared on the items all of them have; each repeat's
    ``dropped`` count says how many of its items others lacked. The edge is
    compared on the items its two runs share and placed against the
    regression-rate range; MAIN is compared with each repeat on the items
    they share and placed against the change-rate range.

    With ``uncertainty`` settings every repeat pair and the edge get bootstrap
    intervals (none with 0 replicates), the edge's verdict allows for its
    sampling error (see :class:`EdgeCheck`), and floors or edges on fewer than
    ``min_items`` items are flagged. An edge over other items than the floor's
    is flagged in any case. ``policy`` None: the repeats' source rule
    (:func:`~replicate.judge.sourcerule.unparsed_choice`), as the command's default.
    """
    from replicate.judge.sourcerule import unparsed_choice

    repeats = tuple(repeats)
    policy = unparsed_choice(repeats, policy).policy
    if len(repeats) < 2:
        raise UsageError(f"a floor needs at least two repeats of one model; got {len(repeats)}")
    aligned = align(repeats)
    counts = pair_counts(aligned, policy=policy)
    r = len(repeats)
    ordered = [(i, j) for i in range(r) for j in range(r) if i != j]
    errors: list[dict[str, Interval] | None] = [None] * len(ordered)
    # the repeat pairs' and the EMs' intervals (none without replicates); clusters parsed once for both
    resampled = uncertainty if uncertainty is not None and uncertainty.resampled else None
    clusters = None if resampled is None else resampled.clusters(aligned.keys)
    if resampled is not None:
        errors = [e.interval for e in edge_uncertainty(aligned, ordered, resampled, policy=policy, clusters=clusters)]
    pairs = tuple(
        FloorPair(aligned.names[i], aligned.names[j], counts.cells(i, j), _pair_figures(err))
        for (i, j), err in zip(ordered, errors)
    )
    range_iv = range_how = None
    defined = [o for o, p in zip(ordered, pairs) if p.regression is not None]
    if resampled is not None and defined:
        range_iv, range_how = floor_range_intervals(aligned, defined, resampled, policy=policy)
    correct, valid = outcomes(aligned, policy)
    unparsed = aligned.unparsed_aligned
    ems: list[dict[str, Interval] | None] = [None] * r
    if resampled is not None:
        ems = [{"em": iv} for iv in em_intervals(aligned, resampled, policy=policy, clusters=clusters)]
    infos = tuple(
        RepeatInfo(
            run.name,
            len(run),
            aligned.dropped[k],
            int(unparsed[k]),
            int(valid[k].sum()),
            int((correct[k] & valid[k]).sum()),
            ems[k],
        )
        for k, run in enumerate(repeats)
    )
    result = Floor(
        repeats=infos,
        pairs=pairs,
        overlaps=overlaps(aligned, ordered, policy=policy),
        shared_items=aligned.n_items,
        parser=" + ".join(aligned.parsers),
        unparsed_policy=policy,
        reader=" + ".join(aligned.readers),
        settings=uncertainty,
        absent={k: v for k, v in absent_figures(aligned.runs).items() if k == CHANGE_RATE.name},
        range_interval=range_iv,
        range_resampling=range_how,
    )
    floor_flags: list[SampleFlag] = []
    if uncertainty is not None:
        # the pairs' n (items parsed on both sides under intersect), as an edge's small flag counts it
        smallest = min(p.cells.n for p in pairs)
        what = "the repeats share" if smallest == aligned.n_items else "the smallest repeat pair is compared on"
        flag = small_sample_flag("floor", smallest, uncertainty.min_items, what, intervals=uncertainty.resampled)
        if flag is not None:
            floor_flags.append(flag)
    edge_check = main_check = None
    if edge is not None:
        edge_check = check_edge(
            *edge, regression=result.regression_span, change=result.change_span, policy=policy,
            uncertainty=uncertainty, floor_mean=result.regression_mean,
            bounds=result.regression_span_with_error,
        )
        edge_flags = _edge_sample_flags(edge, aligned, uncertainty, compared=edge_check.comparison.cells.n)
        edge_check = replace(edge_check, sample_flags=tuple(edge_flags), floor_flags=tuple(floor_flags))
    if main is not None:
        main_check = check_main(main, repeats, change=result.change_span, policy=policy, uncertainty=uncertainty)
    if resampled is not None:
        edge_check, main_check = _joint_intervals(
            aligned, ordered, pairs, edge, edge_check, main, main_check, resampled, policy
        )
    return replace(result, edge=edge_check, main=main_check, sample_flags=tuple(floor_flags))


def _joint_intervals(
    aligned: Aligned,
    ordered: Sequence[tuple[int, int]],
    pairs: Sequence[FloorPair],
    edge: tuple[LabelledRun, LabelledRun] | None,
    edge_check: EdgeCheck | None,
    main: LabelledRun | None,
    main_check: MainCheck | None,
    uncertainty: Uncertainty,
    policy: Policy,
) -> tuple[EdgeCheck | None, MainCheck | None]:
    """The floor baseline's and the far-beyond inputs' intervals (:mod:`.joint`), each from one shared bootstrap."""
    if edge is not None and edge_check is not None and edge_check.floor_mean is not None:
        defined = [o for o, p in zip(ordered, pairs) if p.regression is not None]
        edge_aligned = align(list(edge))
        ivs, how = floor_baseline_intervals(aligned, defined, edge_aligned, uncertainty, policy=policy)
        paired = paired_test(aligned, defined, edge_aligned, uncertainty, policy=policy)
        edge_check = replace(edge_check, baseline_interval=ivs, baseline_resampling=how, paired=paired)
    if main is not None and main_check is not None and main_check.closest is not None:
        defined = [o for o, p in zip(ordered, pairs) if p.change is not None]
        against = [align([main, aligned.runs[k]]) for k, c in enumerate(main_check.against) if c.cells.exact(CHANGE_RATE.name) is not None]
        ivs, how = far_beyond_intervals(aligned, defined, against, uncertainty, policy=policy)
        main_check = replace(main_check, intervals=ivs, resampling=how)
    return edge_check, main_check


#: The figures a floor reports per repeat pair, each with its interval.
PAIR_FIGURES = (REGRESSION_RATE.name, CHANGE_RATE.name)


def _pair_figures(interval: dict[str, Interval] | None) -> dict[str, Interval] | None:
    return None if interval is None else {k: interval[k] for k in PAIR_FIGURES}


def _edge_sample_flags(
    edge: tuple[LabelledRun, LabelledRun], aligned: Aligned, uncertainty: Uncertainty | None, *, compared: int
) -> list[SampleFlag]:
    """An edge over other items than the floor's (how many each side lacks), and an edge compared on too few.

    ``compared`` is the edge's n (its shared items parsed on both sides under intersect), the n its
    ``small_sample`` and verdict are shown with.
    """
    old, new = edge
    where = f"{old.name} -> {new.name}"
    edge_items = set(old.keys.tolist()) & set(new.keys.tolist())
    floor_items = set(aligned.keys.tolist())
    flags = []
    only_edge, only_floor = len(edge_items - floor_items), len(floor_items - edge_items)
    if only_edge or only_floor:
        flags.append(SampleFlag(
            "items_differ_from_floor", where,
            f"the edge has {len(edge_items)} items and the floor {len(floor_items)}: {only_edge} of the edge's are not "
            f"in the floor and {only_floor} of the floor's are not in the edge; edge and floor measure different items",
        ))
    if uncertainty is not None:
        flag = small_sample_flag(
            where, compared, uncertainty.min_items, "the edge is compared on", intervals=uncertainty.resampled
        )
        if flag is not None:
            flags.append(flag)
    return flags
