"""Four-cell tables and every single-label figure of design.md (pure).

:class:`FourCell` reads like a scipy result object: it keeps the four counts it
was computed from, exposes each figure as a property and offers
:meth:`FourCell.confidence_interval`. :func:`pair_counts` computes the cells of
every ordered pair of aligned runs at once with matrix products.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from replicate.judge.align import Aligned
from replicate.judge.model import readonly
from replicate.parsing import UNPARSED

Policy = Literal["intersect", "wrong"]
POLICIES: tuple[str, ...] = ("intersect", "wrong")

#: Figures that are a count over a denominator, and so have a Wilson interval.
RATE_PARTS = {
    "em_old": ("old_correct", "n"),
    "em_new": ("new_correct", "n"),
    "regression_rate": ("only_old", "n"),
    "regression_share_of_old_correct": ("only_old", "old_correct"),
    "backward_rate": ("only_new", "n"),
}


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def wilson_interval(k: int, n: int, *, confidence_level: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for k successes in n trials (None when n == 0)."""
    if n == 0:
        return None
    from scipy.special import ndtri

    z = float(ndtri(0.5 + confidence_level / 2))
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of b of b+c at 1/2."""
    m = b + c
    if m == 0:
        return 1.0
    from scipy.special import bdtr

    return float(min(1.0, 2.0 * bdtr(min(b, c), m, 0.5)))


@dataclass(frozen=True, slots=True)
class FourCell:
    """The four cells of an edge old -> new over N shared items.

    ``both``: old right, new right; ``only_old``: old right, new wrong (a
    regression); ``only_new``: old wrong, new right; ``neither``: both wrong.
    """

    both: int
    only_old: int
    only_new: int
    neither: int

    def __post_init__(self) -> None:
        for name in ("both", "only_old", "only_new", "neither"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
            object.__setattr__(self, name, int(value))

    # -- counts ------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.both + self.only_old + self.only_new + self.neither

    @property
    def old_correct(self) -> int:
        return self.both + self.only_old

    @property
    def new_correct(self) -> int:
        return self.both + self.only_new

    # -- figures (None where undefined) ------------------------------------------
    @property
    def em_old(self) -> float | None:
        return _ratio(self.old_correct, self.n)

    @property
    def em_new(self) -> float | None:
        return _ratio(self.new_correct, self.n)

    @property
    def regression_rate(self) -> float | None:
        """only_old / N: what most papers print (negative flip rate)."""
        return _ratio(self.only_old, self.n)

    @property
    def regression_share_of_old_correct(self) -> float | None:
        """only_old / (both + only_old): the share of old-correct items the new version loses."""
        return _ratio(self.only_old, self.old_correct)

    @property
    def backward_rate(self) -> float | None:
        """only_new / N: the regression rate of the reverse edge."""
        return _ratio(self.only_new, self.n)

    @property
    def independent_regression_rate(self) -> float | None:
        """EM_old * (1 - EM_new): the regression rate expected if errors were unrelated."""
        if self.n == 0:
            return None
        return self.old_correct * (self.n - self.new_correct) / (self.n * self.n)

    @property
    def independence_ratio(self) -> float | None:
        """regression_rate / independent_regression_rate; None when the denominator is 0."""
        den = self.old_correct * (self.n - self.new_correct)
        if self.n == 0 or den == 0:
            return None
        return self.only_old * self.n / den

    @property
    def accuracy_difference(self) -> float | None:
        """EM_old - EM_new, which equals (only_old - only_new) / N exactly."""
        return _ratio(self.only_old - self.only_new, self.n)

    def mcnemar_p(self) -> float:
        """Exact McNemar test of whether the two versions' accuracies differ."""
        return mcnemar_exact_p(self.only_old, self.only_new)

    def confidence_interval(
        self, figure: str = "regression_rate", *, confidence_level: float = 0.95
    ) -> tuple[float, float] | None:
        """Wilson score interval of one rate figure (see :data:`RATE_PARTS`)."""
        if figure not in RATE_PARTS:
            raise ValueError(f"figure must be one of {', '.join(RATE_PARTS)}; got {figure!r}")
        num, den = RATE_PARTS[figure]
        return wilson_interval(getattr(self, num), getattr(self, den), confidence_level=confidence_level)

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
            "intervals": {name: self.confidence_interval(name) for name in RATE_PARTS},
        }

    def to_json(self) -> dict:
        return self.figures()


@dataclass(frozen=True)
class PairCounts:
    """Four cells and label changes of every ordered pair (row = old, column = new)."""

    names: tuple[str, ...]
    policy: str
    n: np.ndarray
    both: np.ndarray
    only_old: np.ndarray
    only_new: np.ndarray
    neither: np.ndarray
    changed: np.ndarray

    def cells(self, i: int, j: int) -> FourCell:
        return FourCell(self.both[i, j], self.only_old[i, j], self.only_new[i, j], self.neither[i, j])

    def change_rate(self, i: int, j: int) -> float | None:
        return _ratio(int(self.changed[i, j]), int(self.n[i, j]))


def _gram(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Counts of items where row i of ``a`` and row j of ``b`` are both set (exact)."""
    # Sums of 0/1 products are exact integers in float32 up to 2**24 items (and in
    # float64 far beyond); float32 halves the matrix product's cost.
    dtype: type[np.floating[Any]] = np.float32 if a.shape[1] < (1 << 24) else np.float64
    return np.rint(a.astype(dtype) @ b.astype(dtype).T).astype(np.int64)


def pair_counts(aligned: Aligned, *, policy: Policy = "intersect") -> PairCounts:
    """Cells and label changes for all ordered pairs of ``aligned`` runs.

    ``intersect`` drops, per pair, the items unparsed on either side;
    ``wrong`` keeps them and counts an unparsed output as wrong (and as a
    label of its own when counting changes).
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    labels = aligned.labels
    correct = labels == aligned.gold[None, :]
    valid = labels != UNPARSED if policy == "intersect" else np.ones_like(correct)
    wrong = valid & ~correct
    n = _gram(valid, valid)
    only_old = _gram(correct, wrong)
    values = np.unique(labels)
    if policy == "intersect":
        values = values[values != UNPARSED]
    agree = sum((_gram(labels == v, labels == v) for v in values), np.zeros_like(n))
    out = PairCounts(
        names=aligned.names,
        policy=policy,
        n=n,
        both=_gram(correct, correct),
        only_old=only_old,
        only_new=only_old.T.copy(),
        neither=_gram(wrong, wrong),
        changed=n - agree,
    )
    for arr in (out.n, out.both, out.only_old, out.only_new, out.neither, out.changed):
        readonly(arr)
    return out
