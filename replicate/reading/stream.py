"""The reader toolkit: what every reader (built-in or third party) uses to read a file's bytes.

Beside the reader contract (:mod:`replicate.reading.contract`), public and documented
in ``docs/writing-a-reader.md``; nothing here imports ``replicate.judge``.
Memory grows with a file's items, never with its bytes: files are read as a
stream of blocks, gzip is undone while streaming (bounded like a zip member),
and lines come one by one or in bounded chunks of whole lines.

Streaming
    :class:`InputStream` (one file's decompressed blocks, its size and sha256
    taken on the way), :func:`line_chunks` (blocks -> chunks of whole lines,
    a line's length bounded), :func:`lines_of` (chunks -> ``(line number,
    line, torn)``), :func:`count_newlines`.

Text
    :data:`BOM`, :func:`refuse_utf16`, :func:`without_bom`, :func:`first_line`, :func:`first_json`.

JSON
    :func:`json_chunk` (a chunk of lines parsed in one call), :func:`bad_json_line`
    (the error for a line that is not JSON), :func:`describe` (a JSON value in an
    error message), :func:`key_text` (a key field's value as the text it is compared by),
    :func:`keys_of`, :func:`chunk_keys`.

The record checks and field spec of flat JSONL records are in
:mod:`replicate.reading.jsonl`.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zlib
from collections.abc import Generator, Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable

import numpy as np
import orjson

from replicate.command_input import is_stdio, max_line_bytes, read_input
from replicate.errors import BadInput

__all__ = [
    "BOM", "GZIP_MAGIC", "READ_BLOCK", "CHUNK", "KEY_SEP", "MAX_MEMBER", "MAX_RATIO", "RATIO_FROM",
    "InputStream", "line_chunks", "lines_of", "count_newlines", "refuse_utf16", "without_bom", "first_line",
    "first_json", "json_chunk", "bad_json_line", "describe", "key_text", "keys_of", "chunk_keys", "inflation_problem",
]

BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
#: Bytes read from a file at a time.
READ_BLOCK = 1 << 20
#: Bytes of whole lines per chunk (:func:`line_chunks`): small enough to stay in the CPU cache when parsed.
CHUNK = 1 << 18
#: Joins the parts of a multi-field item key (the parts are compared as strings).
KEY_SEP = "\x1f"

#: A compressed input (a gzip file, a zip member) never inflates to more than 1 GiB per member ...
MAX_MEMBER = 1 << 30
#: ... or, once it is over :data:`RATIO_FROM` bytes, to more than this many times its compressed size
#: (JSON compresses 5-50 times; a zip or gzip bomb, thousands of times).
MAX_RATIO = 1000
RATIO_FROM = 1 << 20


def inflation_problem(inflated: int, compressed: int) -> str | None:
    """Why ``inflated`` bytes from ``compressed`` bytes is a bomb (None: it is not)."""
    if inflated > RATIO_FROM and inflated > MAX_RATIO * max(compressed, 1):
        return f"{inflated // max(compressed, 1):,} times its compressed size, more than {MAX_RATIO:,}"
    return None


class InputStream:
    """One input file read once as a stream of blocks: gzip (by its magic bytes) undone on the way.

    ``blocks()`` yields the decompressed bytes in blocks of about
    :data:`READ_BLOCK`; when it is exhausted, :attr:`size` and :attr:`sha256`
    are those of the file's raw bytes. A gzip stream that inflates more than
    :data:`MAX_RATIO` times is refused as a gzip bomb (a gzip file's total size is
    otherwise unbounded: it is never held whole). ``-`` (standard input) and pipes
    are read whole by :func:`~replicate.command_input.read_input` (a line's length bounded).
    A missing file, a directory or a device is a :class:`BadInput` naming the file.
    """

    def __init__(self, path: str | os.PathLike[str], *, data: bytes | None = None) -> None:
        self.path = Path(path)
        self._data = data  # bytes given (or read from a stream): streamed from memory
        self.size: int | None = None
        self.sha256: str | None = None

    @property
    def held(self) -> bytes | None:
        """The raw bytes when they are held in memory (given, or standard input or a pipe, read whole)."""
        return self._data

    def raw_blocks(self) -> Iterator[bytes]:
        """The file's raw (undecompressed) bytes in blocks, hashed on the way."""
        h = hashlib.sha256()
        size = 0
        for block in self._raw():
            h.update(block)
            size += len(block)
            yield block
        self.size, self.sha256 = size, h.hexdigest()

    def _raw(self) -> Iterator[bytes]:
        if self._data is None and not is_stdio(self.path):
            fh = _open_regular(self.path)
            if fh is not None:
                with fh:
                    while block := fh.read(READ_BLOCK):
                        yield block
                return
        if self._data is None:
            self._data = read_input(self.path)  # standard input or a pipe: read whole, a line's length bounded
        view = memoryview(self._data)
        for start in range(0, len(view), READ_BLOCK):
            yield bytes(view[start:start + READ_BLOCK])

    def blocks(self) -> Generator[bytes, None, None]:
        """The decompressed bytes in blocks (gzip undone when the file starts with :data:`GZIP_MAGIC`)."""
        raw = self.raw_blocks()
        first = next(raw, b"")
        if first[:2] != GZIP_MAGIC:
            if self.path.name.endswith(".gz") and first:
                raise BadInput("name ends in .gz but the file is not gzip-compressed", path=self.path)
            if first:
                yield first
            yield from raw
            return
        yield from _gunzip(self.path, first, raw)

    def read(self) -> bytes:
        """The whole decompressed content (for a reader that needs it whole: a zip, one JSON document)."""
        return b"".join(self.blocks())

    def head(self, n: int) -> bytes:
        """The first ``n`` decompressed bytes (or fewer), reading no more of the file than needed."""
        parts: list[bytes] = []
        got = 0
        gen = self.blocks()
        try:
            for block in gen:
                parts.append(block)
                got += len(block)
                if got >= n:
                    break
        finally:
            gen.close()
        self.size = self.sha256 = None  # not read whole
        return b"".join(parts)[:n]


def _open_regular(path: Path) -> Any:
    """An open binary file when ``path`` is a regular file; None for anything else (a pipe, a device, a missing
    file: :func:`~replicate.command_input.read_input` reads a pipe once, bounded, and names what is wrong otherwise)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # stat, not open: opening a FIFO to look at it would consume its writer
        fh = open(path, "rb")
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # replaced in between
        fh.close()
        return None
    return fh


def gunzip(data: bytes, path: str | os.PathLike[str]) -> bytes:
    """The gzip ``data`` of ``path`` inflated whole, with the bounds every compressed input gets (a bomb, a
    corrupt or truncated stream is :class:`BadInput` naming ``path``)."""
    return b"".join(_gunzip(Path(path), data, iter(())))


def _gunzip(path: Path, first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """Inflate gzip members one after another (as ``gzip.decompress`` does), bounded against bombs."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    compressed = inflated = 0
    for data in chain((first,), rest):
        compressed += len(data)
        while data:
            if d.eof:  # another member follows (zero padding after the last one is allowed)
                data = data.lstrip(b"\x00")
                if not data:
                    break
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                out = d.decompress(data, READ_BLOCK)
            except zlib.error as exc:
                raise BadInput(f"corrupt gzip: {exc}", path=path) from None
            if out:
                inflated += len(out)
                why = inflation_problem(inflated, compressed)
                if why is not None:
                    raise BadInput(f"gzip stream inflates to more than {inflated:,} bytes ({why}): "
                                   "refused as a gzip bomb", path=path)
                yield out
            data = d.unused_data if d.eof else d.unconsumed_tail
    if not d.eof:
        raise BadInput("truncated gzip: the compressed stream ends early (incomplete download?)", path=path)


def line_chunks(blocks: Iterable[bytes], *, path: Path, size: int = CHUNK, limit: int | None = None) -> Iterator[bytes]:
    """Chunks of about ``size`` bytes of whole lines, each ending with its newline (only the file's last chunk
    may lack one: the file is torn). A line longer than ``limit`` (default
    :func:`~replicate.command_input.max_line_bytes`) is a :class:`BadInput` naming its line."""
    limit = max_line_bytes() if limit is None else limit
    carry = b""
    lines_before = 0
    for block in blocks:
        buf = carry + block if carry else block
        start = 0
        n = len(buf)
        while n - start >= size:
            end = buf.rfind(b"\n", start, start + size * 4)
            if end < start:
                end = buf.find(b"\n", start + size * 4)
                if end < 0:
                    break
            piece = buf[start:end + 1]
            lines_before += count_newlines(piece)
            yield piece
            start = end + 1
        carry = buf[start:] if start else buf
        last_nl = carry.rfind(b"\n")
        if len(carry) - last_nl - 1 > limit:
            raise BadInput(f"a line longer than {limit:,} bytes (the bound on a line; REPLICATE_MAX_LINE_BYTES "
                           "sets it): not a text file of records?", path=path,
                           line=lines_before + count_newlines(carry) + 1)
    if carry:
        yield carry


def lines_of(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """``(1-based line number, line without its newline, torn)`` for every line; ``torn`` is True only for a
    last line the file does not end with a newline after. A ``\\r`` before the newline is kept."""
    lineno = 0
    for chunk in chunks:
        parts = chunk.split(b"\n")
        last = parts.pop()
        for line in parts:
            lineno += 1
            yield lineno, line, False
        if last:
            lineno += 1
            yield lineno, last, True


def count_newlines(piece: bytes) -> int:
    """How many newline bytes ``piece`` holds (numpy: ~10x faster than ``bytes.count``)."""
    return int(np.count_nonzero(np.frombuffer(piece, dtype=np.uint8) == 10))


def refuse_utf16(head: bytes, path: Path) -> None:
    """A file starting with a UTF-16 byte-order mark is a :class:`BadInput` (every reader reads UTF-8)."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise BadInput(
            "file is UTF-16 (it starts with a UTF-16 byte-order mark); JSON lines must be UTF-8: "
            "convert it first, e.g. iconv -f UTF-16 -t UTF-8",
            path=path,
        )


def without_bom(blocks: Iterable[bytes], path: Path, on_bom: Callable[[], None] | None = None) -> Iterator[bytes]:
    """``blocks`` with a leading UTF-8 :data:`BOM` removed (``on_bom`` is told); UTF-16 refused."""
    it = iter(blocks)
    first = b""
    for block in it:
        first += block
        if len(first) >= 3:
            break
    refuse_utf16(first, path)
    if first.startswith(BOM):
        if on_bom is not None:
            on_bom()
        first = first[len(BOM):]
    if first:
        yield first
    yield from it


def first_line(head: bytes) -> bytes | None:
    """The first non-blank line of ``head`` (stripped), or None when there is none."""
    for line in head.split(b"\n"):
        stripped = line.strip()
        if stripped:
            return stripped
    return None


def first_json(head: bytes, opener: bytes) -> tuple[bool, object]:
    """For a ``sniff``: (the first non-blank line of ``head`` opens with ``opener``, its parsed value or None)."""
    line = first_line(head)
    if line is None or not line.startswith(opener):
        return False, None
    try:
        return True, orjson.loads(line)
    except orjson.JSONDecodeError:
        return True, None


def json_chunk(chunk: bytes) -> list | None:
    """The JSON values of a chunk of whole lines parsed by one orjson call; None when a line is not one
    JSON value (blank, not JSON, several values): then read the chunk line by line to name the problem."""
    body = chunk[:-1] if chunk.endswith(b"\n") else chunk
    try:
        values = orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        return None
    return values if len(values) == count_newlines(body) + 1 else None


def bad_json_line(path: Path, lineno: int, line: bytes, exc: Exception, *, torn: bool) -> BadInput:
    """The error for a line that is not JSON: bad UTF-8, a torn last line, or the JSON error and the line's start."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as ue:
        return BadInput(f"not valid UTF-8 (byte {ue.start + 1} of the line)", path=path, line=lineno)
    if torn:
        return BadInput("torn last line: the file ends in the middle of a record (truncated file?)",
                        path=path, line=lineno)
    shown = line[:60].decode("utf-8", "replace")
    more = "..." if len(line) > 60 else ""
    return BadInput(f"not JSON ({exc}): {shown}{more}", path=path, line=lineno)


def describe(value: Any) -> str:
    """A JSON value as an error message names it: ``a JSON array``, ``null``, ``a JSON str ("abc")``."""
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, dict):
        return "a JSON object"
    if value is None:
        return "null"
    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits, which a document read by the json module keeps whole
        if not isinstance(value, int):
            raise
        text = str(value) if value.bit_length() <= 128 else f"{value.bit_length()}-bit integer"
    return f"a JSON {type(value).__name__} ({text[:40]})"


def key_text(value: Any) -> str | None:
    """A key field's value as the string it is compared by (None if not a str/int): 19335 and "19335" agree."""
    t = type(value)
    if t is str:
        return value
    if t is int:
        return str(value)
    return None


def keys_of(values: list) -> list[str] | None:
    """Key field values as strings (ints converted); None if any is neither str nor int."""
    types = set(map(type, values))
    if types <= {str}:
        return values
    if types <= {str, int}:
        return [v if type(v) is str else str(v) for v in values]
    return None


def chunk_keys(objs: list, key_fields: Sequence[str]) -> list[str] | None:
    """The item keys (parts joined by :data:`KEY_SEP`) of a chunk of records; None if a key value is neither
    str nor int. Raises KeyError/TypeError for a missing key field or a record that is not an object."""
    key_of = itemgetter(*key_fields)
    if len(key_fields) == 1:
        return keys_of(list(map(key_of, objs)))
    join = KEY_SEP.join
    try:
        return list(map(join, map(key_of, objs)))
    except TypeError:  # a key that is not a str (numeric ids): convert, or decline
        parts = [keys_of(list(map(itemgetter(k), objs))) for k in key_fields]
        return None if any(p is None for p in parts) else list(map(join, zip(*parts)))
