"""The metrics a claim over a K-trial study can name (pure).

Names follow the keys of ``replicate items --format json`` and ``replicate
screen --format json``, so what a user sees there is what a claim names:

- ``items.<key>``: one edge x benchmark cell (``edge = "A:B"``, ``benchmark``;
  without ``benchmark``, the cell pooled over benchmarks, i.e. ``--by none``);
- ``accuracy``, ``accuracy.loose``: one model x benchmark row of the accuracy table;
- ``screen.<key>``: one benchmark row of the screening table.

A value is a count (compared exactly), a rate (a fraction 0-1, printed as a
percent or a fraction) or a flag (``screen.passes``: printed ``pass`` or ``fail``).
Counts of classified items may also be printed as shares (unit percent or
fraction): ``items.improved`` printed "12.4" with unit percent is P+.

``family`` says how a fresh collection is compared with the printed figure
(see :mod:`replicate.verify.replication`): ``share`` (a share of items: an
interval for a difference of two shares), ``mean`` (a mean over items of
per-item rates: a two-sample z test with trial-level sampling error),
``design`` (a count fixed by the design: compared exactly) or ``flag``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

TrialScope = Literal["cell", "model", "benchmark"]
TrialKind = Literal["count", "rate", "share_count", "flag"]
Family = Literal["share", "mean", "design", "flag"]

#: Units a printed trial figure may be given in.
TRIAL_UNITS: tuple[str, ...] = ("percent", "fraction", "count", "flag")

_UNITS_OF_KIND: dict[str, tuple[str, ...]] = {
    "count": ("count",),
    "rate": ("percent", "fraction"),
    "share_count": ("count", "percent", "fraction"),  # a count of items, or the same as a share
    "flag": ("flag",),
}


@dataclass(frozen=True, slots=True)
class TrialMetric:
    """One figure of a K-trial study a claim can name."""

    name: str
    scope: TrialScope
    kind: TrialKind
    family: Family
    meaning: str
    needs_null: bool = False  # needs the permutation null (and so a recorded seed)
    needs_loose: bool = False  # needs a loose reading (``correct_loose``) in the table

    @property
    def units(self) -> tuple[str, ...]:
        return _UNITS_OF_KIND[self.kind]


_T = TrialMetric
_FIXED: tuple[TrialMetric, ...] = (
    _T("items.n", "cell", "count", "design", "items in the cell (non-error trials on both sides)"),
    _T("items.improved", "cell", "share_count", "share", "items reliably improved (significant and >= eps)"),
    _T("items.regressed", "cell", "share_count", "share", "items reliably regressed (significant and <= -eps)"),
    _T("items.changed", "cell", "share_count", "share", "items improved or regressed"),
    _T("items.equivalent", "cell", "share_count", "share", "items practically equivalent (interval inside (-eps, eps))"),
    _T("items.inconclusive", "cell", "share_count", "share", "items in no other class"),
    _T("items.p_plus", "cell", "rate", "share", "P+: share of the cell's items reliably improved"),
    _T("items.p_minus", "cell", "rate", "share", "P-: share of the cell's items reliably regressed"),
    _T("items.p_chg", "cell", "rate", "share", "Pchg = P+ + P-"),
    _T("items.delta", "cell", "rate", "mean", "mean over items of p(target) - p(source)"),
    _T("items.delta_r", "cell", "rate", "mean", "R(target) - R(source), R = mean loose - mean strict rate",
       needs_loose=True),
    _T("accuracy", "model", "rate", "mean", "mean over the benchmark's items of p(model, item), strict reading"),
    _T("accuracy.loose", "model", "rate", "mean", "the same under the loose reading, over items that have one",
       needs_loose=True),
    _T("screen.share", "benchmark", "rate", "share", "share of items where some model's accuracy lies in [low, high]"),
    _T("screen.informative_items", "benchmark", "share_count", "share", "items where some model's accuracy lies in [low, high]"),
    _T("screen.n_items", "benchmark", "count", "design", "items screened (some model has a non-error trial)"),
    _T("screen.passes", "benchmark", "flag", "flag", "whether the share reaches the threshold (pass or fail)"),
)

TRIAL_METRICS: dict[str, TrialMetric] = {m.name: m for m in _FIXED}

#: ``items.null_p95.<key>``: any key of the cell's ``null_p95`` object (read by key, so keys the
#: engine adds later are claimable without a change here).
NULL_PREFIX = "items.null_p95."
_NULL_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


def trial_metric(name: str) -> TrialMetric | None:
    """The metric called ``name``, or None when there is none."""
    if name in TRIAL_METRICS:
        return TRIAL_METRICS[name]
    if name.startswith(NULL_PREFIX) and _NULL_KEY.match(name[len(NULL_PREFIX):]):
        key = name[len(NULL_PREFIX):]
        return _T(name, "cell", "rate", "share", f"95th percentile of the permutation null's {key}",
                  needs_null=True)
    return None


def trial_metric_names() -> list[str]:
    """Every name a claim may use (``items.null_p95.*`` shown with its usual keys)."""
    return list(TRIAL_METRICS) + [NULL_PREFIX + k for k in ("p_plus", "p_minus", "p_chg")]
