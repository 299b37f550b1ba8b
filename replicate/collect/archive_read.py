"""Reading an archive (see :mod:`replicate.collect.archive`) as a stream of blocks.

Memory grows with the archive's trials as keys, never with its bytes or its responses' text:
:class:`ArchiveStream` reads the file in blocks, parses a chunk of lines by one orjson call
(:mod:`replicate.reading.stream`) and hands every trial record to its caller one at a time, keeping only
the set of (model, item, trial) keys (to find a duplicate), the API-error trials (which a later
record may supersede) and the header, resume and batch records. :func:`scan_archive` keeps no record
at all (what resuming a collection needs); :func:`read_archive` keeps every record (tests, small files).

The checks, in the order of the lines: a line that is not JSON, a trial (or resume or batch) record
before the header, a second header, an unknown schema or record type, a trial record without model,
item and trial, and a second record of a (model, item, trial) whose earlier record is not an API error
are :class:`~replicate.errors.BadInput` naming the file and the line. A last line the file does not end
with a newline after (torn by a crash) is reported in ``torn_bytes``, not raised. A gzip-compressed
archive is read by the commands that only read it (``gzip=True``); an archive that is appended to is
refused when compressed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Mapping

import orjson

from replicate.command_input import is_stdio, read_input
from replicate.errors import BadInput
from replicate.reading.stream import GZIP_MAGIC, READ_BLOCK, _gunzip, json_chunk, line_chunks

ARCHIVE_SCHEMA = "replicate.archive/1"
#: batch mode's bookkeeping: an uploaded input file, a created batch, a batch whose results were imported (or an
#: upload dropped by --cancel-batches); see replicate.collect.batchbook
BATCH_RECORDS = ("batch_upload", "batch", "batch_done")

#: Bytes of whole lines parsed by one orjson call: 16-64 KiB of records stay in the CPU cache while they are
#: gone through (256 KiB-1 MiB chunks took twice as long as a plain loop's one call a line).
PARSE_CHUNK = 1 << 14

#: why collect and repair-archive refuse a gzip-compressed archive
GZIP_REFUSAL = ("the archive is gzip-compressed; 'replicate collect' and 'replicate repair-archive' append to or "
                "rewrite an archive: decompress it first (gunzip)")

#: (model, item, trial) of a trial record; model and item as strings (how duplicates are found)
Key = tuple[str, str, int]


class ArchiveStream:
    """One pass over an archive: :meth:`trials` yields ``(line number, record)`` for every trial record in
    the file's order, after checking it (see the module docstring).

    Every record is yielded, including an API-error record that a later record of the same trial
    supersedes (``collect --retry-errors``); once :meth:`trials` is exhausted, :attr:`superseded_lines`
    lists the lines of those (a caller that keeps something per record drops them), and :attr:`header`,
    :attr:`resumes`, :attr:`batches`, :attr:`torn_bytes`, :attr:`valid_size`, :attr:`done`,
    :attr:`errors` and the first and last ``ts`` of the trials that stand are complete.
    """

    def __init__(self, path: str | Path, *, gzip: bool = False) -> None:
        self.path = Path(path)
        self.gzip = gzip
        self.header: dict[str, Any] | None = None
        self.resumes: list[dict[str, Any]] = []
        self.batches: list[dict[str, Any]] = []
        self.torn_bytes = 0  # size of a torn last line (0 if none)
        self.valid_size = 0  # bytes up to and including the last complete line
        self.superseded_lines: list[int] = []  # API-error records replaced by a later record of the same trial
        #: every trial recorded, one string per model and per item shared between keys; model and item as
        #: strings (a hand-edited record's item 5 is item "5", the same trial, as duplicates were always found)
        self.done: set[Key] = set()
        #: trials whose latest record is an API error -> (its line, its error_kind, its ts)
        self.error_records: dict[Key, tuple[int, Any, Any]] = {}
        self._first_ts: str | None = None  # of the non-error trial records (which are never superseded)
        self._last_ts: str | None = None
        self._names: dict[str, str] = {}
        #: the whole archive when it came from standard input or a pipe (read whole, as every reader does): a
        #: duplicate's earlier line is found again in these bytes, since a pipe cannot be opened a second time
        self._held: bytes | None = None

    # -- after the pass ------------------------------------------------------------------------

    @property
    def errors(self) -> dict[Key, str]:
        """The trials whose (latest) record is an API error -> their error kind."""
        return {k: str(kind) for k, (_, kind, _) in self.error_records.items()}

    def ts_range(self) -> tuple[str | None, str | None]:
        """The first and the last ``ts`` (as strings) of the trial records that stand."""
        stamps = [s for s in (self._first_ts, self._last_ts) if s is not None]
        stamps += [str(ts) for _, _, ts in self.error_records.values() if ts]
        return (min(stamps), max(stamps)) if stamps else (None, None)

    # -- the pass --------------------------------------------------------------------------------

    def trials(self) -> Iterator[tuple[int, dict[str, Any]]]:
        path = self.path
        done, errs, names = self.done, self.error_records, self._names
        add = done.add
        first_ts = last_ts = None
        try:
            for lineno, obj in self._numbered():
                kind = obj.get("type") if type(obj) is dict else None
                if kind == "trial":
                    if self.header is None:
                        raise BadInput("a trial record before the header", path=path, line=lineno)
                    trial = obj.get("trial")
                    if "model" not in obj or "item" not in obj or type(trial) is not int or trial < 0:
                        raise BadInput("a trial record needs model, item and trial (an integer >= 0)", path=path,
                                       line=lineno)
                    m, i = obj["model"], obj["item"]
                    if type(m) is not str:
                        m = str(m)
                    if type(i) is not str:
                        i = str(i)
                    key = (names.setdefault(m, m), names.setdefault(i, i), trial)
                    n = len(done)
                    add(key)
                    if len(done) == n:  # recorded before
                        earlier = errs.pop(key, None)
                        if earlier is None:
                            raise BadInput(f"duplicate trial {key} (also on line {self._line_of(key, lineno)})",
                                           path=path, line=lineno)
                        self.superseded_lines.append(earlier[0])  # a retried API error: the later record stands
                    kind_of_error = obj.get("error_kind")
                    ts = obj.get("ts")
                    if kind_of_error:
                        errs[key] = (lineno, kind_of_error, ts)
                    elif ts:
                        s = ts if type(ts) is str else str(ts)
                        if first_ts is None or s < first_ts:
                            first_ts = s
                        if last_ts is None or s > last_ts:
                            last_ts = s
                    yield lineno, obj
                elif kind == "header":
                    if self.header is not None:
                        raise BadInput("a second header record", path=path, line=lineno)
                    if obj.get("schema") != ARCHIVE_SCHEMA:
                        raise BadInput(
                            f"unknown archive schema {obj.get('schema')!r}; this version reads {ARCHIVE_SCHEMA}",
                            path=path, line=lineno,
                        )
                    self.header = obj
                elif kind == "resume":
                    if self.header is None:
                        raise BadInput("a resume record before the header", path=path, line=lineno)
                    self.resumes.append(obj)
                elif kind in BATCH_RECORDS:
                    if self.header is None:
                        raise BadInput(f"a {kind} record before the header", path=path, line=lineno)
                    self.batches.append(obj)
                elif self.header is None:
                    raise BadInput("the first record is not an archive header: not an archive written by "
                                   "'replicate collect'", path=path, line=lineno)
                else:
                    raise BadInput(f"unknown record type {kind!r}; expected 'header', 'trial', 'resume' or a "
                                   "batch record", path=path, line=lineno)
        finally:
            self._first_ts, self._last_ts = first_ts, last_ts
            self._held = None  # the pass is over: the bytes of a pipe are not kept with what it found

    def _blocks(self) -> Iterator[bytes]:
        """The archive's bytes in blocks (gzip undone when allowed); what cannot be read is named as an archive."""
        path = self.path
        if self._held is not None or is_stdio(path) or not path.is_file():
            if self._held is None:  # standard input or a pipe: read whole, as every reader does
                self._held = read_input(path, what="archive")
            held = self._held
            step = READ_BLOCK
            raw: Iterator[bytes] = (held[i:i + step] for i in range(0, len(held), step))
        else:
            raw = archive_blocks(path)
        first = next(raw, b"")
        if first[:2] == GZIP_MAGIC:
            if not self.gzip:
                raise BadInput(GZIP_REFUSAL, path=path)
            return _gunzip(path, first, raw)
        return chain((first,), raw)

    def _numbered(self) -> Iterator[tuple[int, Any]]:
        """``(line number, parsed value)`` of every non-blank complete line; line numbers count every line
        ending (``\n``, ``\r\n`` or a lone ``\r``), as ``bytes.splitlines`` does. A chunk of lines is
        parsed by one orjson call (small chunks: their values stay in the CPU cache)."""
        lineno = 0
        size = 0
        for chunk in line_chunks(self._blocks(), path=self.path, size=PARSE_CHUNK):
            if not chunk.endswith(b"\n"):  # the file's last chunk, ending in a torn line
                cut = chunk.rfind(b"\n") + 1
                self.torn_bytes = len(chunk) - cut
                chunk = chunk[:cut]
            size += len(chunk)
            lone_cr = b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n")
            values = None if lone_cr else json_chunk(chunk)
            if values is not None:
                yield from zip(range(lineno + 1, lineno + 1 + len(values)), values)
                lineno += len(values)
                continue
            for line in chunk.split(b"\n")[:-1]:  # line by line: blank lines, a lone \r, or a line not JSON
                for part in line.splitlines() or [b""]:
                    lineno += 1
                    if not part.strip():
                        continue
                    try:
                        value = orjson.loads(part)
                    except orjson.JSONDecodeError as exc:
                        raise BadInput(f"archive record is not valid JSON: {exc}", path=self.path,
                                       line=lineno) from None
                    yield lineno, value
        self.valid_size = size

    def _line_of(self, key: Key, before: int) -> int:
        """The line of the last record of trial ``key`` before line ``before``, read again (an error's cost): a
        regular file from its path, standard input or a pipe from the bytes this stream holds (never reopened)."""
        found = 0
        again = ArchiveStream(self.path, gzip=self.gzip)
        again._held = self._held
        for lineno, obj in again._numbered():
            if lineno >= before:
                break
            if isinstance(obj, dict) and obj.get("type") == "trial" and (
                    str(obj.get("model")), str(obj.get("item")), obj.get("trial")) == key:
                found = lineno
        return found


