"""Four-cell tables: every single-label figure of docs/design/design.md, defined once (pure).

For an edge old -> new over N shared items the cells are ``both`` (old right,
new right), ``only_old`` (old right, new wrong: a regression), ``only_new``
(old wrong, new right) and ``neither``; ``changed`` counts the items whose two
labels differ (known when the table comes from labels, not from a paper).

Each figure is a ratio of whole numbers made from the cells. :data:`RATIOS`
holds, per figure, the one function that gives its ``(numerator,
denominator)``. Those functions use only ``+``, ``-`` and ``*``, so the same
definition is evaluated three ways:

- exactly, as a :class:`~fractions.Fraction` of one table's ints
  (:meth:`FourCell.exact`; what ``verify`` matches and floors place);
- as a float view of the same ratio (the :class:`FourCell` properties;
  ``int / int`` is correctly rounded, so it equals ``float`` of the fraction);
- elementwise on integer numpy arrays, for every ordered pair of runs at once
  (:func:`ratio_arrays`; what ``matrix`` draws).

A figure whose denominator is 0 is undefined: ``None`` (NaN in arrays), never 0.
:class:`FourCell` reads like a scipy result object: it keeps the counts it was
computed from, and offers :meth:`FourCell.confidence_interval` and
:meth:`FourCell.mcnemar_p` as methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from replicate.stats.intervals import wilson, z_value
from replicate.stats.paired import mcnemar_exact_log10_p, mcnemar_exact_p


class Cells(Protocol):
    """Anything with the four cells (and label changes): ints, or integer arrays of the same shape."""

    @property
    def both(self) -> Any: ...
    @property
    def only_old(self) -> Any: ...
    @property
    def only_new(self) -> Any: ...
    @property
    def neither(self) -> Any: ...
    @property
    def changed(self) -> Any: ...


def _n(c: Cells) -> Any:
    return c.both + c.only_old + c.only_new + c.neither


def _old_correct(c: Cells) -> Any:
    return c.both + c.only_old


def _new_wrong(c: Cells) -> Any:
    # N - new_correct, written as a sum of cells
    return c.only_old + c.neither


#: figure -> (numerator, denominator) over the cells: the one definition of each figure.
RATIOS: dict[str, Callable[[Cells], tuple[Any, Any]]] = {
    # (both + only_old) / N
    "em_old": lambda c: (c.both + c.only_old, _n(c)),
    # (both + only_new) / N
    "em_new": lambda c: (c.both + c.only_new, _n(c)),
    # only_old / N: what most papers print (negative flip rate)
    "regression_rate": lambda c: (c.only_old, _n(c)),
    # only_old / (both + only_old): the share of old-correct items the new version loses
    "regression_share_of_old_correct": lambda c: (c.only_old, _old_correct(c)),
    # only_new / N: the regression rate of the reverse edge
    "backward_rate": lambda c: (c.only_new, _n(c)),
    # EM_old - EM_new = (only_old - only_new) / N, exactly
    "accuracy_difference": lambda c: (c.only_old - c.only_new, _n(c)),
    # EM_old * (1 - EM_new): the regression rate expected if errors were unrelated
    "independent_regression_rate": lambda c: (_old_correct(c) * _new_wrong(c), _n(c) * _n(c)),
    # regression_rate / independent_regression_rate (relative negative flip rate)
    "independence_ratio": lambda c: (c.only_old * _n(c), _old_correct(c) * _new_wrong(c)),
    # share of items whose two labels differ (needs labels: ``changed``)
    "change_rate": lambda c: (c.changed, _n(c)),
    # 1 - change_rate
    "label_agreement": lambda c: (_n(c) - c.changed, _n(c)),
}

#: Figures needing the label changes, which a table typed in from a paper does not have.
NEEDS_LABELS = frozenset({"change_rate", "label_agreement"})

#: Figures that are a proportion (some of a number of items), and so have a Wilson interval.
PROPORTIONS: tuple[str, ...] = (
    "em_old", "em_new", "regression_rate", "regression_share_of_old_correct", "backward_rate",
)


def exact_ratio(num: int, den: int) -> Fraction | None:
    """``num / den`` as an exact fraction; None (undefined, not 0) when ``den`` is 0."""
    return None if den == 0 else Fraction(int(num), int(den))


def float_ratio(num: int, den: int) -> float | None:
    """``num / den`` as the nearest float (equal to ``float(exact_ratio(num, den))``); None when ``den`` is 0."""
    return None if den == 0 else num / den


def ratio_arrays(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise ``num / den`` of integer arrays as float64, NaN where ``den`` is 0.

    Each entry equals :func:`float_ratio` of the same integers (IEEE division
    is correctly rounded; counts stay far below 2**53).
    """
    num = np.asarray(num, dtype=np.float64)  # no copy when already float64
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def figure_arrays(cells: Cells, figures: Sequence[str]) -> dict[str, np.ndarray]:
    """Each named figure of :data:`RATIOS` over cells held as integer arrays (NaN = undefined)."""
    _check_figures(figures)
    return {name: ratio_arrays(*RATIOS[name](cells)) for name in figures}


def _unknown(figure: str) -> ValueError:
    return ValueError(f"figure must be one of {', '.join(RATIOS)}; got {figure!r}")


def _check_figures(figures: Sequence[str]) -> None:
    for f in figures:
        if f not in RATIOS:
            raise _unknown(f)


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


