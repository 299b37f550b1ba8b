"""Result objects of the item-level engine (frozen; arrays inside are read-only).

Every ``to_json()`` carries rates as fractions (0-1); ``None`` where a figure is
undefined (e.g. a share over zero items).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from replicate.provenance import FileProvenance
from replicate.stats.bootstrap import Interval
from replicate.stats.classify import CLASSES, EQUIVALENT, IMPROVED, INCONCLUSIVE, REGRESSED
from replicate.stats.min_items import MIN_ITEMS, too_few_items
from replicate.stats.power import FlagPower
from replicate.stats.rational import as_float
from replicate.trials.intervals import computed, share_intervals, single_draw_intervals


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if np.isnan(x) else x


#: The classes each cell figure of ``items --format json`` counts, by its name: a count of items (``improved``) or
#: the share it is of the cell's items (``p_plus``).
CLASS_FIGURES: dict[str, frozenset[int]] = {
    "improved": frozenset({IMPROVED}), "p_plus": frozenset({IMPROVED}),
    "regressed": frozenset({REGRESSED}), "p_minus": frozenset({REGRESSED}),
    "changed": frozenset({IMPROVED, REGRESSED}), "p_chg": frozenset({IMPROVED, REGRESSED}),
    "equivalent": frozenset({EQUIVALENT}), "inconclusive": frozenset({INCONCLUSIVE}),
}


@dataclass(frozen=True)
class Shares:
    """Shares of a cell's (or stratum's) items in each class, with counts."""

    n_items: int
    improved: int
    regressed: int
    equivalent: int
    inconclusive: int

    def _share(self, k: int) -> float | None:
        return None if self.n_items == 0 else k / self.n_items

    @property
    def p_plus(self) -> float | None:
        return self._share(self.improved)

    @property
    def p_minus(self) -> float | None:
        return self._share(self.regressed)

    @property
    def p_chg(self) -> float | None:
        return self._share(self.improved + self.regressed)

    @property
    def equivalent_share(self) -> float | None:
        return self._share(self.equivalent)

    @property
    def inconclusive_share(self) -> float | None:
        return self._share(self.inconclusive)

    def count_of(self, classes: Collection[int]) -> int:
        """The items in any of ``classes`` (class codes)."""
        k = (self.improved, self.regressed, self.equivalent, self.inconclusive)
        return sum(k[c] for c in classes)

    @property
    def figure_counts(self) -> dict[str, int]:
        """The count behind each share, by its JSON name (``p_plus``: improved, ...)."""
        return {name: self.count_of(CLASS_FIGURES[name]) for name in ("p_plus", "p_minus", "p_chg", "equivalent",
                                                                     "inconclusive")}

    @classmethod
    def of(cls, codes: np.ndarray) -> "Shares":
        k = np.bincount(codes, minlength=len(CLASSES))
        return cls(int(codes.shape[0]), int(k[0]), int(k[1]), int(k[2]), int(k[3]))

    def to_json(self) -> dict:
        return {
            "p_plus": self.p_plus,
            "p_minus": self.p_minus,
            "p_chg": self.p_chg,
            "equivalent": self.equivalent_share,
            "inconclusive": self.inconclusive_share,
            "counts": {
                "improved": self.improved,
                "regressed": self.regressed,
                "equivalent": self.equivalent,
                "inconclusive": self.inconclusive,
            },
        }


@dataclass(frozen=True)
class SideSummary:
    """One side of a cell: trials per item (non-error, i.e. K), API errors, mean accuracy."""

    model: str
    k_min: int
    k_max: int
    k_mean: float | None
    trials: int
    api_errors: int
    accuracy_exact: Fraction | None  # mean over the cell's items of p̂(m, i), exactly
    interval: Interval | None = None  # of the accuracy, normal over the cell's items

    @property
    def accuracy(self) -> float | None:
        return as_float(self.accuracy_exact)

    def to_json(self) -> dict:
        out = {
            "model": self.model,
            "k": {"min": self.k_min, "max": self.k_max, "mean": _f(self.k_mean)},
            "trials": self.trials,
            "api_errors": self.api_errors,
            "accuracy": _f(self.accuracy),
        }
        if self.interval is not None:
            out["interval"] = {"accuracy": self.interval.to_json()}
        return out


@dataclass(frozen=True)
class Stratum:
    """The cell's items with one value of the strata column: their shares and delta, with intervals."""

    value: Any
    shares: Shares
    delta: float | None
    null_p95: dict | None
    intervals: dict[str, Interval] = field(default_factory=dict)  # delta and the shares (trials/intervals.py)

    def to_json(self) -> dict:
        return {
            "value": self.value,
            "n_items": self.shares.n_items,
            "delta": _f(self.delta),
            **self.shares.to_json(),
            "interval": {k: iv.to_json() for k, iv in self.intervals.items()},
            "null_p95": self.null_p95,
        }


