"""Reading and validating a trials table (JSONL, JSONL.gz or CSV): the I/O side of the engine.

One row per trial (see ``docs/items.md`` and the trials-table contract):
``model``, ``item``, ``trial`` (int >= 0), ``benchmark``, ``category`` (one of
:data:`CATEGORIES`), optional ``correct_loose`` (true/false/null) and ``scorer``;
any other column is passed through as item metadata.

The reader streams: the file is read in blocks (gzip undone on the way, its
size and sha256 taken as it passes), a chunk of whole lines is parsed with one
orjson call, and :class:`~replicate.trials.columns.ColumnBuilder` turns the
chunk's rows into integer codes appended to column buffers. The table holds a
few bytes per trial, never a Python object per row (a metadata column: one
code per row into its distinct values). Every error is a
:class:`~replicate.errors.BadInput` that names the file and the line.

Item identity is (benchmark, item): the same item id may appear in two
benchmarks without clashing. A duplicate (model, benchmark, item, trial) is bad
input and the error names both lines.
"""

from __future__ import annotations

import csv
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from replicate.command_input import is_stdio, read_input
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.provenance import FileProvenance, find_release
from replicate.reading.jsonl import check_repeated_fields, field_pattern
from replicate.reading.stream import InputStream, count_newlines, json_chunk, line_chunks
from replicate.trials.columns import CATEGORIES, KNOWN, REQUIRED, ColumnBuilder, TrialsTable, readonly, short_repr

__all__ = ["CATEGORIES", "CORRECT", "API_ERROR", "REQUIRED", "KNOWN", "TrialsTable", "read_trials", "readonly",
           "short_repr"]

CORRECT = CATEGORIES.index("correct")
API_ERROR = CATEGORIES.index("api_error")

#: Bytes of whole lines parsed per orjson call (and rows validated per chunk): about this, at most 4 times it
#: (a chunk of 256 KiB of short rows holds ~3,000 rows, ~3 MB while parsed: the whole transient cost of reading).
CHUNK_BYTES = 1 << 16
#: CSV records validated per chunk.
CSV_CHUNK_ROWS = 8192


# --------------------------------------------------------------------------------------
# Entry point


def read_trials(
    path: str | os.PathLike[str], *, diagnostics: Diagnostics | None = None
) -> TrialsTable:
    """Read and validate a trials table. ``.csv`` is CSV; anything else is JSONL (``.gz`` ok);
    ``-`` reads standard input (CSV unless its first record starts with ``{``)."""
    diag = diagnostics if diagnostics is not None else Diagnostics()
    p = Path(path)
    held = None if _regular(p) else read_input(p, what="trials table")  # standard input, a pipe: read whole
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if held is not None:
        csv_like = _starts_like_csv(InputStream(p, data=held)) if is_stdio(p) else name.endswith(".csv")
        stream = InputStream(p, data=held)
    else:
        csv_like = name.endswith(".csv")
        stream = InputStream(p)
    builder = ColumnBuilder(p)
    chunks = _chunks_csv(stream, p, diag) if csv_like else _chunks_jsonl(stream, p, diag)
    for rows, lines, present in chunks:
        builder.add(rows, lines, present)
    assert stream.size is not None and stream.sha256 is not None  # read to its end
    return builder.finish(FileProvenance(str(p), stream.size, stream.sha256, find_release(p)))


def _regular(p: Path) -> bool:
    """Whether ``p`` is a regular file (streamed); anything else is read whole by ``read_input``, which names
    what is wrong (missing, a directory, a device) or reads a pipe with a bound on a line's length."""
    if is_stdio(p):
        return False
    try:
        return stat.S_ISREG(os.stat(p).st_mode)
    except OSError:
        return False


def _starts_like_csv(stream: InputStream) -> bool:
    """Standard input is CSV unless its first non-blank byte is ``{``."""
    for block in stream.blocks():
        head = block.lstrip()
        if head:
            return head[:1] != b"{"
    return False  # empty: read as JSONL, which says it has no rows


# --------------------------------------------------------------------------------------
# Row sources: chunks of (rows, their lines)


#: A chunk of rows, their lines, and the columns some row of it has (None: not known yet).
Chunk = tuple[list[dict], np.ndarray, "set[str] | None"]