def archive_blocks(path: Path) -> Iterator[bytes]:
    """The bytes of the archive file ``path`` in blocks of READ_BLOCK; a file that cannot be opened is named as an archive."""
    try:
        fh = open(path, "rb")
    except OSError:
        yield read_input(path, what="archive")  # names what is wrong (replaced or unreadable since)
        return
    with fh:
        while block := fh.read(READ_BLOCK):
            yield block


@dataclass(frozen=True, slots=True)
class ArchiveScan:
    """What an archive holds, without its trial records: what resuming a collection needs."""

    path: Path
    header: dict[str, Any] | None
    done: frozenset[Key]  # every (model, item, trial) recorded
    errors: Mapping[Key, str]  # trials whose latest record is an API error -> error kind
    torn_bytes: int = 0
    valid_size: int = 0
    resumes: tuple[dict[str, Any], ...] = ()
    superseded: int = 0
    batches: tuple[dict[str, Any], ...] = ()
    first_ts: str | None = None  # of the trials that stand
    last_ts: str | None = None

    @property
    def trials(self) -> int:
        return len(self.done)

    @classmethod
    def of(cls, stream: ArchiveStream) -> "ArchiveScan":
        """The scan of a stream whose :meth:`ArchiveStream.trials` is exhausted."""
        first, last = stream.ts_range()
        return cls(stream.path, stream.header, frozenset(stream.done), stream.errors, stream.torn_bytes,
                   stream.valid_size, tuple(stream.resumes), len(stream.superseded_lines), tuple(stream.batches),
                   first, last)


