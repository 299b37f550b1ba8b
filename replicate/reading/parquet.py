"""The reader toolkit for Parquet files: content detection by schema, rows streamed by row group.

A Parquet file starts and ends with ``PAR1``; its schema sits in the footer,
at the end. So that readers can decide by content, the loader gives a Parquet
file's ``sniff`` not its first 64 KiB but :func:`parquet_head`: ``PAR1``, the
footer and its length, ``PAR1`` (a few KiB; see :func:`parquet_columns`).

:func:`parquet_rows` reads the columns a reader names one batch of rows at a
time (at most ``batch`` rows, never more than a row group), so memory grows
with a row group and the rows kept, not with the file. Reading needs pyarrow
(``pip install 'replicate-audit[parquet]'``); without it a Parquet file is an
error saying so.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replicate.command_input import is_stdio
from replicate.errors import BadInput

if TYPE_CHECKING:  # pragma: no cover
    from replicate.reading.contract import Source

PARQUET_MAGIC = b"PAR1"
#: A footer larger than this is not read for sniffing (a file with many thousands of row groups).
MAX_FOOTER = 64 << 20
#: Rows converted to Python objects at a time.
BATCH_ROWS = 2048
NEEDS_PYARROW = "reading a Parquet file needs pyarrow: pip install 'replicate-audit[parquet]' (or pyarrow)"


def is_parquet(head: bytes) -> bool:
    return head[:4] == PARQUET_MAGIC


def have_pyarrow() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def parquet_head(path: Path) -> bytes | None:
    """``PAR1`` + the footer of the Parquet file at ``path`` (what a sniff sees), or None when it has no
    readable footer (too short, not ending in ``PAR1``, a footer over :data:`MAX_FOOTER`)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            if size < 12:
                return None
            fh.seek(size - 8)
            tail = fh.read(8)
            if tail[4:] != PARQUET_MAGIC:
                return None
            (length,) = struct.unpack("<I", tail[:4])
            if length > MAX_FOOTER or length + 12 > size:
                return None
            fh.seek(size - 8 - length)
            return PARQUET_MAGIC + fh.read(length) + tail
    except OSError:
        return None


def parquet_columns(head: bytes) -> dict[str, Any] | None:
    """For a ``sniff``: the top-level columns of a Parquet head (name -> pyarrow type), or None when
    ``head`` is not one or pyarrow is not installed."""
    if not is_parquet(head) or head[-4:] != PARQUET_MAGIC:
        return None
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pq.ParquetFile(pa.BufferReader(head)).schema_arrow
    except Exception:  # not pyarrow, or not a readable footer: not this reader's file
        return None
    return {f.name: f.type for f in schema}


def parquet_file(src: Source) -> Any:
    """``pyarrow.parquet.ParquetFile`` of ``src`` (a file on disk; standard input is read whole)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise src.bad(NEEDS_PYARROW) from None
    try:
        if is_stdio(src.path):
            blocks = src.stream() if src.stream is not None else [src.data]
            return pq.ParquetFile(pa.BufferReader(b"".join(blocks)))
        return pq.ParquetFile(src.path)
    except (OSError, pa.ArrowException) as exc:
        raise src.bad(f"not a readable Parquet file: {exc}") from None


def parquet_rows(src: Source, columns: Sequence[str], *, batch: int = BATCH_ROWS,
                 file: Any = None) -> Iterator[tuple[int, dict]]:
    """``(row number, {column: value})`` for every row, 1-based, reading only ``columns`` (a nested field
    as ``"doc.id"`` gives ``{"doc": {"id": ...}}``), one batch of at most ``batch`` rows at a time.
    ``file``: the :func:`parquet_file` of ``src`` when the reader opened it already (to see its schema).

    Sets :attr:`Source.lines_total` to the file's row count (its "lines" in the provenance).
    """
    import pyarrow as pa

    pf = file if file is not None else parquet_file(src)
    src.lines_total = pf.metadata.num_rows
    row = 0
    try:
        for chunk in pf.iter_batches(batch_size=batch, columns=list(columns)):
            for values in chunk.to_pylist():
                row += 1
                yield row, values
    except pa.ArrowException as exc:
        raise BadInput(f"cannot read row {row + 1} of the Parquet file: {exc}", path=src.path) from None
