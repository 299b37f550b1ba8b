"""A number as printed in a paper: its precision, the values it stands for, and a value rounded to it (pure, exact).

A printed value ``v`` with ``d`` digits after the decimal point stands for
every value that rounds to it. We use the closed interval

    v - 5 * 10**-(d+1)  <=  x  <=  v + 5 * 10**-(d+1)

so "28.0" (percent) covers 27.95 <= x <= 28.05 and "0.77" covers
0.765 <= x <= 0.775. A value exactly on a boundary is halfway between two
printable values, and papers round halves differently: half up (the school
rule), half away from zero, or half to even on the binary value (Python's
``round`` and ``format``: 559/2000 = 27.95% prints as "27.9"). So a boundary
value matches *either* neighbour and is reported as a **tie**, never as a
mismatch. The rule is symmetric in sign: "-0.12" covers -0.125 <= x <= -0.115,
exactly the mirror of "0.12".

Arithmetic is exact: printed text is read as :class:`decimal.Decimal`,
computed values arrive as :class:`fractions.Fraction` (figures that are
ratios of counts) or ``float`` (converted to the exact binary value), and
percent scaling multiplies by exactly 100. Counts must be equal.

``replicate verify`` judges every claim by this rule
(:mod:`replicate.verify.matching`), and a harness's own figure is set beside
the recomputed one by it (:mod:`replicate.judge.harness`).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

_NUMBER = re.compile(r"^[+-]?(?:\d+|\d{1,3}(?:,\d{3})+)?(?:\.\d+)?$")


class Verdict(str, enum.Enum):
    """A computed figure against a printed one: it matches at the printed precision, or not, or there is none."""

    match = "match"
    mismatch = "mismatch"
    not_computable = "not_computable"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Printed:
    """A value as printed in a paper: its text, unit, exact decimal value and precision."""

    text: str
    unit: str
    value: Decimal
    places: int  # digits after the decimal point

    @classmethod
    def parse(cls, text: str, unit: str) -> "Printed":
        """Read printed text such as ``"28.0"``, ``"28.0%"``, ``"0.77"`` or ``"6,252"``.

        Raises ValueError naming what is wrong. A trailing ``%`` is allowed
        only with unit ``percent``; thousands separators only as ``1,234``.
        """
        if not isinstance(text, str):
            raise ValueError(f"value must be a string as printed, got {type(text).__name__}")
        body = text.strip()
        if body.endswith("%"):
            if unit != "percent":
                raise ValueError(f"value {text!r} ends in '%' but unit is {unit!r}")
            body = body[:-1].rstrip()
        if not body or not _NUMBER.match(body) or not any(c.isdigit() for c in body):
            raise ValueError(f"value {text!r} is not a number as printed (e.g. \"28.0\", \"0.77\", \"6,252\")")
        body = body.replace(",", "")
        places = len(body.partition(".")[2])
        if unit == "count" and ("." in body or body.startswith("-")):
            raise ValueError(f"value {text!r} of unit 'count' must be a whole number >= 0")
        return cls(text, unit, Decimal(body), places)

    @property
    def half_width(self) -> Fraction:
        """Half a unit in the last printed place (0 for counts: they must be exact)."""
        return Fraction(0) if self.unit == "count" else half_unit(self.places)

    def interval(self) -> tuple[Fraction, Fraction]:
        """``[lo, hi]`` in the printed scale (percent points for percent); both bounds are ties."""
        centre = Fraction(self.value)
        h = self.half_width
        return centre - h, centre + h

    def scale(self, computed: Fraction | int | float) -> Fraction:
        """A recomputed value (a fraction 0-1 for rates) in the printed scale, exactly."""
        x = Fraction(computed)
        return x * 100 if self.unit == "percent" else x

    def show_interval(self) -> str:
        """The interval as text, e.g. ``[27.95, 28.05]`` or ``= 6252``."""
        if self.unit == "count":
            return f"= {self.value}"
        lo, hi = self.interval()
        return f"[{_exact_decimal(lo)}, {_exact_decimal(hi)}]"


def _exact_decimal(x: Fraction) -> str:
    """A fraction whose denominator is 2^a 5^b, written out exactly."""
    return format((Decimal(x.numerator) / Decimal(x.denominator)).normalize(), "f")


@dataclass(frozen=True, slots=True)
class Match:
    """The outcome of one comparison: verdict, the recomputed value in printed scale, tie flag."""

    verdict: Verdict
    scaled: Fraction | None
    tie: bool = False

    @property
    def matched(self) -> bool:
        return self.verdict is Verdict.match


def match(printed: Printed, computed: Fraction | int | float) -> Match:
    """Compare a recomputed value with the printed one (see the module docstring)."""
    if printed.unit == "count":
        if isinstance(computed, float) and not computed.is_integer():
            return Match(Verdict.mismatch, Fraction(computed))
        x = Fraction(computed)
        return Match(Verdict.match if x == Fraction(printed.value) else Verdict.mismatch, x)
    x = printed.scale(computed)
    lo, hi = printed.interval()
    verdict = Verdict.match if lo <= x <= hi else Verdict.mismatch
    return Match(verdict, x, tie=(x == lo or x == hi))


def misprint(printed: Printed, computed: Fraction | int | float, n: int | None = None) -> Fraction:
    """How far the printed figure lies from ``computed``, printed - computed as a fraction (a percent as a share,
    a count as a share of its ``n`` items): 0 where it matches at printed precision, or a count has no items."""
    if match(printed, computed).verdict is Verdict.match or (printed.unit == "count" and not n):
        return Fraction(0)
    diff = Fraction(printed.value) / (100 if printed.unit == "percent" else 1) - Fraction(computed)
    return diff / n if printed.unit == "count" and n else diff


def rounded(printed: Printed, computed: Fraction | int | float) -> str:
    """The recomputed value rounded to the printed number of places (printed scale), halves away from zero.

    Symmetric in sign: -0.125 gives "-0.13" as 0.125 gives "0.13" (a half is a tie: see :func:`match`).
    """
    return rounded_to(printed.scale(computed), printed.places)


def half_unit(places: int) -> Fraction:
    """Half a unit in the last of ``places`` decimals: how far a value may lie from one printed with them and still
    round to it (a value exactly that far is a tie)."""
    return Fraction(1, 2 * 10**places)


def rounded_to(x: Fraction, places: int) -> str:
    """``x`` written with ``places`` decimals, halves away from zero (symmetric in sign)."""
    magnitude = (abs(x) * 10**places + Fraction(1, 2)).__floor__()
    return f"{Decimal(magnitude if x >= 0 else -magnitude) / Decimal(10**places):.{places}f}"
