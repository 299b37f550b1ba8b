"""Exact means of per-item rates (pure): ``mean_i num_i / den_i`` as a :class:`~fractions.Fraction`.

A K-trial accuracy is a mean over items of correct / non-error trials; a float
mean of those rates can land either side of a printed rounding boundary
(0.4425 sums to 0.44249999999999995 or 0.44250000000000006 depending on the
order), so a figure that lies exactly on a boundary would be a tie or a
mismatch by accident. Items sharing a denominator are summed as integers, so
the cost is one Fraction per distinct denominator.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np

#: The most digits, and decimal places, a number given as text (a setting such as eps) is read to exactly:
#: past them Fraction would build a power of ten of as many digits (1e-999999999: minutes, gigabytes).
MAX_DIGITS = 100


def mean_of_ratios(num: np.ndarray, den: np.ndarray) -> Fraction | None:
    """``mean(num / den)`` exactly; None over no items. Every ``den`` must be positive."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    if num.shape != den.shape:
        raise ValueError(f"num and den differ in shape: {num.shape} vs {den.shape}")
    if num.size == 0:
        return None
    if (den <= 0).any():
        raise ValueError("den must be positive for every item")
    num, den = num.ravel(), den.ravel()
    total = Fraction(0)
    for d in np.unique(den).tolist():
        total += Fraction(int(num[den == d].sum()), d)
    return total / num.size


def as_float(x: Fraction | None) -> float | None:
    """The correctly rounded float of an exact value (None stays None)."""
    return None if x is None else float(x)


def exact_decimal(value: str | float | Decimal) -> Fraction:
    """``value`` exactly: decimal text (``"0.2"`` is 1/5), a float by its shortest decimal form (``0.2`` -> 1/5).

    ValueError for what is not a finite number, or has more than :data:`MAX_DIGITS` digits before or after the
    point (``1e-999999999``, ``1e999999999``), which no setting means and whose exact value would not fit
    in memory."""
    try:
        d = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except (InvalidOperation, ValueError):
        raise ValueError("not a number") from None
    if not d.is_finite():
        raise ValueError("not a finite number")
    if d and (d.adjusted() >= MAX_DIGITS or -d.as_tuple().exponent > MAX_DIGITS):  # type: ignore[operator]
        raise ValueError(f"more than {MAX_DIGITS} digits before or after the point")
    return Fraction(d)
