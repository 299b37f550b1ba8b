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
    """Counts per (model, unit), and each row's unit index (for metadata look-ups).

    Every count is one ``np.bincount`` over the rows' codes; no array of more than one small integer
    per row is made. The units are the (benchmark, item) pairs that occur, found by marking them in a
    table of every pair when that table is not much larger than the rows (else by a sort).
    """
    n_items = len(table.items)
    n_pairs = len(table.benchmarks) * n_items
    wide = np.int64 if n_pairs >= 2**31 else np.int32  # n_items and every key fit in it
    key = table.benchmark.astype(wide) * n_items + table.item
    if n_pairs <= max(4 * table.n_rows, 1 << 20):
        seen = np.zeros(n_pairs, dtype=bool)
        seen[key] = True
        uniq = np.flatnonzero(seen)
        number = np.cumsum(seen, dtype=np.int64) - 1
        del seen
        row_unit = number[key]
        del number
    else:
        uniq, row_unit = np.unique(key, return_inverse=True)
        row_unit = row_unit.ravel()
    del key
    n_units = int(uniq.shape[0])
    n_models = len(table.models)
    size = n_models * n_units
    ncat = len(CATEGORIES)
    idx = np.int64 if size * ncat >= 2**31 else np.int32  # every code below fits in it
    row_unit = row_unit.astype(idx)
    mu = table.model.astype(idx) * n_units + row_unit
    cats = np.bincount(mu * ncat + table.category, minlength=size * ncat).reshape(n_models, n_units, ncat)
    has_loose = (table.loose >= 0) & (table.category != API_ERROR)
    if has_loose.any():
        loose_n = np.bincount(mu[has_loose], minlength=size).reshape(n_models, n_units)
        loose_ok = np.bincount(mu[has_loose & (table.loose == 1)], minlength=size).reshape(n_models, n_units)
        strict_ok = np.bincount(mu[has_loose & (table.category == CORRECT)], minlength=size).reshape(n_models, n_units)
    else:
        loose_n = np.zeros((n_models, n_units), dtype=np.int64)
        loose_ok, strict_ok = loose_n.copy(), loose_n.copy()
    del mu
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
    return counts, readonly(row_unit)


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
    meta = table.column_codes(column)
    codes = meta.codes
    # Non-scalar values (a list, an object) are refused at their first row.
    bad = [c for c, v in enumerate(meta.values) if type(v) not in _SCALARS]
    first_bad = int(np.flatnonzero(np.isin(codes, bad))[0]) if bad else None
    # Values compare as Python compares them (1 == 1.0), but true/false never equal a number.
    kind_of: dict[tuple[bool, Any], int] = {}
    kind = np.array([kind_of.setdefault((type(v) is bool, v), len(kind_of)) if type(v) in _SCALARS else -1
                     for v in meta.values] + [-1], dtype=np.int64)[codes]  # code -1 -> -1
    rows = np.flatnonzero(kind >= 0)
    units, first = np.unique(row_unit[rows], return_index=True)  # each unit's first row holding a value
    first_row = np.full(n_units, -1, dtype=np.int64)
    first_row[units] = rows[first]
    conflict = rows[kind[rows] != kind[first_row[row_unit[rows]]]]
    first_conflict = int(conflict[0]) if conflict.size else None
    if first_bad is not None and (first_conflict is None or first_bad < first_conflict):
        v = meta.values[codes[first_bad]]
        what = _KINDS.get(type(v), type(v).__name__)
        raise BadInput(
            Message(f"metadata column {column!r} holds {what} ({short_repr(v)}); ", Param(param),
                    " needs one value per item: a string, a number or true/false"),
            path=table.path,
            line=int(table.line[first_bad]),
        )
    if first_conflict is not None:
        r = first_conflict
        r0 = int(first_row[row_unit[r]])
        raise BadInput(
            f"metadata column {column!r} is not constant for item "
            f"{table.items[int(table.item[r])]!r}: {meta.values[codes[r]]!r} here, {meta.values[codes[r0]]!r} "
            f"at line {int(table.line[r0])}",
            path=table.path,
            line=int(table.line[r]),
        )
    return [None if r < 0 else meta.values[codes[r]] for r in first_row.tolist()]
