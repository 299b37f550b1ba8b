"""Reading a released file once: bytes (gzip by magic), lines, JSON per line, hashing (I/O).

Also the accumulator that collects one run's items over its files.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import orjson

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.inputfile import read_input
from replicate.judge.load.fields import describe
from replicate.judge.model import KEY_SEP
from replicate.provenance import FileProvenance, find_release

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


@dataclass
class RawFile:
    path: Path
    raw: bytes
    data: bytes
    digest: Future | None = None  # sha256 of ``raw``, computed beside the parsing

    def provenance(self) -> FileProvenance:
        digest = self.digest.result() if self.digest is not None else hashlib.sha256(self.raw).hexdigest()
        return FileProvenance(str(self.path), len(self.raw), digest, find_release(self.path))


_HASHER: ThreadPoolExecutor | None = None
#: Files at least this large are hashed on a worker thread while they are parsed
#: (hashlib releases the GIL), so provenance costs no extra wall time.
_HASH_IN_THREAD = 1 << 20


def _forget_hasher() -> None:
    """In a forked child: the parent's hashing thread does not exist there, so its executor would never run a job."""
    global _HASHER
    _HASHER = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_hasher)


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _start_hash(raw: bytes) -> Future | None:
    global _HASHER
    if len(raw) < _HASH_IN_THREAD:
        return None
    if _HASHER is None:
        _HASHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replicate-sha256")
    return _HASHER.submit(_sha256_hex, raw)