@dataclass(frozen=True)
class SensitivityRow:
    """The cell's shares under another eps, with their intervals."""

    eps: str
    shares: Shares
    null_p95: dict | None

    @property
    def intervals(self) -> dict[str, Interval]:
        return share_intervals(self.shares.figure_counts, self.shares.n_items)

    def to_json(self) -> dict:
        return {
            "eps": float(self.eps), "eps_text": self.eps, **self.shares.to_json(),
            "interval": {k: iv.to_json() for k, iv in self.intervals.items()}, "null_p95": self.null_p95,
        }


@dataclass(frozen=True)
class SingleDraw:
    """One trial per item per model (seeded): the flips a one-shot comparison would show."""

    n_items: int
    correct_to_incorrect: int
    incorrect_to_correct: int

    @property
    def intervals(self) -> dict[str, Interval]:
        """The Wilson interval of each rate over the items."""
        return single_draw_intervals(self.correct_to_incorrect, self.incorrect_to_correct, self.n_items)

    def to_json(self) -> dict:
        n = self.n_items
        return {
            "n_items": n,
            "correct_to_incorrect": None if n == 0 else self.correct_to_incorrect / n,
            "incorrect_to_correct": None if n == 0 else self.incorrect_to_correct / n,
            "changed": None if n == 0 else (self.correct_to_incorrect + self.incorrect_to_correct) / n,
            "counts": {
                "correct_to_incorrect": self.correct_to_incorrect,
                "incorrect_to_correct": self.incorrect_to_correct,
            },
            "interval": {k: iv.to_json() for k, iv in self.intervals.items()},
        }


@dataclass(frozen=True)
class Looseness:
    """Strict vs loose over the cell's items that carry a loose reading on both sides."""

    n_items: int
    r_source_exact: Fraction
    r_target_exact: Fraction

    @property
    def r_source(self) -> float:
        return float(self.r_source_exact)

    @property
    def r_target(self) -> float:
        return float(self.r_target_exact)

    @property
    def delta_r_exact(self) -> Fraction:
        return self.r_target_exact - self.r_source_exact

    @property
    def delta_r(self) -> float:
        return float(self.delta_r_exact)

    def to_json(self) -> dict:
        return {
            "n_items": self.n_items,
            "r_source": _f(self.r_source),
            "r_target": _f(self.r_target),
            "delta_r": _f(self.delta_r),
        }


@dataclass(frozen=True, eq=False)
class ItemRows:
    """Per-item arrays of one cell (read-only), in the order of ``items``."""

    items: tuple[str, ...]
    benchmarks: tuple[str, ...]
    a: np.ndarray
    n1: np.ndarray
    api1: np.ndarray
    b: np.ndarray
    n2: np.ndarray
    api2: np.ndarray
    p: np.ndarray
    q: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cls: np.ndarray


