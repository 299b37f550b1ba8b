"""Recompute a claim's metric from loaded runs (pure: in-memory runs in, exact values out).

Values are exact wherever the figure is a ratio of counts (:class:`Fraction`),
so matching at the printed precision never suffers from binary rounding;
Pearson's r is the one figure computed in floating point (exact integer sums,
one square root).

Per-run figures (``n``, ``em``, ``mae``, ``pearson``, ``unparsed``) are
:func:`replicate.judge.run_figures.run_figures` over the run's own items
(``unparsed`` as a share of them, or a count with unit ``count``).

Edge figures are :func:`replicate.judge.compare.compare` of the two runs (the
items both have), the same computation as ``replicate compare``; floor
figures are :func:`replicate.judge.floor.floor` over the named repeats (aligned
together, every ordered pair), the same object ``replicate floor`` reports (a
claim's figure read from it by :func:`floor_value`).
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

from replicate.errors import ReplicateError
from replicate.judge.compare import compare
from replicate.judge.floor import EdgeCheck, Floor, floor as judge_floor
from replicate.judge.model import LabelledRun, Run
from replicate.judge.outofscale import KEEP, OutOfScale, ScaleOutcome, apply_out_of_scale, check_out_of_scale
from replicate.judge.run_figures import RunFigures, run_figures
from replicate.judge.uncertainty import EdgeUncertainty, Uncertainty
from replicate.parsing import Parser
from replicate.stats.cimap import edge_ci
from replicate.stats.fourcell import FIGURES, FourCell
from replicate.stats.policy import Policy
from replicate.verify.claims_file import Claim
from replicate.verify.matching import Computed


@dataclass(frozen=True)
class EdgeFigures:
    """An edge old -> new under one parser and policy: its four cells and label changes.

    Taken from :func:`replicate.judge.compare.compare`, so an edge claim and the
    compare command can never disagree; this class only answers claims' metric names.
    """

    old: str
    new: str
    parser: str
    policy: Policy
    cells: FourCell
    changed: int | None  # None: the runs carry verdicts, not labels (no label changes to count)
    shared_items: int
    unparsed_old: int  # over the shared items
    unparsed_new: int
    error: EdgeUncertainty | None = None  # bootstrap intervals and the clustered McNemar test
    settings: Uncertainty | None = None
    absent: Mapping[str, str] = field(default_factory=dict)  # figure -> why these runs cannot give it

    @property
    def small(self) -> bool:
        return self.settings is not None and self.cells.n < self.settings.min_items

    def value(self, metric: str) -> Fraction | int | None:
        """A count (``n``, ``cells.*``) or the exact figure of :data:`~replicate.stats.fourcell.FIGURES`."""
        c = self.cells
        if metric == "n":
            return c.n
        if metric.startswith("cells."):
            return getattr(c, metric[len("cells."):])
        if metric not in FIGURES:
            raise KeyError(metric)
        return c.exact(metric)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"old": self.old, "new": self.new, "parser": self.parser, "unparsed_policy": self.policy}
        out.update(self.cells.figures())
        out.update(changed=self.changed, shared_items=self.shared_items,
                   unparsed={"old": self.unparsed_old, "new": self.unparsed_new})
        err, settings = self.error, self.settings
        resampled = err if err is not None and settings is not None and err.resampled else None
        out["ci"] = edge_ci(self.cells, None if resampled is None else resampled.interval,
                            settings.confidence_level if settings is not None else 0.95)
        if err is not None and settings is not None:
            out["mcnemar_clustered"] = err.mcnemar_json()
            out["independence_baselines"] = err.baselines_json(self.cells)
            out["uncertainty"] = settings.to_json()
            out["small_sample"] = self.small
        return out


def floor_value(f: Floor, metric: str) -> Fraction | None:
    """``floor.regression_min`` etc. of the repeats' floor as an exact fraction (None when no pair has items)."""
    which, end = metric[len("floor."):].split("_")
    span = f.regression_span if which == "regression" else f.change_span
    return None if span is None else (span.lo if end == "min" else span.hi)


