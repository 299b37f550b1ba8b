"""The stream stage of reading a released file: its bytes read once (I/O).

:class:`RawFile` owns a file's bytes from opening to hashing. Opening it (:func:`read_file`, :func:`open_stream`)
makes its stream (gzip undone by magic, :class:`~replicate.reading.stream.InputStream`) and, when its reader
is to be chosen by its content, reads the head a reader's sniff sees (:attr:`RawFile.sniffed`: a UTF-8 BOM
removed, UTF-16 refused, a Parquet file's footer). It streams the bytes once, gives the record stage its text
(:meth:`RawFile.text` whole, :meth:`RawFile.text_blocks` and :meth:`RawFile.chunks` streamed: a BOM removed and
warned, UTF-16 refused, an empty file warned, all in :meth:`RawFile._text`) and, once read, its provenance (size,
sha256, the release it was fetched in). Nothing after it reads the file's bytes.
"""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path
from typing import Any, Iterable, Iterator

from replicate.command_input import is_stdio
from replicate.diagnostics import Diagnostics
from replicate.provenance import FileProvenance, find_release
from replicate.reading.contract import HEAD_BYTES, ReadOptions, Source
from replicate.reading.jsonl import BLANK, json_line, json_objects
from replicate.reading.parquet import is_parquet, parquet_head
from replicate.reading.stream import BOM, READ_BLOCK, InputStream, line_chunks, without_bom

__all__ = ["BLANK", "BOM", "RawFile", "read_file", "strip_bom", "parse_line", "json_objects"]


class RawFile:
    """One released file: streamed once (:meth:`chunks`), its size and sha256 taken on the way.

    ``RawFile(path)`` reads the file; ``RawFile(path, raw, data)`` wraps bytes
    already in memory (``data``: decompressed). :attr:`data` reads the whole
    content, for readers that need it whole (a zip, one JSON document); line
    readers stream and hold only the chunk they are on. :attr:`sniffed` is what a reader's sniff sees, read
    at opening with ``sniff`` (for its reader to be chosen by it: :func:`open_stream`), else None.
    """

    def __init__(self, path: Path, raw: bytes | None = None, data: bytes | None = None, *, sniff: bool = False) -> None:
        self.path = Path(path)
        self._raw = raw
        self._data = data if data is not None else None
        self._stream: InputStream | None = None
        self.sniffed: bytes | None = None
        if data is None:
            self._stream, self.sniffed = open_stream(self.path, raw, sniff=sniff)

    @property
    def data(self) -> bytes:
        """The whole decompressed content (read on first use and kept)."""
        if self._data is None:
            assert self._stream is not None
            self._data = self._stream.read()
        return self._data

    def blocks(self) -> Iterator[bytes]:
        """The decompressed content in blocks; the file's sha256 is taken on the way."""
        if self._data is not None:
            view = memoryview(self._data)
            for start in range(0, len(view), READ_BLOCK):
                yield bytes(view[start:start + READ_BLOCK])
            return
        assert self._stream is not None
        yield from self._stream.blocks()

    def source(self, options: ReadOptions, diag: Diagnostics, *, streams: bool) -> Source:
        """The file as a reader sees it (:class:`~replicate.reading.contract.Source`): its text streamed
        (:meth:`text_blocks`, read through ``Source.chunks``: a reader that ``streams``) or whole (:meth:`text`)."""
        if streams:
            return Source(self.path, b"", options, diag, stream=lambda: self.text_blocks(diag))
        return Source(self.path, self.text(diag), options, diag)

    def text(self, diag: Diagnostics) -> bytes:
        """The whole text (:attr:`data`), for a reader that needs it whole, as :meth:`_text` gives it."""
        return b"".join(self._text([self.data], diag))

    def text_blocks(self, diag: Diagnostics) -> Iterator[bytes]:
        """The text in blocks (:meth:`blocks` as :meth:`_text` gives them), for a reader that streams."""
        return self._text(self.blocks(), diag)

    def chunks(self, diag: Diagnostics | None = None) -> Iterator[bytes]:
        """Chunks of whole lines (:func:`~replicate.reading.stream.line_chunks`) of the text (:meth:`_text`; warned
        only when ``diag`` is given)."""
        return line_chunks(self._text(self.blocks(), diag), path=self.path)

    def _text(self, blocks: Iterable[bytes], diag: Diagnostics | None) -> Iterator[bytes]:
        """``blocks`` as text: a leading UTF-8 BOM removed (warned), UTF-16 refused
        (:func:`~replicate.reading.stream.without_bom`), an empty file warned; the one place a file's text begins."""
        def bom() -> None:
            if diag is not None:
                diag.warn("bom", "file starts with a UTF-8 byte-order mark (ignored)", path=self.path, line=1)
        empty = True
        for block in without_bom(blocks, self.path, bom):
            empty = empty and not block
            yield block
        if empty and diag is not None:
            diag.warn("empty-file", "file is empty: no records", path=self.path)

    @property
    def stored_size(self) -> int | None:
        """The file's bytes as stored (compressed, for a gzip file): held ones, or a regular file's size on
        disk; None when not known (standard input, a pipe)."""
        held = self.kept
        if held is not None:
            return len(held)
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    @property
    def kept(self) -> bytes | None:
        """The file's bytes when they are held in memory (standard input, a pipe, bytes given): a second
        reading takes them from here, as a pipe cannot be read twice."""
        if self._raw is not None:
            return self._raw
        if self._stream is not None and self._stream.held is not None:
            return self._stream.held
        return self._data

    def provenance(self) -> FileProvenance:
        """The file's path, size and sha256 (of its bytes as stored) and the release it was fetched in: those of
        its last whole reading, the file read through now if it has not been read whole."""
        s = self._stream
        if s is None:
            raw = self._raw if self._raw is not None else self._data or b""
            size, sha256 = len(raw), hashlib.sha256(raw).hexdigest()
        else:
            if s.sha256 is None or s.size is None:
                for _ in s.raw_blocks():  # not read whole yet: hash it now
                    pass
            assert s.sha256 is not None and s.size is not None
            size, sha256 = s.size, s.sha256
        return FileProvenance(str(self.path), size, sha256, find_release(self.path))


