"""Reading and validating a trials table (JSONL, JSONL.gz or CSV): the I/O side of the engine.

One row per trial (see ``docs/items.md`` and the trials-table contract):
``model``, ``item``, ``trial`` (int >= 0), ``benchmark``, ``category`` (one of
:data:`CATEGORIES`), optional ``correct_loose`` (true/false/null) and ``scorer``;
any other column is passed through as item metadata.

The reader is columnar: rows are parsed with orjson in one call where possible,
strings are interned into integer codes, and validation looks at the few
distinct values of each column rather than at every row; a bad value is then
located to its line. Every error is a :class:`~replicate.errors.BadInput` that
names the file and the line.

Item identity is (benchmark, item): the same item id may appear in two
benchmarks without clashing. A duplicate (model, benchmark, item, trial) is bad
input and the error names both lines.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import orjson

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.inputfile import is_stdio, read_input
from replicate.provenance import FileProvenance, file_provenance
from replicate.readkit import gunzip
from replicate.readkit_records import check_repeated_fields, field_pattern

CATEGORIES: tuple[str, ...] = (
    "correct",
    "wrong",
    "format_failure",
    "refusal",
    "truncation",
    "api_error",
)
CORRECT = CATEGORIES.index("correct")
API_ERROR = CATEGORIES.index("api_error")
REQUIRED: tuple[str, ...] = ("model", "item", "trial", "benchmark", "category")
KNOWN: frozenset[str] = frozenset(REQUIRED + ("correct_loose", "scorer"))

_MISSING = object()


def readonly(a: np.ndarray) -> np.ndarray:
    """``a``, marked read-only."""
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class TrialsTable:
    """A validated trials table held as columns of integer codes (arrays read-only).

    ``model[r]``, ``benchmark[r]`` and ``item[r]`` index into :attr:`models`,
    :attr:`benchmarks` and :attr:`items`; ``category[r]`` into :data:`CATEGORIES`;
    ``loose[r]`` is 1/0 for a loose reading true/false and -1 where there is none;
    ``line[r]`` is the row's line in the file (1-based).
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
    _rows: Sequence[dict] = field(default=(), repr=False)

    @property
    def n_rows(self) -> int:
        return int(self.model.shape[0])

    @property
    def has_loose(self) -> bool:
        return bool((self.loose >= 0).any())

    def column(self, name: str) -> list[Any]:
        """The raw values of a pass-through column, one per row (None where absent)."""
        if name not in self.metadata_columns:
            allowed = ", ".join(self.metadata_columns) or "(none)"
            raise BadInput(
                f"no column {name!r} in the trials table; metadata columns: {allowed}",
                path=self.path,
            )
        return [r.get(name) for r in self._rows]


# --------------------------------------------------------------------------------------
# Entry point


def read_trials(
    path: str | os.PathLike[str], *, diagnostics: Diagnostics | None = None
) -> TrialsTable:
    """Read and validate a trials table. ``.csv`` is CSV; anything else is JSONL (``.gz`` ok);
    ``-`` reads standard input (CSV unless its first record starts with ``{``)."""
    diag = diagnostics if diagnostics is not None else Diagnostics()
    p = Path(path)
    raw = read_input(p, what="trials table")
    prov = file_provenance(p, data=raw)
    data = raw
    name = p.name.lower()
    if name.endswith(".gz") or (is_stdio(p) and raw[:2] == b"\x1f\x8b"):
        if raw[:2] != b"\x1f\x8b":
            raise BadInput("name ends in .gz but the file is not gzip-compressed", path=p)
        data = gunzip(raw, p)  # the bounds every compressed input gets (a gzip bomb refused)
        name = name[:-3]
    if name.endswith(".csv") or (is_stdio(p) and data.lstrip()[:1] not in (b"{", b"")):
        rows, lines = _rows_csv(data, p, diag)  # standard input: CSV unless it starts like JSONL
    else:
        rows, lines = _rows_jsonl(data, p, diag)
    return _build(rows, lines, p, prov)


# --------------------------------------------------------------------------------------
# Row sources


