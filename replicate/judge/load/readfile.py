"""Reading a released file once: bytes (gzip by magic), lines, JSON per line, hashing (I/O).

Also the accumulator that collects one run's items over its files.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load.outputs import OutputParts, StreamedOutputs
from replicate.judge.model import KEY_SEP
from replicate.provenance import FileProvenance, find_release
from replicate.readkit import BOM, READ_BLOCK, InputStream, bad_json_line, line_chunks, refuse_utf16, without_bom
from replicate.readkit_records import BLANK, json_line, json_objects

__all__ = ["BLANK", "BOM", "RawFile", "read_file", "strip_bom", "split_lines", "parse_line", "json_objects", "Items"]



class RawFile:
    """One released file: streamed once (:meth:`chunks`), its size and sha256 taken on the way.

    ``RawFile(path)`` reads the file; ``RawFile(path, raw, data)`` wraps bytes
    already in memory (``data``: decompressed). :attr:`data` reads the whole
    content, for readers that need it whole (a zip, one JSON document); line
    readers stream and hold only the chunk they are on.
    """

    def __init__(self, path: Path, raw: bytes | None = None, data: bytes | None = None) -> None:
        self.path = Path(path)
        self._raw = raw
        self._data = data if data is not None else None
        self._stream = InputStream(self.path, data=raw) if data is None else None
        self._provenance: FileProvenance | None = None

    @property
    def data(self) -> bytes:
        """The whole decompressed content (read on first use and kept)."""
        if self._data is None:
            assert self._stream is not None
            self._data = self._stream.read()
            self._note_hash()
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
        self._note_hash()

    def head(self, n: int) -> bytes:
        """The first ``n`` decompressed bytes."""
        if self._data is not None:
            return self._data[:n]
        assert self._stream is not None
        return self._stream.head(n)

    def stream_text(self, diag: Diagnostics) -> Iterator[bytes]:
        """The decompressed blocks, a leading BOM removed (warned), UTF-16 refused, an empty file warned."""
        def bom() -> None:
            diag.warn("bom", "file starts with a UTF-8 byte-order mark (ignored)", path=self.path, line=1)
        empty = True
        for block in without_bom(self.blocks(), self.path, bom):
            empty = empty and not block
            yield block
        if empty:
            diag.warn("empty-file", "file is empty: no records", path=self.path)

    def chunks(self, diag: Diagnostics | None = None) -> Iterator[bytes]:
        """Chunks of whole lines (:func:`~replicate.readkit.line_chunks`), a leading BOM removed (warned
        when ``diag`` is given), UTF-16 refused, an empty file warned."""
        def bom() -> None:
            if diag is not None:
                diag.warn("bom", "file starts with a UTF-8 byte-order mark (ignored)", path=self.path, line=1)
        empty = True
        for chunk in line_chunks(without_bom(self.blocks(), self.path, bom), path=self.path):
            empty = False
            yield chunk
        if empty and diag is not None:
            diag.warn("empty-file", "file is empty: no records", path=self.path)

    @property
    def kept(self) -> bytes | None:
        """The file's bytes when they are held in memory (standard input, a pipe, bytes given): a second
        reading takes them from here, as a pipe cannot be read twice."""
        if self._raw is not None:
            return self._raw
        if self._stream is not None and self._stream.held is not None:
            return self._stream.held
        return self._data

    def _note_hash(self) -> None:
        s = self._stream
        if s is not None and s.sha256 is not None and s.size is not None:
            self._provenance = FileProvenance(str(self.path), s.size, s.sha256, find_release(self.path))

    def provenance(self) -> FileProvenance:
        if self._provenance is None:
            if self._stream is not None:
                for _ in self._stream.raw_blocks():  # not read whole yet: hash it now
                    pass
                self._note_hash()
            else:
                raw = self._raw if self._raw is not None else self._data or b""
                self._provenance = FileProvenance(str(self.path), len(raw), hashlib.sha256(raw).hexdigest(),
                                                  find_release(self.path))
        assert self._provenance is not None
        return self._provenance


def replay(warnings: Diagnostics, diag: Diagnostics) -> None:
    """Warn in ``diag`` what a first (bulk) pass warned in ``warnings``: a pass that is kept warns once."""
    for w in warnings.warnings:
        diag.warn(w.code, w.message, path=w.path, line=w.line)


def read_file(path: Path) -> RawFile:
    """The file at ``path``, to be streamed (nothing is read yet but a check that it can be)."""
    return RawFile(path)


def strip_bom(f: RawFile, diag: Diagnostics) -> bytes:
    """The file's whole text bytes without a leading BOM (warned); an empty file is warned too.

    For readers that need the whole content; line readers use :meth:`RawFile.chunks`.
    """
    data = f.data
    refuse_utf16(data, f.path)
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
    return bad_json_line(f.path, lineno, line, exc, torn=last_torn)


def parse_line(f: RawFile, lineno: int, line: bytes, n_lines: int, torn: bool, diag: Diagnostics) -> Any:
    """One line as a JSON value, or ``BLANK`` for a blank line (warned)."""
    return json_line(f.path, lineno, line, torn and lineno == n_lines, diag)


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
    out: OutputParts  # where each item's raw output is: kept, or on a line to read again
    hashes: list[int]  # hash() of each item's output: duplicates are compared by it
    labels: list[int]
    splits: list[str]
    lines: dict[int, tuple[int, int]]  # item -> (file index, line), line-by-line items
    blocks: list[tuple[int, int, int]]  # (first item, end item, file index), bulk items
    keyset: set[str]  # the keys of bulk-read files (built by the bulk path anyway)
    gold_parts: list  # int16 arrays (bulk blocks) and lists of ints (line-by-line runs), in item order
    _index: dict[str, int] | None = None

    @classmethod
    def empty(cls) -> "Items":
        return cls([], OutputParts(), [], [], [], {}, [], set(), [])

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
        outputs: Sequence[str | None] | None,
        split: str,
        file_idx: int,
        labels: Sequence[int] | None = None,
        *,
        reread: tuple[str, list[int]] | None = None,
    ) -> None:
        """Add a block of items read in bulk from one file (lines 1..n); ``labels`` for decided labels.

        ``reread``: (output field, hashes of the outputs): where ``outputs`` is None (not kept: over
        :data:`~replicate.judge.load.outputs.KEEP_OUTPUTS_BELOW`), they are read again from the file when used."""
        start, n = len(self.keys), len(keys)
        self.keys.extend(keys)
        if labels is not None:
            self.labels.extend(labels)
        self.gold_parts.append(gold)
        if outputs is None:
            assert reread is not None
            self.out.reread_all(file_idx, n, reread[0])
            self.hashes.extend(reread[1])
        else:
            self.out.extend(file_idx, outputs)
            self.hashes.extend(reread[1] if reread is not None else map(hash, outputs))
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
        reread: str | None = None,
    ) -> bool:
        """Add one item read line by line; False when it repeats an earlier identical item (warned).

        ``reread``: the output field to read the output from again when it is used (it is not kept).

        A repeated key with other content (gold, output or label) is a BadInput
        naming both places.
        """
        prev = self.index.get(key)
        if prev is not None:
            pf, pl = self.where(prev)
            first = f"{files[pf].path}:{pl}"
            shown = key.replace(KEY_SEP, " / ")
            same = self.gold_at(prev) == gold and self.hashes[prev] == hash(output)
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
        if reread is not None:
            self.out.reread_line(file_idx, lineno, reread)
        else:
            self.out.append(file_idx, output)
        self.hashes.append(hash(output))
        if label is not None:
            self.labels.append(label)
        self.splits.append(split)
        self.lines[n] = (file_idx, lineno)
        return True

    def outputs_from(self, files: Sequence[RawFile]) -> Sequence[str | None]:
        """The raw outputs in item order (``files``: the run's files): kept ones as a tuple; else read
        again from the files, streaming, each time they are iterated (:class:`StreamedOutputs`)."""
        parts = self.out.parts
        if all(p.values is not None for p in parts):
            return tuple(chain.from_iterable(p.values or () for p in parts))
        return StreamedOutputs(self.out, [(f.path, f.provenance().sha256, f.kept) for f in files])

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
