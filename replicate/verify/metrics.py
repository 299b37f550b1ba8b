"""The metrics a claim can name, what each needs and which units it may be printed in (pure).

A metric is computed over one run (``run = "NAME"``), one edge (``old`` and
``new``) or the repeats of one model (``runs = [...]``, the rerun floor). Its
value is a count (compared exactly), a rate (a fraction 0-1, printed as a
percent or a fraction) or a plain number (compared at printed precision).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Scope = Literal["run", "edge", "floor"]
Kind = Literal["count", "rate", "number"]

#: Units a printed value may be given in.
UNITS: tuple[str, ...] = ("percent", "fraction", "count", "ratio")

#: Which units fit which kind of value.
UNITS_OF_KIND: dict[str, tuple[str, ...]] = {
    "count": ("count",),
    "rate": ("percent", "fraction"),
    "number": ("ratio",),
}


@dataclass(frozen=True, slots=True)
class Metric:
    """One figure a claim can name: its scope(s), kind and a one-line meaning."""

    name: str
    scopes: tuple[Scope, ...]
    kind: Kind
    meaning: str
    extra_units: tuple[str, ...] = ()

    @property
    def units(self) -> tuple[str, ...]:
        return UNITS_OF_KIND[self.kind] + self.extra_units


_M = Metric
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        _M("n", ("run", "edge"), "count", "items the figure is computed over (a run's parsed items; an edge's shared items)"),
        _M("em", ("run",), "rate", "exact match: share of the run's items whose label equals gold"),
        _M("mae", ("run",), "number", "mean absolute difference between label and gold over parsed items"),
        _M("pearson", ("run",), "number", "Pearson correlation of label and gold over parsed items"),
        _M("unparsed", ("run",), "rate", "share of the run's items the parser left unparsed", ("count",)),
        _M("cells.both", ("edge",), "count", "items both versions got right"),
        _M("cells.only_old", ("edge",), "count", "items only the old version got right (regressions)"),
        _M("cells.only_new", ("edge",), "count", "items only the new version got right"),
        _M("cells.neither", ("edge",), "count", "items both versions got wrong"),
        _M("regression_rate", ("edge",), "rate", "only_old / N"),
        _M("regression_share_of_old_correct", ("edge",), "rate", "only_old / (both + only_old)"),
        _M("backward_rate", ("edge",), "rate", "only_new / N"),
        _M("change_rate", ("edge",), "rate", "share of shared items whose two labels differ"),
        _M("independent_regression_rate", ("edge",), "rate", "EM_old * (1 - EM_new)"),
        _M("independence_ratio", ("edge",), "number", "regression_rate / independent_regression_rate"),
        _M("floor.regression_min", ("floor",), "rate", "smallest regression rate between two repeats"),
        _M("floor.regression_max", ("floor",), "rate", "largest regression rate between two repeats"),
        _M("floor.change_min", ("floor",), "rate", "smallest change rate between two repeats"),
        _M("floor.change_max", ("floor",), "rate", "largest change rate between two repeats"),
    )
}


def claim_unit(c: Mapping[str, Any], allowed: Sequence[str], metric: Any, say: Callable[[str], None],
               *, units_of: str = "units") -> str | None:
    """A claim's ``unit`` when it is one of ``allowed`` and fits its metric's units, else None (the problem said)."""
    unit = c.get("unit")
    if "unit" not in c:
        return unit
    if unit not in allowed:
        say(f"unknown unit {unit!r}; {units_of}: {', '.join(allowed)}")
        return None
    if metric is not None and unit not in metric.units:
        say(f"unit {unit!r} does not fit metric {metric.name!r}; use {' or '.join(metric.units)}")
        return None
    return unit