def scan_archive(path: str | Path, *, gzip: bool = False) -> ArchiveScan:
    """Read an archive keeping no trial record (the keys of the trials recorded, the API errors)."""
    stream = ArchiveStream(path, gzip=gzip)
    for _ in stream.trials():
        pass
    return ArchiveScan.of(stream)


@dataclass(frozen=True, slots=True)
class ArchiveContents:
    """What an archive file holds: its header, its trial records (with line numbers)."""

    path: Path
    header: dict[str, Any] | None
    records: tuple[tuple[int, dict[str, Any]], ...]
    torn_bytes: int = 0  # size of a torn last line (0 if none)
    valid_size: int = 0  # bytes up to and including the last complete line
    resumes: tuple[dict[str, Any], ...] = ()  # one "resume" record per resumed run, in order
    superseded: int = 0  # api_error records replaced by a later record of the same trial
    #: batch mode: "batch_upload", "batch" and "batch_done" records, in order
    batches: tuple[dict[str, Any], ...] = ()

    @property
    def done(self) -> set[tuple[str, str, int]]:
        return {(r["model"], r["item"], r["trial"]) for _, r in self.records}

    @property
    def errors(self) -> set[tuple[str, str, int]]:
        """The trials whose (latest) record is an API error."""
        return {(r["model"], r["item"], r["trial"]) for _, r in self.records if r.get("error_kind")}


def read_archive(path: str | Path, *, gzip: bool = False) -> ArchiveContents:
    """Read an archive keeping every trial record that stands, in the order of their lines (for small
    archives and tests: :class:`ArchiveStream` and :func:`scan_archive` keep none)."""
    stream = ArchiveStream(path, gzip=gzip)
    records = dict(stream.trials())
    for lineno in stream.superseded_lines:
        del records[lineno]
    return ArchiveContents(stream.path, stream.header, tuple(records.items()), stream.torn_bytes,
                           stream.valid_size, tuple(stream.resumes), len(stream.superseded_lines),
                           tuple(stream.batches))