@dataclass(frozen=True, slots=True)
class FourCell:
    """The four cells of an edge old -> new over N shared items, and every figure of them.

    ``both``: old right, new right; ``only_old``: old right, new wrong (a
    regression); ``only_new``: old wrong, new right; ``neither``: both wrong.
    ``changed``: items whose two labels differ, when the table comes from
    labels (None for a table typed in from a paper); it is extra information
    about the labels, so two tables with the same cells compare equal.

    Figures are float properties (None where undefined); :meth:`exact` gives
    the same figure as a :class:`~fractions.Fraction`.
    """

    both: int
    only_old: int
    only_new: int
    neither: int
    changed: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("both", "only_old", "only_new", "neither"):
            object.__setattr__(self, name, _count(name, getattr(self, name)))
        if self.changed is not None:
            changed = _count("changed", self.changed)
            if changed > self.n:
                raise ValueError(f"changed must be at most n = {self.n}, got {changed}")
            object.__setattr__(self, "changed", changed)

    # -- counts ------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(_n(self))

    @property
    def old_correct(self) -> int:
        return int(_old_correct(self))

    @property
    def new_correct(self) -> int:
        return self.both + self.only_new

    # -- figures: the one definition in RATIOS, exact or as a float ---------------
    def parts(self, figure: str) -> tuple[int, int] | None:
        """(numerator, denominator) of ``figure``; None for a figure needing labels on a typed-in table."""
        ratio = RATIOS.get(figure)
        if ratio is None:
            raise _unknown(figure)
        if self.changed is None and figure in NEEDS_LABELS:
            return None
        return ratio(self)

    def exact(self, figure: str) -> Fraction | None:
        """``figure`` (a key of :data:`RATIOS`) as an exact fraction; None where undefined."""
        parts = self.parts(figure)
        return None if parts is None else exact_ratio(*parts)

    def value(self, figure: str) -> float | None:
        """``figure`` as a float (the nearest to :meth:`exact`); None where undefined."""
        parts = self.parts(figure)
        return None if parts is None else float_ratio(*parts)

    @property
    def em_old(self) -> float | None:
        return self.value("em_old")

    @property
    def em_new(self) -> float | None:
        return self.value("em_new")

    @property
    def regression_rate(self) -> float | None:
        """only_old / N: what most papers print (negative flip rate)."""
        return self.value("regression_rate")

    @property
    def regression_share_of_old_correct(self) -> float | None:
        """only_old / (both + only_old): the share of old-correct items the new version loses."""
        return self.value("regression_share_of_old_correct")

    @property
    def backward_rate(self) -> float | None:
        """only_new / N: the regression rate of the reverse edge."""
        return self.value("backward_rate")

    @property
    def independent_regression_rate(self) -> float | None:
        """EM_old * (1 - EM_new): the regression rate expected if errors were unrelated."""
        return self.value("independent_regression_rate")

    @property
    def independence_ratio(self) -> float | None:
        """regression_rate / independent_regression_rate; None when the denominator is 0."""
        return self.value("independence_ratio")

    @property
    def accuracy_difference(self) -> float | None:
        """EM_old - EM_new, which equals (only_old - only_new) / N exactly."""
        return self.value("accuracy_difference")

    @property
    def change_rate(self) -> float | None:
        """Share of items whose two labels differ; None when unknown (no labels) or N = 0."""
        return self.value("change_rate")

    # -- tests and intervals -------------------------------------------------------
    def mcnemar_p(self) -> float | None:
        """Exact McNemar test of whether the two versions' accuracies differ (independent items); None with no items."""
        return None if self.n == 0 else mcnemar_exact_p(self.only_old, self.only_new)

    def confidence_interval(
        self, figure: str = "regression_rate", *, confidence_level: float = 0.95
    ) -> tuple[float, float] | None:
        """Wilson score interval of one proportion (see :data:`PROPORTIONS`); None when its denominator is 0."""
        return self.confidence_intervals([figure], confidence_level=confidence_level)[figure]

    def confidence_intervals(
        self, figures: Sequence[str] = PROPORTIONS, *, confidence_level: float = 0.95
    ) -> dict[str, tuple[float, float] | None]:
        """Wilson score intervals of several proportions at once (one vectorised call)."""
        for f in figures:
            if f not in PROPORTIONS:
                raise ValueError(f"figure must be one of {', '.join(PROPORTIONS)}; got {f!r}")
        k, n = (np.array(v) for v in zip(*(RATIOS[f](self) for f in figures)))
        defined = n > 0
        lo, hi = wilson(k[defined], n[defined], z_value(confidence_level))
        bounds = iter(zip(lo.tolist(), hi.tolist()))
        return {f: (next(bounds) if ok else None) for f, ok in zip(figures, defined.tolist())}

    def figures(self) -> dict:
        """Every figure as a JSON-ready dict (rates as fractions; None = undefined)."""
        return {
            "n": self.n,
            "cells": {
                "both": self.both,
                "only_old": self.only_old,
                "only_new": self.only_new,
                "neither": self.neither,
            },
            "em_old": self.em_old,
            "em_new": self.em_new,
            "regression_rate": self.regression_rate,
            "regression_share_of_old_correct": self.regression_share_of_old_correct,
            "backward_rate": self.backward_rate,
            "accuracy_difference": self.accuracy_difference,
            "independent_regression_rate": self.independent_regression_rate,
            "independence_ratio": self.independence_ratio,
            "mcnemar_p": self.mcnemar_p(),
            "mcnemar_log10_p": None if self.n == 0 else mcnemar_exact_log10_p(self.only_old, self.only_new),
            "intervals": self.confidence_intervals(),
        }

    def to_json(self) -> dict:
        return self.figures()


def as_float(x: Fraction | None) -> float | None:
    """The float view of an exact figure (None stays None)."""
    return None if x is None else float(x)