def read_file(path: Path, *, sniff: bool = False) -> RawFile:
    """The file at ``path`` opened, to be streamed; with ``sniff``, the head its reader is chosen by read at
    opening (:attr:`RawFile.sniffed`)."""
    return RawFile(path, sniff=sniff)


def open_stream(path: Path, raw: bytes | None = None, *, sniff: bool = False) -> tuple[InputStream, bytes | None]:
    """The stream of the file at ``path`` (of ``raw``, its bytes, when given) and, with ``sniff``, what a reader's
    ``sniff`` sees of it, read now: the first :data:`~replicate.reading.contract.HEAD_BYTES` bytes, a UTF-8 BOM
    removed; for a Parquet file on disk its footer, where the schema is
    (:func:`~replicate.reading.parquet.parquet_head`). A UTF-16 file is refused here (every reader reads UTF-8)."""
    stream = InputStream(path, data=raw)
    if not sniff:
        return stream, None
    head = stream.head(HEAD_BYTES + len(BOM))
    text = b"".join(without_bom([head], path))  # UTF-16 refused, a BOM removed
    if not is_stdio(path) and is_parquet(head):
        return stream, parquet_head(path) or head[:HEAD_BYTES]
    return stream, text[:HEAD_BYTES]


def strip_bom(f: RawFile, diag: Diagnostics) -> bytes:
    """The file's whole text bytes (:meth:`RawFile.text`)."""
    return f.text(diag)


def parse_line(f: RawFile, lineno: int, line: bytes, n_lines: int, torn: bool, diag: Diagnostics) -> Any:
    """One line as a JSON value, or ``BLANK`` for a blank line (warned)."""
    return json_line(f.path, lineno, line, torn and lineno == n_lines, diag)
