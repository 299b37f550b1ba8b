"""The column store of a trials table (:class:`TrialsTable`): rows become small integers as they are read,
chunk by chunk. :mod:`replicate.trials.load` reads files into it (and re-exports the table).

A reader hands :class:`ColumnBuilder` one chunk of parsed rows at a time (a list
of dicts and their lines); the builder validates the chunk, turns each string
column into integer codes (a model, benchmark or item id is interned once, the
first time it is seen) and appends the codes to growing column buffers, so the
rows of a chunk are garbage as soon as it is done. Memory is a few bytes per
trial (codes, trial index, category, line) plus one object per distinct value,
never a Python object per row.

Every error is a :class:`~replicate.errors.BadInput` naming the file and the
line. Validation looks at the distinct values of a chunk's column rather than at
every row; a bad value is then located to its first row.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from replicate.errors import BadInput
from replicate.provenance import FileProvenance

CATEGORIES: tuple[str, ...] = (
    "correct",
    "wrong",
    "format_failure",
    "refusal",
    "truncation",
    "api_error",
)
REQUIRED: tuple[str, ...] = ("model", "item", "trial", "benchmark", "category")
KNOWN: frozenset[str] = frozenset(REQUIRED + ("correct_loose", "scorer"))


class _Missing:
    """A column absent from a row (told apart from a JSON null)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()

#: Metadata values interned by (type, value): hashable scalars only (a list or an object is kept as it is).
_SCALARS = (str, int, float, bool)


def short_repr(v: Any, limit: int = 60) -> str:
    """``repr(v)``, cut to ``limit`` characters for error messages."""
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def code_dtype(top: int) -> type[np.signedinteger]:
    """The narrowest signed integer type holding every value in ``0 .. top``."""
    for t in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(t).max:
            return t
    return np.int64


def compact(a: np.ndarray) -> np.ndarray:
    """``a`` (integers >= 0) in the narrowest signed integer type that holds them."""
    return a.astype(code_dtype(int(a.max()) if a.size else 0), copy=False)


def readonly(a: np.ndarray) -> np.ndarray:
    """``a``, marked read-only."""
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class MetaColumn:
    """A pass-through (metadata) column: ``codes[r]`` indexes :attr:`values`; -1 where the row has none
    (the column absent, or null). Each distinct value is held once."""

    codes: np.ndarray
    values: tuple[Any, ...]

    def take(self, keep: np.ndarray) -> MetaColumn:
        return MetaColumn(readonly(self.codes[keep]), self.values)

    def to_list(self) -> list[Any]:
        """One value per row (None where there is none)."""
        table = [*self.values, None]  # code -1 -> None
        return list(map(table.__getitem__, self.codes.tolist()))


def _column(rows: list[dict], name: str) -> list[Any]:
    try:
        return list(map(itemgetter(name), rows))
    except KeyError:
        return [r.get(name, MISSING) for r in rows]


def _first_row(col: list[Any], pred: Callable[[Any], bool]) -> int:
    for r, v in enumerate(col):
        if pred(v):
            return r
    raise AssertionError("no offending row found")  # pragma: no cover


def _describe(v: Any) -> str:
    if v is MISSING:
        return "missing"
    if v is None or (type(v) is str and not v.strip()):
        return "empty"
    return f"not a string: {v!r}"