def _rows_jsonl(data: bytes, path: Path, diag: Diagnostics) -> tuple[list[dict], np.ndarray]:
    ends_with_newline = data.endswith(b"\n")
    body = data[:-1] if ends_with_newline else data
    n_lines = body.count(b"\n") + 1 if body else 0
    # The common case (no blank line, no bad line): one orjson call over the lines
    # joined by commas. A blank line gives ``,,`` (invalid JSON); a line holding two
    # values joined by a comma parses but miscounts: both go line by line below.
    try:
        rows = orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        rows = None
    if rows is not None and len(rows) == n_lines:
        lines = np.arange(1, n_lines + 1, dtype=np.int64)
    else:
        parts = body.split(b"\n") if body else []
        # A blank line or a bad line makes the joined parse fail: find out which, line by line.
        keep = []
        for i, s in enumerate(parts):
            if not s or s.isspace():
                diag.warn("blank-line", "blank line skipped", path=path, line=i + 1)
            else:
                keep.append(i)
        try:
            rows = orjson.loads(b"[" + b",".join(parts[i] for i in keep) + b"]")
        except orjson.JSONDecodeError:
            rows = None
        if rows is None or len(rows) != len(keep):
            rows = []
            for j, i in enumerate(keep):
                try:
                    rows.append(orjson.loads(parts[i]))
                except orjson.JSONDecodeError as exc:
                    last = j == len(keep) - 1 and not ends_with_newline
                    hint = " (torn last line: the file ends in the middle of a row)" if last else ""
                    raise BadInput(f"invalid JSON{hint}: {exc}", path=path, line=i + 1) from None
        lines = np.asarray(keep, dtype=np.int64) + 1
    if set(map(type, rows)) - {dict}:
        for j, r in enumerate(rows):
            if type(r) is not dict:
                raise BadInput(
                    f"expected a JSON object per line, got {type(r).__name__}",
                    path=path,
                    line=int(lines[j]),
                )
    _check_repeated_keys(body, rows, lines, path, diag)
    return rows, lines


def _check_repeated_keys(body: bytes, rows: list[dict], lines: np.ndarray, path: Path, diag: Diagnostics) -> None:
    """A column the reader takes (:data:`KNOWN`) written twice in one row: the judge readers' check
    (:func:`~replicate.readkit_records.check_repeated_fields`), an error when the values differ, else a
    ``repeated-key`` warning. Only a column whose key text occurs in the file more often than rows hold
    it can be written twice in a row; only those are looked for line by line. A required column's text
    occurring at most once per row needs no count of the rows holding it: a row without it is refused
    by :func:`_build` anyway."""
    n_rows = len(rows)
    wanted = []
    for name in KNOWN:
        total = body.count(field_pattern(name))
        if total <= 1 or (name in REQUIRED and total <= n_rows):
            continue
        if total > sum(name in r for r in rows):
            wanted.append(name)
    if not wanted:
        return
    parts = body.split(b"\n")
    for line in lines.tolist():
        check_repeated_fields(parts[line - 1], wanted, path, line, diag)


def _rows_csv(data: bytes, path: Path, diag: Diagnostics) -> tuple[list[dict], np.ndarray]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=path) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise BadInput("empty CSV file: no header row", path=path, line=1) from None
    except csv.Error as exc:
        raise BadInput(f"bad CSV: {exc}", path=path, line=reader.line_num) from None
    header = [h.strip() for h in header]
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise BadInput(f"CSV header repeats column(s): {', '.join(dup)}", path=path, line=1)
    width = len(header)
    rows: list[dict] = []
    lines: list[int] = []
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise BadInput(f"bad CSV: {exc}", path=path, line=reader.line_num) from None
        if not rec or (len(rec) == 1 and not rec[0].strip()):  # csv yields [] for a blank line
            diag.warn("blank-line", "blank line skipped", path=path, line=reader.line_num)
            continue
        if len(rec) != width:
            raise BadInput(
                f"bad CSV: expected {width} fields (as in the header), got {len(rec)}",
                path=path,
                line=reader.line_num,
            )
        rows.append(
            {h: _csv_value(h, v) for h, v in zip(header, rec) if v != "" or h in KNOWN}
        )
        lines.append(reader.line_num)
    return rows, np.asarray(lines, dtype=np.int64)


_CSV_BOOL = {"true": True, "false": False, "1": True, "0": False, "": None, "null": None}


def _csv_value(column: str, value: str) -> Any:
    if column == "trial":
        try:
            return int(value)
        except ValueError:
            return value  # reported by the validator with its line
    if column == "correct_loose":
        return _CSV_BOOL.get(value.strip().lower(), value)
    return value


# --------------------------------------------------------------------------------------
# Columnar validation
#
# Each column is taken out of the rows with one C-level ``map`` and validated by
# its set of distinct values and of value types; a bad value is then located to
# its first row. Types are checked by ``type(v)``, never by equality, so ``true``
# is not taken for ``1`` (Python's ``True == 1``).


def _column(rows: list[dict], name: str) -> list[Any]:
    try:
        return list(map(itemgetter(name), rows))
    except KeyError:
        return [r.get(name, _MISSING) for r in rows]


def _first_row(col: list[Any], pred) -> int:
    for r, v in enumerate(col):
        if pred(v):
            return r
    raise AssertionError("no offending row found")  # pragma: no cover


def _describe(v: Any) -> str:
    if v is _MISSING:
        return "missing"
    if v is None or (type(v) is str and not v.strip()):
        return "empty"
    return f"not a string: {v!r}"