def floor_of(floors: Sequence[Floor], e: EdgeFigures) -> Floor | None:
    """The first floor of ``e``'s new version's repeats under its parser and policy (the one its edge is set against)."""
    for f in floors:
        if e.new in f.names and f.parser == e.parser and f.unparsed_policy == e.policy:
            return f
    return None


def edge_key(e: EdgeFigures) -> tuple[str, str, str, str]:
    return (e.old, e.new, e.parser, e.policy)


class Recomputer:
    """Recomputes claims from raw runs, labelling each run once per parser and caching figures.

    Labels outside a run's scale are read under ``out_of_scale`` (:mod:`replicate.judge.outofscale`);
    :meth:`under` gives the same runs read under another policy (the alternatives try them)."""

    def __init__(
        self, runs: Mapping[str, Run], get_parser: Callable[[str], Parser], *, uncertainty: Uncertainty | None = None,
        label: Callable[[Run, Parser | None], LabelledRun] | None = None, out_of_scale: str = KEEP,
    ) -> None:
        """``label`` labels one run with a parser (default ``Run.label_with``; the loader's passes its label cache)."""
        self.uncertainty = uncertainty
        self.runs = dict(runs)
        self.out_of_scale: OutOfScale = check_out_of_scale(out_of_scale)
        self._get_parser = get_parser
        self._label = label if label is not None else Run.label_with
        self._raw: dict[tuple[str, str], LabelledRun] = {}  # as labelled, before the out-of-scale policy
        self._labelled: dict[tuple[str, str], LabelledRun] = {}
        self._scales: dict[tuple[str, str], ScaleOutcome] = {}
        self._under: dict[str, Recomputer] = {}
        self._derived = False  # made by under(): no intervals, labels of its own by Run.label_with
        self._run: dict[tuple[str, str, str], RunFigures] = {}
        self._figures: dict[tuple, Any] = {}  # see cached_or_why

    def under(self, out_of_scale: str | None = None) -> Recomputer:
        """The same runs without intervals, for figures the note shows no interval of (the alternatives of a
        mismatching claim), their labels outside the scale read under ``out_of_scale`` (default: this one's
        policy; this one itself when it is such a recomputer already). Made once per policy, it reads this
        one's labellings and labels other parsers itself (``Run.label_with``: neither the label cache nor the
        note's list of labels read)."""
        policy = out_of_scale or self.out_of_scale
        if policy == self.out_of_scale and self._derived:
            return self
        if policy not in self._under:
            out = Recomputer(self.runs, self._get_parser, out_of_scale=policy)
            out._derived = True
            out._raw = ChainMap({}, self._raw)  # type: ignore[assignment]  # writes stay its own
            if policy == self.out_of_scale:
                out._labelled = ChainMap({}, self._labelled)  # type: ignore[assignment]
                out._scales = ChainMap({}, self._scales)  # type: ignore[assignment]
            self._under[policy] = out
        return self._under[policy]

    # -- labelling -------------------------------------------------------------------
    def labelled(self, name: str, parser: str) -> LabelledRun:
        """Run ``name`` labelled by ``parser``, its labels outside the scale read under :attr:`out_of_scale`."""
        key = (name, parser)
        if key not in self._labelled:
            if key not in self._raw:
                run = self.runs[name]
                self._raw[key] = self._label(run, None if run.labels is not None else self._get_parser(parser))
            self._labelled[key], self._scales[key] = apply_out_of_scale(self._raw[key], self.out_of_scale)
        return self._labelled[key]

    def scale_outcome(self, name: str, parser: str) -> ScaleOutcome:
        """What the out-of-scale policy did to run ``name`` under ``parser``."""
        self.labelled(name, parser)
        return self._scales[(name, parser)]

    def scale_outcomes(self) -> tuple[ScaleOutcome, ...]:
        """What the policy did to each run labelled so far (one entry per run, in order of labelling)."""
        return tuple(dict.fromkeys(self._scales.values()))

    # -- figures ---------------------------------------------------------------------
    def run_figures(self, name: str, parser: str, policy: Policy) -> RunFigures:
        key = (name, parser, policy)
        if key not in self._run:
            self._run[key] = run_figures(self.labelled(name, parser), policy, self.uncertainty)
        return self._run[key]

    def cached_or_why(self, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()`` once per ``key``, or the reason (text) it cannot be computed (its ReplicateError): an edge, a
        floor, an edge against a floor, or a metric family's own figures (``agreement.*``)."""
        if key not in self._figures:
            try:
                self._figures[key] = make()
            except ReplicateError as exc:
                self._figures[key] = str(exc)
        return self._figures[key]

    def edge(self, old: str, new: str, parser: str, policy: Policy) -> EdgeFigures | str:
        """The edge's figures, or the reason (text) it cannot be computed."""
        def make() -> EdgeFigures:
            cmp = compare(self.labelled(old, parser), self.labelled(new, parser), policy=policy,
                          uncertainty=self.uncertainty, agreement=False)
            return EdgeFigures(old, new, cmp.parser, policy, cmp.cells, cmp.cells.changed, cmp.shared_items,
                               cmp.old.unparsed_shared, cmp.new.unparsed_shared, cmp.uncertainty, self.uncertainty,
                               cmp.absent)
        return self.cached_or_why(("edge", old, new, parser, policy), make)

    def floor(self, runs: Sequence[str], parser: str, policy: Policy) -> Floor | str:
        """The floor of the repeats ``runs``, or the reason (text) it cannot be computed."""
        return self.cached_or_why(("floor", tuple(runs), parser, policy), lambda: judge_floor(
            [self.labelled(r, parser) for r in runs], policy=policy, uncertainty=self.uncertainty))

    def against_floor(self, e: EdgeFigures, f: Floor) -> EdgeCheck | None:
        """The edge set against the floor of its new version's repeats: what ``replicate floor --edge`` says
        (its paired test, or its point placement without intervals); None when it cannot be computed."""
        fl = self.cached_or_why(("against", e.old, e.new, f.names, e.parser, e.policy), lambda: judge_floor(
            [self.labelled(r, e.parser) for r in f.names], policy=e.policy,
            edge=(self.labelled(e.old, e.parser), self.labelled(e.new, e.parser)), uncertainty=self.uncertainty))
        return None if isinstance(fl, str) else fl.edge

    # -- claims ----------------------------------------------------------------------
    def compute(self, claim: Claim, parser: str) -> Computed:
        """The claim's metric under ``parser`` (and the claim's unparsed policy).

        A metric row with its own ``compute`` (:mod:`replicate.verify.metrics`) is computed by it."""
        if claim.spec.compute is not None:
            return claim.spec.compute(self, claim, parser)
        policy = claim.policy
        metric = claim.metric
        if claim.scope == "run":
            f = self.run_figures(claim.run, parser, policy)  # type: ignore[arg-type]
            rate = metric == "unparsed" and claim.printed.unit != "count"  # else the count of unparsed outputs
            value, why = f.figure("unparsed_rate" if rate else metric)
            return Computed(value, None if value is not None else why)
        if claim.scope == "edge":
            e = self.edge(claim.old, claim.new, parser, policy)  # type: ignore[arg-type]  # an edge claim names old and new
            if isinstance(e, str):
                return Computed(None, e)
            if e.cells.n == 0 and metric != "n" and not metric.startswith("cells."):
                return Computed(None, f"{claim.old} and {claim.new} share no scored items (policy '{policy}')")
            value = e.value(metric)
            return Computed(value, None if value is not None else e.absent.get(metric) or FIGURES[metric].undefined)
        fl = self.floor(claim.runs, parser, policy)
        if isinstance(fl, str):
            return Computed(None, fl)
        value = floor_value(fl, metric)
        return Computed(value, None if value is not None else "the repeats share no scored items")