def read_file(path: Path) -> RawFile:
    raw = read_input(path)
    data = raw
    if raw[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(raw)
        except EOFError:
            raise BadInput(
                "truncated gzip: the compressed stream ends early (incomplete download?)", path=path
            ) from None
        except (gzip.BadGzipFile, zlib.error, OSError) as exc:
            raise BadInput(f"corrupt gzip: {exc}", path=path) from None
    elif path.name.endswith(".gz"):
        raise BadInput("name ends in .gz but the file is not gzip-compressed", path=path)
    return RawFile(path, raw, data, _start_hash(raw))


def strip_bom(f: RawFile, diag: Diagnostics) -> bytes:
    """The file's text bytes without a leading BOM (warned); an empty file is warned too."""
    data = f.data
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise BadInput(
            "file is UTF-16 (it starts with a UTF-16 byte-order mark); JSON lines must be UTF-8: "
            "convert it first, e.g. iconv -f UTF-16 -t UTF-8",
            path=f.path,
        )
    if data.startswith(BOM):
        diag.warn("bom", "file starts with a UTF-8 byte-order mark (ignored)", path=f.path, line=1)
        data = data[len(BOM) :]
    if not data:
        diag.warn("empty-file", "file is empty: no records", path=f.path)
    return data


def split_lines(f: RawFile, data: bytes, diag: Diagnostics) -> tuple[list[bytes], bool]:
    """The lines of ``data`` (without the newline) and whether the last one is unterminated."""
    if not data:
        return [], False
    lines = data.split(b"\n")
    torn = True
    if lines[-1] == b"":
        lines.pop()
        torn = False
    return lines, torn


def bad_json(f: RawFile, lineno: int, line: bytes, exc: Exception, *, last_torn: bool) -> BadInput:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as ue:
        return BadInput(f"not valid UTF-8 (byte {ue.start + 1} of the line)", path=f.path, line=lineno)
    if last_torn:
        return BadInput(
            "torn last line: the file ends in the middle of a record (truncated file?)",
            path=f.path,
            line=lineno,
        )
    shown = line[:60].decode("utf-8", "replace")
    more = "..." if len(line) > 60 else ""
    return BadInput(f"not JSON ({exc}): {shown}{more}", path=f.path, line=lineno)


def parse_line(f: RawFile, lineno: int, line: bytes, n_lines: int, torn: bool, diag: Diagnostics) -> Any:
    """One line as a JSON value, or ``BLANK`` for a blank line (warned)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if not line.strip():
            diag.warn("blank-line", "blank line (skipped)", path=f.path, line=lineno)
            return BLANK
        raise bad_json(f, lineno, line, exc, last_torn=torn and lineno == n_lines) from None


BLANK = object()


def json_objects(src: Any, what: str = "") -> Iterator[tuple[int, dict]]:
    """(1-based line, object) for every line of a reader's :class:`~replicate.reading.Source`.

    The loop every JSONL reader shares: a torn last line or a line that is
    not JSON is an error naming file and line, a blank line is skipped
    (counted in ``src.skipped`` and warned), and a value that is not an object
    is an error (``what`` says what a line holds, e.g. " (one logged sample)").
    """
    f = RawFile(src.path, src.data, src.data)
    lines, torn = split_lines(f, src.data, src.diagnostics)
    for lineno, line in enumerate(lines, 1):
        obj = parse_line(f, lineno, line, len(lines), torn, src.diagnostics)
        if obj is BLANK:
            src.skipped += 1
            continue
        if not isinstance(obj, dict):
            raise src.bad(f"expected a JSON object{what}, got {describe(obj)}", lineno)
        yield lineno, obj


@dataclass
class Items:
    """Items accumulated over the files of one run.

    Where each item came from is kept cheaply: items read by the bulk path
    form a block of one file with line = position in the block + 1; items
    read line by line record their line in ``lines``. Gold grades are kept
    in pieces (an int16 array per bulk block, a list for line-by-line items)
    and joined once by :meth:`gold_array`.
    """

    keys: list[str]
    outputs: list[str | None]
    labels: list[int]
    splits: list[str]
    lines: dict[int, tuple[int, int]]  # item -> (file index, line), line-by-line items
    blocks: list[tuple[int, int, int]]  # (first item, end item, file index), bulk items
    keyset: set[str]  # the keys of bulk-read files (built by the bulk path anyway)
    gold_parts: list  # int16 arrays (bulk blocks) and lists of ints (line-by-line runs), in item order
    _index: dict[str, int] | None = None

    @classmethod
    def empty(cls) -> "Items":
        return cls([], [], [], [], {}, [], set(), [])

    @property
    def index(self) -> dict[str, int]:
        """Key -> item position, built on first use (only the line-by-line path needs it)."""
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys)}
        return self._index

    def add_bulk(
        self,
        keys: list[str],
        keyset: set[str],
        gold: np.ndarray,
        outputs: Sequence[str | None],
        split: str,
        file_idx: int,
        labels: Sequence[int] | None = None,
    ) -> None:
        """Add a block of items read in bulk from one file (lines 1..n); ``labels`` for decided labels."""
        start, n = len(self.keys), len(keys)
        self.keys.extend(keys)
        if labels is not None:
            self.labels.extend(labels)
        self.gold_parts.append(gold)
        self.outputs.extend(outputs)
        self.splits.extend([split] * n)
        self.blocks.append((start, start + n, file_idx))
        self.keyset |= keyset
        if self._index is not None:
            self._index.update(zip(keys, range(start, start + n)))

    def add(
        self,
        key: str,
        gold: int,
        output: str | None,
        label: int | None,
        *,
        split: str,
        files: list[RawFile],
        file_idx: int,
        lineno: int,
        diag: Diagnostics,
    ) -> bool:
        """Add one item read line by line; False when it repeats an earlier identical item (warned).

        A repeated key with other content (gold, output or label) is a BadInput
        naming both places.
        """
        prev = self.index.get(key)
        if prev is not None:
            pf, pl = self.where(prev)
            first = f"{files[pf].path}:{pl}"
            shown = key.replace(KEY_SEP, " / ")
            same = self.gold_at(prev) == gold and self.outputs[prev] == output
            if same and label is not None:
                same = self.labels[prev] == label
            if same:
                diag.warn(
                    "duplicate-identical",
                    f"duplicate item {shown} (same content as {first}; first kept)",
                    path=files[file_idx].path,
                    line=lineno,
                )
                return False
            raise BadInput(
                f"duplicate item {shown} with different content (first at {first})",
                path=files[file_idx].path,
                line=lineno,
            )
        n = len(self.keys)
        self.index[key] = n
        self.keys.append(key)
        if not self.gold_parts or not isinstance(self.gold_parts[-1], list):
            self.gold_parts.append([])
        self.gold_parts[-1].append(gold)
        self.outputs.append(output)
        if label is not None:
            self.labels.append(label)
        self.splits.append(split)
        self.lines[n] = (file_idx, lineno)
        return True

    def gold_at(self, item: int) -> int:
        start = 0
        for part in self.gold_parts:
            if item < start + len(part):
                return int(part[item - start])
            start += len(part)
        raise IndexError(item)

    def gold_array(self) -> np.ndarray:
        """All gold grades in item order, int16."""
        parts = [p if isinstance(p, np.ndarray) else np.array(p, dtype=np.int16) for p in self.gold_parts]
        return np.concatenate(parts).astype(np.int16, copy=False) if parts else np.empty(0, np.int16)

    def origins(self) -> tuple[np.ndarray, np.ndarray]:
        """(file index int16, line int32) of every item, in item order."""
        n = len(self.keys)
        file_index = np.empty(n, dtype=np.int16)
        line = np.empty(n, dtype=np.int32)
        for start, end, idx in self.blocks:
            file_index[start:end] = idx
            line[start:end] = np.arange(1, end - start + 1, dtype=np.int32)
        if self.lines:
            items = np.fromiter(self.lines.keys(), dtype=np.int64, count=len(self.lines))
            where = np.array(list(self.lines.values()), dtype=np.int64).reshape(-1, 2)
            file_index[items] = where[:, 0]
            line[items] = where[:, 1]
        return file_index, line

    def seen_before(self, keyset: set[str]) -> bool:
        if not self.keys:
            return False
        if self._index is not None:
            return not self._index.keys().isdisjoint(keyset)
        return not self.keyset.isdisjoint(keyset)

    def where(self, item: int) -> tuple[int, int]:
        if item in self.lines:
            return self.lines[item]
        for start, end, file_idx in self.blocks:
            if start <= item < end:
                return file_idx, item - start + 1
        raise KeyError(item)  # pragma: no cover - every item is in one of the two
