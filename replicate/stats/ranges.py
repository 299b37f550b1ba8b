"""Floor ranges (pure): a min-max range of rates kept exact, and where a rate lies against it.

Bounds are compared exactly (as fractions of the integer counts): a rate equal
to the range's min or max is *inside*.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Sequence

#: Where a rate falls against a span.
Verdict = Literal["below", "inside", "above"]


@dataclass(frozen=True, slots=True)
class Span:
    """A closed min-max range of rates, kept as exact fractions of counts."""

    lo: Fraction
    hi: Fraction

    @property
    def min(self) -> float:
        return float(self.lo)

    @property
    def max(self) -> float:
        return float(self.hi)

    @property
    def width(self) -> float:
        return float(self.hi - self.lo)

    @classmethod
    def of(cls, rates: Sequence[Fraction | None]) -> "Span | None":
        defined = [r for r in rates if r is not None]
        return cls(min(defined), max(defined)) if defined else None

    def to_json(self) -> dict:
        return {"min": self.min, "max": self.max, "width": self.width}


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a rate lies against a floor range.

    ``margin`` is a non-negative distance in rate units: how far outside the
    range for ``below``/``above``, how far from the nearer bound for ``inside``.
    ``to_min`` = rate - min and ``to_max`` = rate - max keep the signs.
    """

    verdict: Verdict
    exact: Fraction  # the rate as an exact fraction of counts
    margin: float
    to_min: float
    to_max: float

    @property
    def rate(self) -> float:
        return float(self.exact)

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "rate": self.rate,
            "margin": self.margin,
            "to_min": self.to_min,
            "to_max": self.to_max,
        }


def place(rate: Fraction, span: Span) -> Placement:
    """Below, inside (bounds included) or above a floor range, with the margin."""
    rate = Fraction(rate)
    verdict: Verdict
    if rate < span.lo:
        verdict, margin = "below", span.lo - rate
    elif rate > span.hi:
        verdict, margin = "above", rate - span.hi
    else:
        verdict, margin = "inside", min(rate - span.lo, span.hi - rate)
    return Placement(verdict, rate, float(margin), float(rate - span.lo), float(rate - span.hi))