class _Chunks:
    """A column growing chunk by chunk; :meth:`take` joins the chunks once (and lets them go)."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.parts: list[np.ndarray] = []

    def append(self, a: np.ndarray) -> None:
        self.parts.append(a)

    def take(self) -> np.ndarray:
        """The chunks joined (in the widest of their types; :attr:`dtype` when there are none)."""
        out = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=self.dtype)
        self.parts = []
        return out


class _Interner:
    """Integer codes for a required string column; a value is looked up once per chunk, not once per row.

    Codes are handed out in the order values are first seen; :meth:`finish` renumbers them in sorted
    order of the values' text, so everything downstream (cell order, random draws per item) is
    independent of the order of the rows in the file. Item ids compare as strings: 7 and "7" are one item.
    """

    def __init__(self, name: str, *, allow_int: bool = False) -> None:
        self.name = name
        self.ok_types = {str, int} if allow_int else {str}
        self.code: dict[Any, int] = {}  # value as written -> provisional code
        self.text: dict[str, int] = {}  # value's text -> provisional code
        self.only_text = True  # every key of self.code is a str
        self.chunks = _Chunks(np.int32)

    def add(self, col: list[Any], lines: np.ndarray, path: Path) -> None:
        if self.only_text:
            # Every value seen so far is text, and no JSON value but text equals a text key: a chunk
            # of known values needs one look-up per row (a new or bad value fails it: checked below).
            try:
                self.chunks.append(np.fromiter(map(self.code.__getitem__, col), dtype=self.dtype(), count=len(col)))
                return
            except (KeyError, TypeError):
                pass
        name, ok_types = self.name, self.ok_types
        if set(map(type, col)) - ok_types:
            r = _first_row(col, lambda v: type(v) not in self.ok_types)
            v = col[r]
            if v is MISSING or v is None:
                raise BadInput(f"column {name!r} is {_describe(v)}", path=path, line=int(lines[r]))
            raise BadInput(
                f"column {name!r} must be a string, got {type(v).__name__}: {short_repr(v)}",
                path=path,
                line=int(lines[r]),
            )
        code = self.code
        for v in dict.fromkeys(col):
            if v in code:
                continue
            if type(v) is str and not v.strip():
                raise BadInput(f"column {name!r} is empty", path=path, line=int(lines[col.index(v)]))
            code[v] = self.text.setdefault(str(v), len(self.text))
            self.only_text &= type(v) is str
        self.chunks.append(np.fromiter(map(code.__getitem__, col), dtype=self.dtype(), count=len(col)))

    def dtype(self) -> type[np.signedinteger]:
        """The narrowest type of every provisional code so far (a chunk's codes are kept in it)."""
        return code_dtype(max(len(self.text) - 1, 0))

    def finish(self) -> tuple[np.ndarray, tuple[str, ...]]:
        names = sorted(self.text)
        remap = np.empty(len(names), dtype=code_dtype(len(names) - 1))
        remap[[self.text[s] for s in names]] = np.arange(len(names))
        provisional = self.chunks.take()
        return remap[provisional], tuple(names)


class _MetaBuilder:
    """A metadata column growing chunk by chunk: codes into distinct values, interned by (type, value)
    so that ``true`` and ``1`` stay two values."""

    def __init__(self, rows_before: int) -> None:
        self.index: dict[tuple[type, Any], int] = {}
        self.values: list[Any] = []
        self.chunks = _Chunks(np.int32)
        if rows_before:
            self.chunks.append(np.full(rows_before, -1, dtype=np.int32))

    def _intern(self, v: Any) -> int:
        if v is None or v is MISSING:
            return -1
        if type(v) not in _SCALARS:  # a list or an object: kept as it is, once per row
            self.values.append(v)
            return len(self.values) - 1
        key = (type(v), v)
        c = self.index.get(key)
        if c is None:
            c = self.index[key] = len(self.values)
            self.values.append(v)
        return c

    def add(self, col: list[Any]) -> None:
        kinds = set(map(type, col)) - {type(None), _Missing}
        if len(kinds) <= 1 and kinds <= set(_SCALARS):
            # One type: equal values are the same value (no True == 1 across types), one look-up each.
            local = {v: self._intern(v) for v in dict.fromkeys(col)}
            codes = np.fromiter(map(local.__getitem__, col), dtype=np.int32, count=len(col))
        else:
            codes = np.fromiter(map(self._intern, col), dtype=np.int32, count=len(col))
        self.chunks.append(codes)

    def absent(self, n: int) -> None:
        self.chunks.append(np.full(n, -1, dtype=np.int32))

    def finish(self) -> MetaColumn:
        codes = self.chunks.take().astype(code_dtype(len(self.values)), copy=False)  # -1 .. len(values) fit
        return MetaColumn(readonly(codes), tuple(self.values))


_CATEGORY_CODE = {c: i for i, c in enumerate(CATEGORIES)}
_LOOSE_CODE = {True: 1, False: 0, None: -1, MISSING: -1}
_LOOSE_TYPES = {bool, type(None), _Missing}


@dataclass(frozen=True, eq=False)
class TrialsTable:
    """A validated trials table held as columns of integer codes (arrays read-only).

    ``model[r]``, ``benchmark[r]`` and ``item[r]`` index into :attr:`models`,
    :attr:`benchmarks` and :attr:`items`; ``category[r]`` into :data:`CATEGORIES`;
    ``loose[r]`` is 1/0 for a loose reading true/false and -1 where there is none;
    ``line[r]`` is the row's line in the file (1-based). The metadata columns are
    held as codes into their distinct values (:meth:`column_codes`). Each integer column
    is held in the narrowest signed type its values need (codes, trial indices and lines
    of a table of a few hundred models, benchmarks or trials take one or two bytes).
    """

    path: str
    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    items: tuple[str, ...]
    model: np.ndarray
    benchmark: np.ndarray
    item: np.ndarray
    trial: np.ndarray
    category: np.ndarray
    loose: np.ndarray
    line: np.ndarray
    scorers: tuple[str, ...] = ()
    metadata_columns: tuple[str, ...] = ()
    provenance: FileProvenance | None = None
    _meta: Mapping[str, MetaColumn] = field(default_factory=dict, repr=False)

    @property
    def n_rows(self) -> int:
        return int(self.model.shape[0])

    @property
    def has_loose(self) -> bool:
        return bool((self.loose >= 0).any())

    def column_codes(self, name: str) -> MetaColumn:
        """A pass-through column as one code per row into its distinct values (-1: none in that row)."""
        if name not in self.metadata_columns:
            allowed = ", ".join(self.metadata_columns) or "(none)"
            raise BadInput(
                f"no column {name!r} in the trials table; metadata columns: {allowed}",
                path=self.path,
            )
        return self._meta[name]

    def column(self, name: str) -> list[Any]:
        """The raw values of a pass-through column, one per row (None where absent)."""
        return self.column_codes(name).to_list()

    def take(self, keep: np.ndarray, **columns: Any) -> TrialsTable:
        """The rows ``keep`` (indices, in order) of the table; ``columns`` replace fields of the result
        (``category=...``, ``path=...``) as :func:`dataclasses.replace` would."""

        def sub(a: np.ndarray) -> np.ndarray:
            return readonly(a[keep])

        fields = {c: sub(getattr(self, c)) for c in ("model", "benchmark", "item", "trial", "category", "loose", "line")}
        meta = {name: m.take(keep) for name, m in self._meta.items()}
        return replace(self, **{**fields, "_meta": meta, **columns})



class ColumnBuilder:
    """Validates chunks of rows of one trials table and appends them to column buffers (see the module)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.n_rows = 0
        self.first_line: int | None = None
        self.model = _Interner("model")
        self.benchmark = _Interner("benchmark")
        self.item = _Interner("item", allow_int=True)
        self.category = _Chunks(np.int8)
        self.trial = _Chunks(np.int64)
        self.loose = _Chunks(np.int8)
        self.line = _Chunks(np.int64)
        self.scorers: set[str] = set()
        self.meta: dict[str, _MetaBuilder] = {}

    def add(self, rows: list[dict], lines: np.ndarray, present: set[str] | None = None) -> None:
        """Validate one chunk of rows (``lines[j]``: the 1-based line of ``rows[j]``) and append its columns;
        ``present``: the columns any of the rows has, when the caller knows them."""
        if not rows:
            return
        path = self.path
        if present is None:
            present = set().union(*rows)
        if self.first_line is None:
            # A required column in no row of the first chunk: the file (or its start) lacks it.
            self.first_line = int(lines[0])
            missing = [c for c in REQUIRED if c not in present]
            if missing:
                raise BadInput(
                    f"missing required column(s): {', '.join(missing)} "
                    f"(required: {', '.join(REQUIRED)})",
                    path=path,
                    line=self.first_line,
                )
        n = len(rows)

        def col(c: str) -> list[Any]:
            return _column(rows, c) if c in present else [MISSING] * n

        self.model.add(col("model"), lines, path)
        self.benchmark.add(col("benchmark"), lines, path)
        self.item.add(col("item"), lines, path)
        self.category.append(_categories(col("category"), path, lines))
        self.trial.append(compact(_trials(col("trial"), path, lines)))
        if "correct_loose" in present:
            self.loose.append(_loose(_column(rows, "correct_loose"), path, lines))
        else:
            self.loose.append(np.full(n, -1, dtype=np.int8))
        if "scorer" in present:
            self.scorers.update(v for v in dict.fromkeys(_column(rows, "scorer")) if type(v) is str)
        for name in present - KNOWN - self.meta.keys():
            self.meta[name] = _MetaBuilder(self.n_rows)
        for name, b in self.meta.items():
            if name in present:
                b.add(_column(rows, name))
            else:
                b.absent(len(rows))
        self.line.append(compact(np.asarray(lines, dtype=np.int64)))
        self.n_rows += len(rows)

    def finish(self, provenance: FileProvenance) -> TrialsTable:
        """The table: codes renumbered in sorted order, every column whole; a duplicate trial refused."""
        if not self.n_rows:
            raise BadInput("the trials table has no rows", path=self.path)
        model, models = self.model.finish()
        bench, benchmarks = self.benchmark.finish()
        item, items = self.item.finish()
        trial, line = self.trial.take(), self.line.take()
        check_duplicates(model, bench, item, trial, line, (models, benchmarks, items), self.path)
        meta = {name: self.meta[name].finish() for name in sorted(self.meta)}
        return TrialsTable(
            path=str(self.path), models=models, benchmarks=benchmarks, items=items, model=readonly(model),
            benchmark=readonly(bench), item=readonly(item), trial=readonly(trial),
            category=readonly(self.category.take()), loose=readonly(self.loose.take()), line=readonly(line),
            scorers=tuple(sorted(self.scorers)), metadata_columns=tuple(meta), provenance=provenance, _meta=meta,
        )


# --------------------------------------------------------------------------------------
# Per-chunk checks of the fixed columns. Types are checked by ``type(v)``, never by equality,
# so ``true`` is not taken for ``1`` (Python's ``True == 1``).


def _categories(col: list[Any], path: Path, lines: np.ndarray) -> np.ndarray:
    try:  # no JSON value but text equals a text key: the look-up alone checks every row
        return np.fromiter(map(_CATEGORY_CODE.__getitem__, col), dtype=np.int8, count=len(col))
    except (KeyError, TypeError):
        r = _first_row(col, lambda v: type(v) is not str or v not in _CATEGORY_CODE)
        v = col[r]
        shown = "missing" if v is MISSING else short_repr(v)
        raise BadInput(
            f"unknown category {shown}; allowed: {', '.join(CATEGORIES)}",
            path=path,
            line=int(lines[r]),
        ) from None


def _trials(col: list[Any], path: Path, lines: np.ndarray) -> np.ndarray:
    arr = None
    if set(map(type, col)) == {int}:
        try:
            arr = np.fromiter(col, dtype=np.int64, count=len(col))
        except OverflowError:
            arr = None
    if arr is None:
        r = _first_row(col, lambda v: type(v) is not int or not -(2**62) < v < 2**62)
        v = col[r]
        shown = "missing" if v is MISSING else f"not an integer: {short_repr(v)}"
        raise BadInput(f"column 'trial' is {shown}", path=path, line=int(lines[r]))
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        r = int(neg[0])
        raise BadInput(f"column 'trial' must be >= 0, got {arr[r]}", path=path, line=int(lines[r]))
    return arr


def _loose(col: list[Any], path: Path, lines: np.ndarray) -> np.ndarray:
    if set(map(type, col)) - _LOOSE_TYPES:
        r = _first_row(col, lambda v: type(v) not in _LOOSE_TYPES)
        raise BadInput(
            f"column 'correct_loose' must be true, false or null, got {short_repr(col[r])}",
            path=path,
            line=int(lines[r]),
        )
    return np.fromiter(map(_LOOSE_CODE.__getitem__, col), dtype=np.int8, count=len(col))


def check_duplicates(
    model: np.ndarray,
    bench: np.ndarray,
    item: np.ndarray,
    trial: np.ndarray,
    lines: np.ndarray,
    names: tuple[Iterable[str], Iterable[str], Iterable[str]],
    path: Path,
) -> None:
    """A (model, benchmark, item, trial) written twice is bad input naming both lines (the later one's
    line first). One sort of one int64 key when the four fit in it; otherwise a sort of (unit, trial)."""
    models, benchmarks, items = (tuple(n) for n in names)
    n_units = len(models) * len(benchmarks) * len(items)
    top = int(trial.max()) + 1 if trial.size else 1
    if n_units * top < 2**62:
        key = model.astype(np.int64)  # built in place: one array of 8 bytes a row
        for factor, column in ((len(benchmarks), bench), (len(items), item), (top, trial)):
            key *= factor
            key += column
        key.sort()
        if not (key[1:] == key[:-1]).any():
            return
        del key
    unit = (model.astype(np.int64) * len(benchmarks) + bench) * len(items) + item
    order = np.lexsort((lines, trial, unit))
    su, st = unit[order], trial[order]
    same = np.flatnonzero((su[1:] == su[:-1]) & (st[1:] == st[:-1]))
    if same.size == 0:
        return
    later = lines[order[same + 1]]
    k = int(same[np.argmin(later)])
    r1, r2 = int(order[k]), int(order[k + 1])
    raise BadInput(
        f"duplicate trial: model={models[model[r2]]!r}, benchmark={benchmarks[bench[r2]]!r}, "
        f"item={items[item[r2]]!r}, trial={int(trial[r2])} also at line {int(lines[r1])}",
        path=path,
        line=int(lines[r2]),
    )
