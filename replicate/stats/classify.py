"""The item classification, decided exactly.

An item of an edge s -> t with correct counts ``a`` of ``n1`` (source) and
``b`` of ``n2`` (target) non-error trials, ``d = b/n2 - a/n1``:

- ``improved``: significant (BH-adjusted ``q <= alpha``) and ``d >= eps``;
- ``regressed``: significant and ``d <= -eps``;
- ``equivalent``: neither of the above, and the interval of ``d`` lies strictly
  inside ``(-eps, eps)``;
- ``inconclusive``: everything else.

The practical threshold is decided in integers: ``d >= eps`` with
``eps = P/Q`` is ``Q * (b*n1 - a*n2) >= P * n1 * n2``, so 30/50 - 20/50 counts
as exactly 0.2. The interval's bounds are floats (they involve square roots);
each is compared *exactly* with the rational ``eps`` (as if the float were
converted to a fraction), so a bound within half an ulp of 0.2 is decided by its
actual binary value, never by the rounding of ``0.2`` itself.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np

from replicate.stats.rational import exact_decimal

CLASSES: tuple[str, ...] = ("improved", "regressed", "equivalent", "inconclusive")
IMPROVED, REGRESSED, EQUIVALENT, INCONCLUSIVE = range(4)

_INT64_SAFE = 2**62


def parse_eps(value: str | float | Fraction | Decimal, *, name: str = "eps") -> Fraction:
    """An exact practical threshold in (0, 1]; a decimal string such as ``"0.2"`` is 1/5 exactly.

    A float is read by its shortest decimal form (``0.2`` -> 1/5), not its binary value.
    """
    try:
        f = value if isinstance(value, Fraction) else exact_decimal(value)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number in (0, 1] such as 0.2, got {value!r} ({exc})") from None
    if not 0 < f <= 1:
        raise ValueError(f"{name} must lie in (0, 1], got {value}")
    if f.denominator > 10**9:
        raise ValueError(f"{name} has too many digits (at most 9 decimals), got {value}")
    return f


def parse_eps_list(text: str, *, name: str = "sensitivity") -> list[Fraction]:
    parts = [p for p in (s.strip() for s in text.split(",")) if p]
    if not parts:
        raise ValueError(f"{name} needs a comma-separated list of thresholds such as 0.10,0.20")
    return [parse_eps(p, name=name) for p in parts]


def diff_at_least(
    a: np.ndarray, n1: np.ndarray, b: np.ndarray, n2: np.ndarray, eps: Fraction
) -> tuple[np.ndarray, np.ndarray]:
    """Exactly ``(b/n2 - a/n1 >= eps, a/n1 - b/n2 >= eps)``, element-wise, in int64."""
    n1 = np.asarray(n1, dtype=np.int64)
    n2 = np.asarray(n2, dtype=np.int64)
    num = eps.numerator
    den = eps.denominator
    biggest = int(np.max(n1, initial=0)) * int(np.max(n2, initial=0))
    if biggest * max(num, den) >= _INT64_SAFE:
        raise ValueError("trial counts too large for exact int64 threshold arithmetic")
    cross = den * (np.asarray(b, dtype=np.int64) * n1 - np.asarray(a, dtype=np.int64) * n2)
    need = num * n1 * n2
    return cross >= need, -cross >= need


def float_below(x: np.ndarray, e: Fraction) -> np.ndarray:
    """Exactly ``x < e`` for float array ``x`` and rational ``e``.

    ``ef = float(e)`` is the double nearest ``e``, so ``x < ef`` implies ``x < e``
    and ``x > ef`` implies ``x > e``; only ``x == ef`` needs the rational check.
    """
    ef = float(e)
    return (x < ef) | ((x == ef) & (Fraction(ef) < e))


def float_above(x: np.ndarray, e: Fraction) -> np.ndarray:
    """Exactly ``x > e`` (see :func:`float_below`)."""
    ef = float(e)
    return (x > ef) | ((x == ef) & (Fraction(ef) > e))


def classify(
    significant: np.ndarray,
    up: np.ndarray,
    down: np.ndarray,
    lo: np.ndarray | None = None,
    hi: np.ndarray | None = None,
    eps: Fraction | None = None,
) -> np.ndarray:
    """Class codes (index into :data:`CLASSES`); equivalence needs the interval and eps."""
    cls = np.full(np.shape(significant), INCONCLUSIVE, dtype=np.int8)
    if lo is not None and hi is not None and eps is not None:
        inside = float_above(lo, -eps) & float_below(hi, eps)
        cls[inside] = EQUIVALENT
    cls[significant & up] = IMPROVED
    cls[significant & down] = REGRESSED
    return cls