@dataclass(frozen=True, eq=False)
class CellResult:
    """One edge x benchmark cell (``benchmark`` is None when benchmarks are pooled)."""

    source: str
    target: str
    benchmark: str | None
    source_side: SideSummary
    target_side: SideSummary
    shares: Shares
    null_p95: dict
    seed: int
    excluded: dict[str, int]
    sensitivity: tuple[SensitivityRow, ...] = ()
    single_draw: SingleDraw | None = None
    loose: Looseness | None = None
    strata: tuple[Stratum, ...] = ()
    rows: ItemRows | None = field(default=None, repr=False)
    null_summary: dict | None = None  # replications, mean, Monte Carlo p-value, false discoveries
    tarone_removed: int | None = None  # items left out as untestable (``tarone=True`` only)
    power: FlagPower | None = None  # power at the reference move, at this cell's K and items
    intervals: dict[str, Interval] | None = None  # delta and the shares of items (trials/intervals.py)

    @property
    def n_items(self) -> int:
        return self.shares.n_items

    def label(self) -> str:
        """``SRC -> TGT, benchmark B`` (the benchmark left out when benchmarks are pooled)."""
        edge = f"{self.source} -> {self.target}"
        return edge if self.benchmark is None else f"{edge}, benchmark {self.benchmark}"

    @property
    def delta_exact(self) -> Fraction | None:
        s, t = self.source_side.accuracy_exact, self.target_side.accuracy_exact
        return None if s is None or t is None else t - s

    @property
    def delta(self) -> float | None:
        return as_float(self.delta_exact)

    def figure(self, key: str, *, count: bool = False) -> tuple[Any, str | None]:
        """The cell's figure by its ``items --format json`` key (``n``, a key of :data:`CLASS_FIGURES`,
        ``delta``, ``delta_r``, ``null_p95.<key>``), exact, and why it is undefined where it is: a class figure
        is the share of the cell's items in its classes, or, with ``count``, how many they are."""
        n = self.n_items
        if key == "n":
            return n, None
        if n == 0:
            return None, f"{self.source} -> {self.target} has no items with non-error trials on both sides in this cell"
        if key in CLASS_FIGURES:  # a count of items (or the share it is), or a share (a rate: never a count)
            k = self.shares.count_of(CLASS_FIGURES[key])
            return (k if count else Fraction(k, n)), None
        if key == "delta":
            return self.delta_exact, None
        if key == "delta_r":
            d = None if self.loose is None else self.loose.delta_r_exact
            return d, None if d is not None else "no item has a loose reading on both sides"
        null: dict[str, Any] = self.null_p95 or {}
        name = key.removeprefix("null_p95.")
        if name == key:
            raise KeyError(key)
        if name not in null:
            return None, f"the null has no {name!r}; keys: {', '.join(null) or 'none'}"
        return null[name], None if null[name] is not None else "the permutation null was not run"

    def to_json(self) -> dict:
        sh = self.shares
        out = {
            "source": self.source,
            "target": self.target,
            "benchmark": self.benchmark,
            "n_items": sh.n_items,
            "delta": _f(self.delta),
            "p_plus": sh.p_plus,
            "p_minus": sh.p_minus,
            "p_chg": sh.p_chg,
            "equivalent": sh.equivalent_share,
            "inconclusive": sh.inconclusive_share,
            "interval": {k: iv.to_json() for k, iv in (self.intervals or {}).items()},
            "null_p95": self.null_p95,
            "null": self.null_summary,
            "seed": self.seed,
            "counts": sh.to_json()["counts"],
            "source_side": self.source_side.to_json(),
            "target_side": self.target_side.to_json(),
            "excluded": dict(self.excluded),
        }
        if self.sensitivity:
            out["sensitivity"] = [r.to_json() for r in self.sensitivity]
        if self.single_draw is not None:
            out["single_draw"] = self.single_draw.to_json()
        if self.loose is not None:
            out["loose"] = self.loose.to_json()
        if self.strata:
            out["strata"] = [s.to_json() for s in self.strata]
        out["power_at_reference"] = None if self.power is None else self.power.to_json()
        if self.tarone_removed is not None:
            out["tarone"] = {"removed": self.tarone_removed}
        return out