def _intern(
    col: list[Any], name: str, path: Path, lines: np.ndarray, *, allow_int: bool = False
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer codes for a required string column, in sorted order of the values' text.

    Sorted codes make everything downstream (cell order, random draws per item)
    independent of the order of the rows in the file.
    """
    ok_types = {str, int} if allow_int else {str}
    if set(map(type, col)) - ok_types:
        r = _first_row(col, lambda v: type(v) not in ok_types)
        v = col[r]
        if v is _MISSING or v is None:
            raise BadInput(f"column {name!r} is {_describe(v)}", path=path, line=int(lines[r]))
        raise BadInput(
            f"column {name!r} must be a string, got {type(v).__name__}: {short_repr(v)}",
            path=path,
            line=int(lines[r]),
        )
    distinct = dict.fromkeys(col)
    for v in distinct:
        if type(v) is str and not v.strip():
            r = _first_row(col, lambda x, v=v: x == v)
            raise BadInput(f"column {name!r} is empty", path=path, line=int(lines[r]))
    # Item ids compare as strings: 7 and "7" are the same item.
    names = sorted({str(v) for v in distinct})
    index = {s: i for i, s in enumerate(names)}
    code = {v: index[str(v)] for v in distinct}
    idx = np.fromiter(map(code.__getitem__, col), dtype=np.int32, count=len(col))
    return idx, tuple(names)


def short_repr(v: Any, limit: int = 60) -> str:
    """``repr(v)``, cut to ``limit`` characters for error messages."""
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _build(rows: list[dict], lines: np.ndarray, path: Path, prov: FileProvenance) -> TrialsTable:
    if not rows:
        raise BadInput("the trials table has no rows", path=path)
    present: set[str] = set().union(*rows)
    missing = [c for c in REQUIRED if c not in present]
    if missing:
        raise BadInput(
            f"missing required column(s): {', '.join(missing)} "
            f"(required: {', '.join(REQUIRED)})",
            path=path,
            line=int(lines[0]),
        )
    cols = {c: _column(rows, c) if c in present else [_MISSING] * len(rows) for c in KNOWN}
    model, models = _intern(cols["model"], "model", path, lines)
    bench, benchmarks = _intern(cols["benchmark"], "benchmark", path, lines)
    item, items = _intern(cols["item"], "item", path, lines, allow_int=True)
    category = _categories(cols["category"], path, lines)
    trial = _trials(cols["trial"], path, lines)
    loose = _loose(cols["correct_loose"], path, lines)
    scorers = sorted(str(v) for v in dict.fromkeys(cols["scorer"], None) if type(v) is str)
    _check_duplicates(model, bench, item, trial, lines, models, benchmarks, items, path)
    meta = tuple(sorted(c for c in present if c not in KNOWN))
    return TrialsTable(
        path=str(path),
        models=models,
        benchmarks=benchmarks,
        items=items,
        model=readonly(model),
        benchmark=readonly(bench),
        item=readonly(item),
        trial=readonly(trial),
        category=readonly(category),
        loose=readonly(loose),
        line=readonly(lines),
        scorers=tuple(scorers),
        metadata_columns=meta,
        provenance=prov,
        _rows=rows,
    )


_CATEGORY_CODE = {c: i for i, c in enumerate(CATEGORIES)}


def _categories(col: list[Any], path: Path, lines: np.ndarray) -> np.ndarray:
    if set(map(type, col)) - {str} or not _CATEGORY_CODE.keys() >= dict.fromkeys(col).keys():
        r = _first_row(col, lambda v: type(v) is not str or v not in _CATEGORY_CODE)
        v = col[r]
        shown = "missing" if v is _MISSING else short_repr(v)
        raise BadInput(
            f"unknown category {shown}; allowed: {', '.join(CATEGORIES)}",
            path=path,
            line=int(lines[r]),
        )
    return np.fromiter(map(_CATEGORY_CODE.__getitem__, col), dtype=np.int8, count=len(col))


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
        shown = "missing" if v is _MISSING else f"not an integer: {short_repr(v)}"
        raise BadInput(f"column 'trial' is {shown}", path=path, line=int(lines[r]))
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        r = int(neg[0])
        raise BadInput(f"column 'trial' must be >= 0, got {arr[r]}", path=path, line=int(lines[r]))
    return arr


_LOOSE_CODE = {True: 1, False: 0, None: -1, _MISSING: -1}
_LOOSE_TYPES = {bool, type(None), type(_MISSING)}


def _loose(col: list[Any], path: Path, lines: np.ndarray) -> np.ndarray:
    if set(map(type, col)) - _LOOSE_TYPES:
        r = _first_row(col, lambda v: type(v) not in _LOOSE_TYPES)
        raise BadInput(
            f"column 'correct_loose' must be true, false or null, got {short_repr(col[r])}",
            path=path,
            line=int(lines[r]),
        )
    return np.fromiter(map(_LOOSE_CODE.__getitem__, col), dtype=np.int8, count=len(col))


def _check_duplicates(
    model: np.ndarray,
    bench: np.ndarray,
    item: np.ndarray,
    trial: np.ndarray,
    lines: np.ndarray,
    models: tuple[str, ...],
    benchmarks: tuple[str, ...],
    items: tuple[str, ...],
    path: Path,
) -> None:
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