def _chunks_jsonl(stream: InputStream, path: Path, diag: Diagnostics) -> Iterator[Chunk]:
    before = 0  # lines in earlier chunks
    for chunk in line_chunks(stream.blocks(), path=path, size=CHUNK_BYTES):
        ends_with_newline = chunk.endswith(b"\n")
        body = chunk[:-1] if ends_with_newline else chunk
        n_lines = count_newlines(body) + 1
        # The common case (no blank line, no bad line): one orjson call over the chunk's lines.
        rows = json_chunk(chunk)
        if rows is not None:
            lines = np.arange(before + 1, before + n_lines + 1, dtype=np.int64)
        else:
            rows, lines = _rows_one_by_one(body, before, ends_with_newline, path, diag)
        before += n_lines
        if set(map(type, rows)) - {dict}:
            for j, r in enumerate(rows):
                if type(r) is not dict:
                    raise BadInput(
                        f"expected a JSON object per line, got {type(r).__name__}",
                        path=path,
                        line=int(lines[j]),
                    )
        present: set[str] = set().union(*rows)
        _check_repeated_keys(body, rows, lines, before - n_lines, present, path, diag)
        yield rows, lines, present


def _rows_one_by_one(
    body: bytes, before: int, ends_with_newline: bool, path: Path, diag: Diagnostics
) -> tuple[list[Any], np.ndarray]:
    """A chunk whose joined parse failed: a blank line (warned, skipped) or a bad line (its error)."""
    parts = body.split(b"\n")
    keep = []
    for i, s in enumerate(parts):
        if not s or s.isspace():
            diag.warn("blank-line", "blank line skipped", path=path, line=before + i + 1)
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
                if before + i == 0 and parts[i].strip() in (b"[", b"{"):  # a JSON document, not one row a line
                    hint = (" (a trials table holds one JSON object a line, or CSV; this file opens a JSON document "
                            "spread over lines, such as a benchmark log: 'replicate import' turns a log into a "
                            "trials table)")
                raise BadInput(f"invalid JSON{hint}: {exc}", path=path, line=before + i + 1) from None
    return rows, np.asarray(keep, dtype=np.int64) + before + 1


def _check_repeated_keys(
    body: bytes, rows: list[dict], lines: np.ndarray, before: int, present: set[str], path: Path, diag: Diagnostics
) -> None:
    """A column the reader takes (:data:`KNOWN`) written twice in one row: the judge readers' check
    (:func:`~replicate.reading.jsonl.check_repeated_fields`), an error when the values differ, else a
    ``repeated-key`` warning. Only a column whose key text occurs in the chunk more often than rows hold
    it can be written twice in a row; only those are looked for line by line. A column no row has
    (``present``: the columns some row has) is written in no row. A required column's text occurring
    at most once per row needs no count of the rows holding it: a row without it is refused by the
    column builder anyway."""
    n_rows = len(rows)
    wanted = []
    for name in KNOWN & present:
        total = body.count(field_pattern(name))
        if total <= 1 or (name in REQUIRED and total <= n_rows):
            continue
        if total > sum(name in r for r in rows):
            wanted.append(name)
    if not wanted:
        return
    parts = body.split(b"\n")
    for line in lines.tolist():
        check_repeated_fields(parts[line - before - 1], wanted, path, line, diag)


def _chunks_csv(stream: InputStream, path: Path, diag: Diagnostics) -> Iterator[Chunk]:
    reader = csv.reader(_csv_lines(stream, path), strict=True)
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
        if len(rows) >= CSV_CHUNK_ROWS:
            yield rows, np.asarray(lines, dtype=np.int64), None
            rows, lines = [], []
    if rows:
        yield rows, np.asarray(lines, dtype=np.int64), None


def _csv_lines(stream: InputStream, path: Path) -> Iterator[str]:
    """The file's text line by line as ``newline=""`` reads it (for the csv module), decoded chunk by chunk
    (a chunk holds whole lines, so no character is cut); a leading byte-order mark dropped."""
    offset = 0  # bytes before the chunk
    for n, chunk in enumerate(line_chunks(stream.blocks(), path=path, size=CHUNK_BYTES)):
        skip = 3 if n == 0 and chunk.startswith(b"\xef\xbb\xbf") else 0
        try:
            text = chunk[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(f"not UTF-8 text ({exc.reason} at byte {offset + skip + exc.start})", path=path) from None
        offset += len(chunk)
        yield from io.StringIO(text, newline="")


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