@dataclass(frozen=True)
class ModelAccuracy:
    """Accuracy of one model on one benchmark: mean over items of p̂(m, i), with an interval."""

    model: str
    benchmark: str
    n_items: int
    items_without_valid_trials: int
    trials: int
    categories: dict[str, int]
    accuracy_exact: Fraction | None
    ci_low: float | None
    ci_high: float | None
    interval: str
    strict_exact: Fraction | None = None  # over items with a loose reading
    loose_exact: Fraction | None = None
    loose_items: int = 0

    @property
    def accuracy(self) -> float | None:
        return as_float(self.accuracy_exact)

    @property
    def strict(self) -> float | None:
        return as_float(self.strict_exact)

    @property
    def loose(self) -> float | None:
        return as_float(self.loose_exact)

    @property
    def r_exact(self) -> Fraction | None:
        if self.strict_exact is None or self.loose_exact is None:
            return None
        return self.loose_exact - self.strict_exact

    @property
    def r(self) -> float | None:
        return as_float(self.r_exact)

    def to_json(self) -> dict:
        out = {
            "model": self.model,
            "benchmark": self.benchmark,
            "n_items": self.n_items,
            "items_without_valid_trials": self.items_without_valid_trials,
            "trials": self.trials,
            "categories": dict(self.categories),
            "accuracy": _f(self.accuracy),
            "interval": {"accuracy": computed(_f(self.ci_low), _f(self.ci_high), self.interval, self.n_items).to_json()},
        }
        if self.loose_items:
            out["strict_loose"] = {
                "n_items": self.loose_items,
                "strict": _f(self.strict),
                "loose": _f(self.loose),
                "r": _f(self.r),
            }
        return out


@dataclass(frozen=True, eq=False)
class ItemsResult:
    """Everything ``replicate items`` computes."""

    cells: tuple[CellResult, ...]
    accuracy: tuple[ModelAccuracy, ...]
    eps: str
    alpha: float
    ci: str
    n_null: int
    seed: int
    by: str
    strata_column: str | None
    single_draw: bool
    input: dict
    diagnostics: dict
    provenance: FileProvenance | None = None  # the trials file, for markdown and table output
    tarone: bool = False
    power_move: tuple[float, float] = (0.4, 0.6)
    min_items: int = MIN_ITEMS
    reading: str = "strict"  # the correctness read: strict (the category), or loose (correct_loose; trials/readings.py)

    def small_cell(self, c: CellResult) -> str | None:
        """The small-sample flag's words for a cell of fewer than ``min_items`` items, else None."""
        return too_few_items("the cell has", c.n_items, self.min_items)

    def small_stratum(self, s: Stratum) -> str | None:
        """The small-sample flag's words for a stratum of fewer than ``min_items`` items, else None."""
        return too_few_items("the stratum has", s.shares.n_items, self.min_items)

    def small_cells(self) -> list[tuple[CellResult, str]]:
        """The cells of fewer than ``min_items`` items, each with its flag's words."""
        return [(c, m) for c in self.cells if (m := self.small_cell(c)) is not None]

    def to_json(self) -> dict:
        cells = []
        for c in self.cells:
            js, message = c.to_json(), self.small_cell(c)
            js["small_sample"] = message is not None
            js["flags"] = [] if message is None else [{"code": "small_sample", "where": c.label(), "message": message}]
            for s, sj in zip(c.strata, js.get("strata", [])):
                where = f"{c.label()}, {self.strata_column} {s.value}"
                words = self.small_stratum(s)
                sj["small_sample"] = words is not None
                js["flags"] += [] if words is None else [{"code": "small_sample", "where": where, "message": words}]
            cells.append(js)
        return {
            "cells": cells,
            "accuracy": [a.to_json() for a in self.accuracy],
            "settings": {
                "eps": float(self.eps),
                "eps_text": self.eps,
                "alpha": self.alpha,
                "ci": self.ci,
                "confidence_level": 0.95,
                "null": self.n_null,
                "null_quantile": "0.95 (numpy.quantile, method 'linear')",
                "seed": self.seed,
                "by": self.by,
                "strata": self.strata_column,
                "single_draw": self.single_draw,
                "fisher": "two-sided, as scipy.stats.fisher_exact",
                "multiple_testing": "Benjamini-Hochberg per cell, as scipy.stats.false_discovery_control",
                "tarone": self.tarone,
                "min_items": self.min_items,
                "reading": self.reading,
                "power_reference": {
                    "p": self.power_move[0],
                    "q": self.power_move[1],
                    "k": "the cell's K per side (the median when K varies)",
                    "context": "one more item beside the cell's items, their observed p-values fixed",
                },
            },
            "input": self.input,
        }
