"""Pure aggregation of a trials table into per-(model, benchmark, item) count arrays.

A *unit* is one (benchmark, item) pair. Every array below has shape
``(n_models, n_units)`` (``categories`` adds a last axis of length 6), so a
cell's counts are a slice, never a dict lookup per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from replicate.errors import BadInput, Message, Param
from replicate.trials.load import API_ERROR, CATEGORIES, CORRECT, TrialsTable, readonly, short_repr


@dataclass(frozen=True, eq=False)
class Counts:
    """Trial counts per model and unit (arrays read-only).

    ``trials`` counts every row; ``api_errors`` the rows whose category is
    ``api_error``; ``correct`` the rows whose category is ``correct``;
    ``valid = trials - api_errors`` is the denominator of p̂(m, i).
    ``loose_n``/``loose_correct`` count the non-error trials that carry a loose
    reading and those read correct under it; ``loose_strict_correct`` counts the
    same responses read correct strictly, so loose and strict compare per response.
    An API-error row never counts, whatever its ``correct_loose``.
    """

    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    unit_benchmark: np.ndarray  # (n_units,) index into benchmarks
    unit_item: tuple[str, ...]  # (n_units,) item id
    trials: np.ndarray
    api_errors: np.ndarray
    correct: np.ndarray
    categories: np.ndarray  # (n_models, n_units, len(CATEGORIES))
    loose_n: np.ndarray
    loose_correct: np.ndarray
    loose_strict_correct: np.ndarray

    @property
    def n_units(self) -> int:
        return int(self.unit_benchmark.shape[0])

    @property
    def valid(self) -> np.ndarray:
        return self.trials - self.api_errors


def aggregate(table: TrialsTable) -> tuple[Counts, np.ndarray]:
    """Counts per (model, unit), and each row's unit index (for metadata look-ups)."""
    n_items = len(table.items)
    key = table.benchmark.astype(np.int64) * n_items + table.item
    uniq, row_unit = np.unique(key, return_inverse=True)
    row_unit = row_unit.astype(np.int64)
    n_units = int(uniq.shape[0])
    n_models = len(table.models)
    mu = table.model.astype(np.int64) * n_units + row_unit
    size = n_models * n_units
    ncat = len(CATEGORIES)
    cats = np.bincount(mu * ncat + table.category, minlength=size * ncat).reshape(
        n_models, n_units, ncat
    )
    has_loose = (table.loose >= 0) & (table.category != API_ERROR)
    loose_n = np.bincount(mu[has_loose], minlength=size).reshape(n_models, n_units)
    loose_ok = np.bincount(mu[has_loose & (table.loose == 1)], minlength=size).reshape(n_models, n_units)
    strict_ok = np.bincount(mu[has_loose & (table.category == CORRECT)], minlength=size).reshape(n_models, n_units)
    counts = Counts(
        models=table.models,
        benchmarks=table.benchmarks,
        unit_benchmark=readonly((uniq // n_items).astype(np.int32)),
        unit_item=tuple(table.items[int(i)] for i in uniq % n_items),
        trials=readonly(cats.sum(axis=2)),
        api_errors=readonly(np.ascontiguousarray(cats[:, :, API_ERROR])),
        correct=readonly(np.ascontiguousarray(cats[:, :, CORRECT])),
        categories=readonly(cats),
        loose_n=readonly(loose_n),
        loose_correct=readonly(loose_ok),
        loose_strict_correct=readonly(strict_ok),
    )
    return counts, row_unit


_SCALARS = frozenset({str, int, float, bool})
_KINDS: dict[type, str] = {list: "a list", dict: "an object"}


def unit_metadata(
    table: TrialsTable, row_unit: np.ndarray, n_units: int, column: str, *, param: str = "strata"
) -> list[Any]:
    """One value of a metadata column per unit; the column must be constant per item.

    ``param`` names the option that asked for the column, in errors.

    Units without a value get ``None``. A value that changes within one item is
    bad input naming both lines.
    """
    values = table.column(column)
    out: list[Any] = [None] * n_units
    first_line: list[int] = [0] * n_units
    for r, v in enumerate(values):
        if v is None:
            continue
        if type(v) not in _SCALARS:
            kind = _KINDS.get(type(v), type(v).__name__)
            raise BadInput(
                Message(f"metadata column {column!r} holds {kind} ({short_repr(v)}); ", Param(param),
                        " needs one value per item: a string, a number or true/false"),
                path=table.path,
                line=int(table.line[r]),
            )
        u = int(row_unit[r])
        if out[u] is None:
            out[u] = v
            first_line[u] = int(table.line[r])
        elif out[u] != v or (type(out[u]) is bool) != (type(v) is bool):
            raise BadInput(
                f"metadata column {column!r} is not constant for item "
                f"{table.items[int(table.item[r])]!r}: {v!r} here, {out[u]!r} at line {first_line[u]}",
                path=table.path,
                line=int(table.line[r]),
            )
    return out
