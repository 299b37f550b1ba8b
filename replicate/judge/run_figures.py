"""A run's own figures against gold under one parser and unparsed policy: items, unparsed, EM, MAE, Pearson's r (pure).

Values are exact wherever the figure is a ratio of counts (:class:`Fraction`);
Pearson's r is the one figure computed in floating point (exact integer sums,
one square root). Every figure is over the run's own items. Under the
``intersect`` policy ``n`` and ``em`` count parsed items only; under ``wrong``
every item counts and an unparsed output is wrong. ``mae`` and ``pearson``
always use parsed items only (an unparsed output has no grade to subtract).
``unparsed_rate`` is a share of all the run's items. ``replicate verify``
checks a run's claims against these (:mod:`replicate.verify.recompute`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from replicate.judge.model import LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.labels import LabelSet, absent_figures
from replicate.parsing import UNPARSED
from replicate.stats.bootstrap import Interval
from replicate.stats.fourcell import exact_ratio
from replicate.stats.gold import accuracy, mean_absolute_error, pearson_r
from replicate.stats.policy import Policy

#: Why a figure of a run is undefined (beyond :attr:`RunFigures.absent`, the figures its labels cannot give).
_UNDEFINED = {
    "em": "the run has no items to score under this policy",
    "mae": "the run has no parsed items",
    "pearson": "labels or gold are constant over the parsed items (or fewer than two)",
}


@dataclass(frozen=True)
class RunFigures:
    """A run under one parser and policy: item counts and the exact sums its figures need."""

    name: str
    parser: str
    policy: Policy
    items: int
    unparsed: int
    correct: int
    abs_error: int  # sum of |label - gold| over parsed items
    pearson_raw: float | None  # Pearson r as computed (see :attr:`pearson`)
    label_max: int | None  # largest gold or label seen (for the impossible-MAE check)
    absent: Mapping[str, str] = field(default_factory=dict)  # figure -> why this run cannot give it
    interval: dict[str, Interval] | None = None  # of ``em``, with uncertainty settings
    label_set: LabelSet | None = None  # the labels' set (its names show a grade in the note)

    @property
    def pearson(self) -> float | None:
        """Pearson r of labels and gold; None where undefined or absent (verdicts, categories)."""
        return None if "pearson_r" in self.absent else self.pearson_raw

    @property
    def parsed(self) -> int:
        return self.items - self.unparsed

    @property
    def n(self) -> int:
        return self.parsed if self.policy == "intersect" else self.items

    @property
    def em(self) -> Fraction | None:
        return accuracy(self.correct, self.n)

    @property
    def mae(self) -> Fraction | None:
        return None if "mae" in self.absent else mean_absolute_error(self.abs_error, self.parsed)

    @property
    def unparsed_rate(self) -> Fraction | None:
        return exact_ratio(self.unparsed, self.items)

    def figure(self, name: str) -> tuple[Fraction | int | float | None, str]:
        """Figure ``name`` (``n``, ``em``, ``mae``, ``pearson``, ``unparsed``: the count; ``unparsed_rate``) and
        why it is undefined, for when it is None."""
        value = getattr(self, name)
        why = self.absent.get("pearson_r" if name == "pearson" else name) or _UNDEFINED.get(name, "the run has no items")
        return value, why

    def to_json(self) -> dict:
        out = {"name": self.name, "parser": self.parser, "unparsed_policy": self.policy, "items": self.items,
               "unparsed": self.unparsed, "n": self.n, "em": _number(self.em), "mae": _number(self.mae),
               "pearson": self.pearson}
        if self.interval is not None:
            out["interval"] = {k: v.to_json() for k, v in self.interval.items()}
        return out


def run_figures(lr: LabelledRun, policy: Policy, uncertainty: Uncertainty | None = None) -> RunFigures:
    """The figures of labelled run ``lr`` under ``policy``; with resampling ``uncertainty``, EM's interval."""
    labels = lr.labels.astype(np.int64)
    gold = lr.gold.astype(np.int64)
    parsed = labels != UNPARSED
    x, y = labels[parsed], gold[parsed]
    interval = None
    if uncertainty is not None and uncertainty.resampled:
        counted = parsed if policy == "intersect" else np.ones_like(parsed)
        interval = {"em": uncertainty.shares((labels == gold) & counted, counted, lr.keys)[0]}
    return RunFigures(
        name=lr.name, parser=lr.parser, policy=policy, items=len(lr),
        unparsed=int((~parsed).sum()), correct=int((x == y).sum()),
        abs_error=int(np.abs(x - y).sum()), pearson_raw=pearson_r(x, y),
        label_max=int(max(x.max(initial=0), gold.max(initial=0))) if len(gold) else None,
        absent=absent_figures([lr]),
        interval=interval, label_set=lr.label_set,
    )


def _number(x: Any) -> Any:
    """An exact figure as JSON has it: a count as it is, a fraction as a float (None stays None)."""
    return None if x is None else (x if isinstance(x, int) else float(x))
