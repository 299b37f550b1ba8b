"""Checks set against a rerun floor (pure): an upgrade edge, and a main-results run.

- :func:`check_edge`: the edge old -> new, compared on the items its two runs
  share, placed against the floor's regression-rate range (below / inside /
  above, with the margin);
- :func:`check_main`: a main-results run compared with each repeat, its
  closest change rate placed against the repeat-to-repeat change range, and
  ``far_beyond`` per :data:`FAR_BEYOND_RULE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Mapping, Sequence

from replicate.errors import Message, Param, UsageError
from replicate.judge.compare import Comparison, compare
from replicate.judge.floor.paired import PAIRED_RULE, PairedTest
from replicate.judge.model import LabelledRun
from replicate.judge.pairs import Policy
from replicate.judge.samples import SampleFlag
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.bootstrap import Interval
from replicate.stats.fourcell import CHANGE_RATE, REGRESSION_RATE
from replicate.stats.ranges import Placement, Span, Verdict, place

#: Where a main run falls against the repeats: a placement, far beyond them, or no verdict on too little data.
MainVerdict = Literal[Verdict, "far_beyond", "insufficient_data"]
#: The verdict where the command's own small-sample flag is raised (or the edge's interval has too few clusters).
INSUFFICIENT: Literal["insufficient_data"] = "insufficient_data"
#: A run is far beyond the repeats when its smallest change rate against them
#: exceeds this multiple of the largest repeat-to-repeat change rate.
FAR_BEYOND_FACTOR = 2
#: The rule behind ``far_beyond`` in words (shown in outputs and docs).
FAR_BEYOND_RULE = (
    "far_beyond: even the repeat closest to MAIN differs from it on more than twice "
    "the largest repeat-to-repeat change rate"
)


def far_beyond(closest: Fraction, largest_repeat_change: Fraction) -> bool:
    """:data:`FAR_BEYOND_RULE`: a run's smallest change rate against the repeats vs their largest.

    One rule for ``replicate floor --main`` and for a repeat produced differently
    (:meth:`~replicate.judge.floor.Floor.far_beyond_repeats`, each repeat in turn set against the others;
    verify flags it).
    """
    return closest > FAR_BEYOND_FACTOR * largest_repeat_change


@dataclass(frozen=True, slots=True)
class EdgeCheck:
    """An upgrade edge set against the floor of its target model.

    Without sampling error (``interval`` None) the verdict places the point
    rate: below / inside / above the floor's range. With intervals it is the
    paired test's (:data:`PAIRED_RULE`, ``paired``): ``above`` when the t interval of
    the edge's rate minus the repeat pairs' mean lies above 0, ``below`` under
    it, else ``inside`` (the rate lies in the range) or ``indistinguishable``;
    ``insufficient_data`` on too few items or clusters. :attr:`range_verdict`
    keeps the older :data:`INTERVAL_RULE` (the whole interval against the range
    widened by the floor's own sampling error, ``bounds``).
    """

    comparison: Comparison
    regression: Placement | None  # None when the edge has no items
    change: Placement | None
    interval: Interval | None = None
    span: Span | None = None  # the floor's regression-rate range the edge is set against
    floor_mean: Fraction | None = None  # mean regression rate between repeats (the rerun baseline)
    sample_flags: tuple[SampleFlag, ...] = ()
    bounds: FloorBounds | None = None  # the floor's range with its own sampling error
    #: Intervals of ``floor_mean`` (``expected_regression_rate``) and ``floor_ratio`` (``ratio``), resampled jointly.
    baseline_interval: dict[str, Interval] | None = None
    baseline_resampling: str | None = None  # how, in words
    #: The floor's own small-sample flag, if raised (no verdict against a floor of too few items either).
    floor_flags: tuple[SampleFlag, ...] = ()
    #: The edge against the repeat pairs' mean, paired by cluster (with intervals; None: no test).
    paired: PairedTest | None = None

    @property
    def point_verdict(self) -> str | None:
        return None if self.regression is None else self.regression.verdict

    @property
    def insufficient(self) -> str | None:
        """Why there is no verdict: a small-sample flag of the edge or the floor, or too few clusters; else None."""
        reasons = [f"{f.where}: {f.message}" for f in (*self.sample_flags, *self.floor_flags) if f.code == "small_sample"]
        if self.interval is not None and self.interval.reason is not None:
            reasons.append(self.interval.reason)
        return "; ".join(reasons) or None

    @property
    def verdict(self) -> str | None:  # a Verdict, 'indistinguishable' or 'insufficient_data'
        if self.regression is None:
            return None
        if self.insufficient is not None:
            return INSUFFICIENT
        if self.span is None:
            return self.regression.verdict
        if self.paired is not None:
            return self.paired.verdict or ("inside" if self.regression.verdict == "inside" else "indistinguishable")
        return self.range_verdict

    @property
    def range_verdict(self) -> str | None:
        """:data:`INTERVAL_RULE` (the edge's interval against the widened range), whatever rule gives the verdict."""
        if self.regression is None or self.span is None:
            return None if self.regression is None else self.regression.verdict
        return interval_verdict(self.regression.exact, self.span, self.interval, self.bounds)

    @property
    def rule(self) -> str:
        """The rule behind :attr:`verdict` in words."""
        if self.paired is not None:
            return PAIRED_RULE
        return INTERVAL_RULE if self.interval is not None else POINT_RULE

    def insufficient_json(self) -> dict | None:
        """The reason for ``insufficient_data`` with the edge's n and clusters (None when there is a verdict)."""
        reason = self.insufficient
        if reason is None:
            return None
        err = self.comparison.uncertainty
        return {"reason": reason, "n": self.comparison.cells.n,
                "clusters": None if err is None else err.clusters, "cluster": None if err is None else err.cluster}

    @property
    def floor_ratio(self) -> float | None:
        """The edge's regression rate over the mean rerun regression rate (how many times rerun noise)."""
        if self.regression is None or not self.floor_mean:
            return None
        return float(self.regression.exact / self.floor_mean)

    def to_json(self) -> dict:
        out = self.comparison.to_json()
        out.pop("warnings", None)  # the load's, which the command's JSON carries once, at its top
        out["verdict"] = self.verdict
        out["insufficient_data"] = self.insufficient_json()
        out["point_verdict"] = self.point_verdict
        out["verdict_rule"] = self.rule
        out["paired"] = None if self.paired is None else self.paired.to_json()
        out["range_verdict"] = self.range_verdict if self.interval is not None else None
        out["floor_with_error"] = None if self.bounds is None else self.bounds.to_json()
        out["margin"] = None if self.regression is None else self.regression.margin
        err = self.comparison.uncertainty

        def placed(p: Placement | None, figure: str) -> dict | None:
            if p is None:
                return None
            js = p.to_json()
            if err is not None and err.resampled:
                js["interval"] = {"rate": err.interval[figure].to_json()}
            return js

        out["placement"] = {
            REGRESSION_RATE.name: placed(self.regression, REGRESSION_RATE.name),
            CHANGE_RATE.name: placed(self.change, CHANGE_RATE.name),
        }
        out["floor_baseline"] = {
            "expected_regression_rate": None if self.floor_mean is None else float(self.floor_mean),
            "ratio": self.floor_ratio,
            "method": "mean regression rate between repeats of the target model (two draws of the same judge)",
        }
        if self.baseline_interval is not None:
            out["floor_baseline"]["interval"] = {k: v.to_json() for k, v in self.baseline_interval.items()}
            out["floor_baseline"]["resampling"] = self.baseline_resampling
        out["sample_flags"] = [f.to_json() for f in self.sample_flags]
        return out


@dataclass(frozen=True, slots=True)
class FloorBounds:
    """A floor's regression range widened by its own sampling error (rates 0-1).

    ``high`` is the upper bound of the interval of the range's max (the
    largest repeat-pair regression rate, taken again in each bootstrap
    replicate), ``low`` the lower bound of the interval of its min: the range
    a rerun of the repeats could plausibly have shown. See :data:`FLOOR_BOUNDS_RULE`.
    """

    low: float
    high: float

    def to_json(self) -> dict:
        return {"low": self.low, "high": self.high, "method": FLOOR_BOUNDS_RULE}


FLOOR_BOUNDS_RULE = (
    "the floor's range widened by its sampling error: from the interval low of the range's min to the "
    "interval high of its max (the smallest and the largest repeat-pair regression rate, taken again in "
    "each bootstrap replicate from the same draws)"
)


def floor_bounds(range_interval: Mapping[str, Interval] | None, span: Span | None) -> FloorBounds | None:
    """:data:`FLOOR_BOUNDS_RULE` from the intervals of the range's ``min`` and ``max``; None without them.

    An end whose interval is undefined stays the range's own bound.
    """
    if span is None or range_interval is None:
        return None
    low, high = range_interval["min"].low, range_interval["max"].high
    return FloorBounds(span.min if low is None else low, span.max if high is None else high)


def interval_verdict(
    rate: Fraction, span: Span, interval: Interval | None, bounds: FloorBounds | None = None
) -> str:
    """:data:`INTERVAL_RULE`: where a rate with its interval lies against a floor range (point placement without one).

    ``bounds`` is the floor's range with its own sampling error
    (:func:`floor_bounds`); without it the range's min and max are the bounds.
    """
    point = place(rate, span).verdict
    if interval is None or interval.low is None or interval.high is None:
        return point
    low, high = (span.min, span.max) if bounds is None else (min(bounds.low, span.min), max(bounds.high, span.max))
    if interval.low > high:
        return "above"
    if interval.high < low:
        return "below"
    return "inside" if point == "inside" else "indistinguishable"


INTERVAL_RULE = (
    "above: the regression rate's whole interval lies above the floor's range widened by the floor's own "
    "sampling error (up to the interval high of the range's max, the largest repeat-pair regression rate taken "
    "again in each replicate); below: wholly under it (down to the interval low of its min); inside: the rate "
    "lies in the range; indistinguishable: "
    "the rate lies outside the range but its interval reaches the widened range"
)
POINT_RULE = "the point regression rate placed against the floor's range (no interval computed)"


@dataclass(frozen=True, slots=True)
class MainCheck:
    """A main-results run set against the repeat-to-repeat change range.

    ``against`` holds MAIN's comparison with each repeat (MAIN as old). The
    verdict places the *smallest* of those change rates (the most charitable
    reading: MAIN resembles at least its closest repeat) against the range;
    ``far_beyond`` follows :data:`FAR_BEYOND_RULE`.
    """

    name: str
    against: tuple[Comparison, ...]
    floor: Span
    closest: Placement | None
    #: Intervals of ``closest_change_rate`` and ``largest_repeat_change_rate`` from one shared bootstrap.
    intervals: dict[str, Interval] | None = None
    resampling: str | None = None  # how, in words

    @property
    def insufficient(self) -> str | None:
        """Why there is no verdict: MAIN compared with a repeat on fewer items than ``--min-items``; else None."""
        small = [c for c in self.against if c.small]
        if not small:
            return None
        return "; ".join(f"{c.old.name} -> {c.new.name} compared on only n = {c.cells.n} items, fewer than --min-items "
                         f"{c.settings.min_items if c.settings is not None else ''}" for c in small)

    @property
    def verdict(self) -> MainVerdict | None:
        if self.closest is None:
            return None
        if self.insufficient is not None:
            return INSUFFICIENT
        if far_beyond(self.closest.exact, self.floor.hi):  # implies "above": the rates are >= 0
            return "far_beyond"
        return self.closest.verdict

    @property
    def far_beyond(self) -> bool:
        return self.verdict == "far_beyond"

    @property
    def far_beyond_threshold(self) -> Fraction:
        """The change rate MAIN's closest repeat must exceed for ``far_beyond``."""
        return FAR_BEYOND_FACTOR * self.floor.hi

    def far_beyond_numbers(self) -> dict:
        """What :data:`FAR_BEYOND_RULE` compares, as rates 0-1 (closest None: no items), with their intervals."""
        out: dict = {
            "closest_change_rate": None if self.closest is None else self.closest.rate,
            "factor": FAR_BEYOND_FACTOR,
            "largest_repeat_change_rate": float(self.floor.hi),
            "threshold": float(self.far_beyond_threshold),
        }
        if self.intervals is not None:
            out["interval"] = {k: v.to_json() for k, v in self.intervals.items()}
            out["resampling"] = self.resampling
        return out

    def _closest_json(self) -> dict | None:
        if self.closest is None:
            return None
        js = self.closest.to_json()
        if self.intervals is not None:
            js["interval"] = {"rate": self.intervals["closest_change_rate"].to_json()}
        return js

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "against": [
                {
                    "repeat": c.new.name,
                    "n": c.cells.n,
                    "changed": c.changed,
                    CHANGE_RATE.name: c.change_rate,
                    REGRESSION_RATE.name: c.cells.regression_rate,
                    **({} if c.uncertainty is None or not c.uncertainty.resampled else {"interval": {
                        k: c.uncertainty.interval[k].to_json() for k in (CHANGE_RATE.name, REGRESSION_RATE.name)
                    }}),
                }
                for c in self.against
            ],
            CHANGE_RATE.name: {
                "min": min((c.change_rate for c in self.against if c.change_rate is not None), default=None),
                "max": max((c.change_rate for c in self.against if c.change_rate is not None), default=None),
            },
            "floor": self.floor.to_json(),
            "closest": self._closest_json(),
            "verdict": self.verdict,
            "insufficient_data": self.insufficient,
            "far_beyond": self.far_beyond,
            "far_beyond_rule": self.far_beyond_numbers(),
        }


def check_edge(
    old: LabelledRun,
    new: LabelledRun,
    *,
    regression: Span | None,
    change: Span | None,
    policy: Policy,
    uncertainty: Uncertainty | None = None,
    floor_mean: Fraction | None = None,
    sample_flags: tuple[SampleFlag, ...] = (),
    bounds: FloorBounds | None = None,
) -> EdgeCheck:
    """Compare old -> new on their shared items and place its rates against the floor's ranges."""
    cmp = compare(old, new, policy=policy, uncertainty=uncertainty, agreement=False)
    reg = cmp.cells.exact(REGRESSION_RATE.name)
    chg = cmp.cells.exact(CHANGE_RATE.name)
    interval = None if cmp.uncertainty is None else cmp.uncertainty.interval.get(REGRESSION_RATE.name)
    return EdgeCheck(
        cmp,
        None if reg is None or regression is None else place(reg, regression),
        None if chg is None or change is None else place(chg, change),
        interval,
        regression,
        floor_mean,
        sample_flags,
        bounds,
    )


def check_main(
    main: LabelledRun,
    repeats: Sequence[LabelledRun],
    *,
    change: Span | None,
    policy: Policy,
    uncertainty: Uncertainty | None = None,
) -> MainCheck:
    """Compare MAIN with each repeat; place the closest change rate against the repeats' change range."""
    if main.name in {r.name for r in repeats}:
        raise UsageError(Message(Param("main"), f" {main.name!r} is also one of the repeats; name a different run"))
    against = tuple(compare(main, rep, policy=policy, uncertainty=uncertainty, agreement=False) for rep in repeats)
    defined = [x for x in (c.cells.exact(CHANGE_RATE.name) for c in against) if x is not None]
    closest = None if not defined or change is None else place(min(defined), change)
    return MainCheck(main.name, against, change or Span(Fraction(0), Fraction(0)), closest)
