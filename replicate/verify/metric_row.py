"""What a metric row is: :class:`Metric`, its claim :class:`Field` s, a :class:`Pattern` of rows, and units (pure).

The rows themselves, every figure a claim can name, make up the one table,
:mod:`replicate.verify.metrics`; a family of rows (``agreement.*``,
``costs.*``, ``rankings.*``) builds its rows from these types in a module of
its own, which the table imports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Source = str  # runs, trials, rankings, or a registered source's name (replicate.verify.claim.register_source)
Kind = Literal["count", "rate", "number", "share_count", "flag"]
Family = Literal["share", "mean", "design", "flag"]

#: Units a printed value may be given in, per source.
UNITS: tuple[str, ...] = ("percent", "fraction", "count", "ratio")
TRIAL_UNITS: tuple[str, ...] = ("percent", "fraction", "count", "flag", "ratio")

#: Which units fit which kind of value.
UNITS_OF_KIND: dict[str, tuple[str, ...]] = {
    "count": ("count",),
    "rate": ("percent", "fraction"),
    "number": ("ratio",),
    "share_count": ("count", "percent", "fraction"),
    "flag": ("flag",),
}


@dataclass(frozen=True, slots=True)
class Field:
    """A claim field a metric takes: ``check(value)`` returns the problem in words, or None when it is fine."""

    name: str
    check: Callable[[Any], str | None]
    default: Any = None
    doc: str = ""
    required: bool = False  # a claim naming the metric must give it (no default)


@dataclass(frozen=True, slots=True)
class Metric:
    """One figure a claim can name (see the module docstring)."""

    name: str
    source: Source
    scopes: tuple[str, ...]
    kind: Kind
    meaning: str
    family: Family | None = None  # trials: how a fresh collection is compared with the printed figure
    extra_units: tuple[str, ...] = ()
    fields: tuple[Field, ...] = ()  # claim fields of this metric beyond its source's and scope's
    needs_null: bool = False  # trials: needs the permutation null (and so a recorded seed)
    needs_loose: bool = False  # trials: needs a loose reading (``correct_loose``) in the table
    compute: Callable[..., Any] | None = None  # None: the source's core computes it by name

    @property
    def scope(self) -> str:
        """The first (for trial metrics, the only) scope."""
        return self.scopes[0]

    @property
    def units(self) -> tuple[str, ...]:
        return UNITS_OF_KIND[self.kind] + self.extra_units


@dataclass(frozen=True, slots=True)
class Pattern:
    """Metrics named ``prefix + key`` (``key`` a lower-case word), made on demand by ``make(name, key)``."""

    prefix: str
    source: Source
    make: Callable[[str, str], Metric]
    examples: tuple[str, ...] = ()  # keys shown in the list of names

    def __call__(self, name: str) -> Metric | None:
        key = name[len(self.prefix):]
        return self.make(name, key) if name.startswith(self.prefix) and _KEY.match(key) else None


_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


def one_of(choices: Sequence[str]) -> Callable[[Any], str | None]:
    """A :class:`Field` check: the value must be one of ``choices`` (``must be trial or item, got 'run'``)."""
    allowed = " or ".join(choices) if len(choices) == 2 else "one of " + ", ".join(choices)

    def check(value: Any) -> str | None:
        return None if value in choices else f"must be {allowed}, got {value!r}"
    return check


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
