"""The accumulator of one run: its items over its files, in columns, and the run they make (in memory).

The record stage (:mod:`~replicate.judge.load.records`) and the bulk paths (:mod:`~replicate.judge.load.fast`,
:mod:`~replicate.judge.load.flat`) hand it a file's items: a clean file's block whole (:meth:`Items.add_block`,
:meth:`Items.add_bulk`), else item by item (:meth:`Items.add_each`, :meth:`Items.add`); :meth:`Items.finish`
builds the :class:`~replicate.judge.model.Run` once every file is read. A key seen twice is compared here (a
warning when everything agrees, else an error naming both places).
"""

from __future__ import annotations

from array import array
from itertools import chain
from typing import TYPE_CHECKING, Protocol, Sequence

import numpy as np

from replicate.diagnostics import Diagnostics, Warning_
from replicate.errors import BadInput
from replicate.judge.keytable import Blocks, GrowingBytes, KeysBuilder, Runs, as_array
from replicate.judge.load.outputs import OutputLabels, OutputParts, StreamedOutputs
from replicate.judge.model import KEY_SEP, Origins, Run, RunFile, readonly
from replicate.parsing import Parser

if TYPE_CHECKING:
    from pathlib import Path

    from replicate.judge.load.readfile import RawFile
    from replicate.reading.contract import Reader

__all__ = ["Items", "FileBlock", "BulkKeys", "distinct_hashes", "sorted_distinct"]


class FileBlock(Protocol):
    """The items of one file read record by record, in columns, as :meth:`Items.add_block` takes them
    (:class:`~replicate.judge.load.records.RecordBlock`)."""

    keys: KeysBuilder
    gold: array  # int16 codes
    labels: array | None  # int8 codes (decided labels), or None
    outputs: list[str | None] | None  # the outputs, or None (a reader of labels or verdicts)
    hashes: array | None  # hash() of each output, int64 (None: the run's last file)
    lines: array  # int32: each item's line

    @property
    def key_hashes(self) -> np.ndarray: ...


class Items:
    """Items accumulated over the files of one run, in columns (no Python object per item kept).

    Keys go into a :class:`~replicate.judge.keytable.KeysBuilder` (their bytes);
    gold grades, the hash of each output and of each key into small-integer
    arrays, one per block of items (a bulk-read file, or a run of line-by-line
    items) joined once at the end. Where each item came from is kept cheaply:
    items read by the bulk path form a block of one file with line = position
    in the block + 1; items read line by line record their line in ``lines``.
    ``parsers``: parsers whose labels the bulk paths read beside the items
    (:meth:`add_parsed`), so the outputs need not be read again.
    """

    def __init__(self, parsers: Sequence[Parser] = ()) -> None:
        self.keys = KeysBuilder()
        self.out = OutputParts()  # where each item's raw output is: kept, or on a line to read again
        self.label_parts: list = []  # decided labels: int8 arrays (blocks) and lists (one by one), in item order
        self.lines: dict[int, tuple[int, int]] = {}  # item -> (file index, line), line-by-line items
        #: (first item, end item, file index, lines or None for 1..n): items read a file at a time
        self.blocks: list[tuple[int, int, int, np.ndarray | None]] = []
        self.split_runs: list[tuple[int, str]] = []  # (first item, split) where the split changes
        self.gold_parts: list = []  # int16 arrays (bulk blocks) and lists of ints (line-by-line runs), in item order
        self.hash_parts: list = []  # hash() of each item's output (int64 arrays, lists), as gold_parts
        self.key_hashes: list = []  # hash() of each item's key: int64 arrays and lists (a key seen again?)
        self._seen: list[np.ndarray] = []  # the key hashes of earlier calls of seen_before: sorted levels
        self.labeller = OutputLabels(parsers)
        self.parsed: dict[str, list[np.ndarray]] = {p.name: [] for p in parsers}
        self.parsed_items = 0  # items whose labels are in ``parsed`` (all of them, or the labels are dropped)
        #: the file being read is the run's last: no later item is compared with its items' outputs
        self.last_file = False
        self._index: dict[str, int] | None = None

    @classmethod
    def empty(cls, parsers: Sequence[Parser] = ()) -> "Items":
        return cls(parsers)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def index(self) -> dict[str, int]:
        """Key -> item position, built on first use (only the line-by-line path needs it)."""
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys.tolist())}
        return self._index

    def _split(self, start: int, split: str) -> None:
        if not self.split_runs or self.split_runs[-1][1] != split:
            self.split_runs.append((start, split))

    def _part(self, parts: list, value: object) -> None:
        if not parts or not isinstance(parts[-1], list):
            parts.append([])
        parts[-1].append(value)

    def add_block(self, block: FileBlock, split: str, file_idx: int) -> None:
        """Add the items of one file read record by record (:class:`FileBlock`), no key repeated."""
        start, n = len(self.keys), len(block.keys)
        if self._index is not None:
            self._index.update(zip(block.keys.tolist(), range(start, start + n)))
        self.keys.absorb(block.keys)
        self.gold_parts.append(np.frombuffer(block.gold, dtype=np.int16))
        if block.labels is not None:
            self.label_parts.append(np.frombuffer(block.labels, dtype=np.int8))
        self.out.extend(file_idx, block.outputs if block.outputs is not None else [None] * n)
        self.hash_parts.append(np.frombuffer(block.hashes, dtype=np.int64) if block.hashes is not None
                               else _Unhashed(n))
        self.key_hashes.append(block.key_hashes)
        self._split(start, split)
        self.blocks.append((start, start + n, file_idx, np.frombuffer(block.lines, dtype=np.int32)))

    def add_bulk(
        self,
        keys: list[str] | KeysBuilder,
        key_hashes: np.ndarray,
        gold: np.ndarray,
        outputs: Sequence[str | None] | None,
        split: str,
        file_idx: int,
        labels: Sequence[int] | None = None,
        *,
        reread: tuple[str, np.ndarray | None] | None = None,
        parsed: dict[str, np.ndarray] | None = None,
    ) -> None:
        """Add a block of items read in bulk from one file (lines 1..n); ``labels`` for decided labels.

        ``key_hashes``: hash() of each key (int64, in any order). ``parsed``: parser name -> the labels it gave these
        items' outputs (:attr:`labeller`, every parser's or none). ``reread``: (output field, hashes of the outputs): where
        ``outputs`` is None (not kept: over :data:`~replicate.judge.load.outputs.KEEP_OUTPUTS_BELOW`), they
        are read again from the file when used."""
        start, n = len(self.keys), len(keys)
        if self._index is not None:
            self._index.update(zip(keys.tolist() if isinstance(keys, KeysBuilder) else keys, range(start, start + n)))
        if isinstance(keys, KeysBuilder):
            self.keys.absorb(keys)
        else:
            self.keys.extend(keys)
        if labels is not None:
            self.label_parts.append(np.asarray(labels, dtype=np.int8))
        self.gold_parts.append(gold)
        if outputs is None:
            assert reread is not None
            self.out.reread_all(file_idx, n, reread[0])
            self.hash_parts.append(reread[1] if reread[1] is not None else _Unhashed(n))
        else:
            self.out.extend(file_idx, outputs)
            self.hash_parts.append(reread[1] if reread is not None and reread[1] is not None else _hashes(outputs))
        self.key_hashes.append(key_hashes)
        self._split(start, split)
        self.blocks.append((start, start + n, file_idx, None))
        if parsed is not None and set(parsed) == set(self.parsed):
            for name, values in parsed.items():
                self.parsed[name].append(values)
            self.parsed_items += n

    def add_each(
        self, block: FileBlock, warnings: Sequence[Warning_], before: Sequence[int], diag: Diagnostics, *,
        split: str, files: list[RawFile], file_idx: int,
    ) -> int:
        """Add the items of one file's block one by one (:meth:`add`: a repeated key is warned, or refused,
        where it comes), the ``warnings`` met reading them given in ``diag`` among them where they were met
        (``before``: how many items had been read before each); how many items repeated an earlier identical
        one (skipped, warned)."""
        outputs, labels, gold, lines = block.outputs, block.labels, block.gold, block.lines
        w = repeated = 0
        for i, key in enumerate(block.keys.tolist()):
            start = w
            while w < len(warnings) and before[w] <= i:
                w += 1
            if w > start:
                diag.warn_all(warnings[start:w])
            output = None if outputs is None else outputs[i]
            label = None if labels is None else labels[i]
            if not self.add(key, gold[i], output, label, split=split, files=files, file_idx=file_idx, lineno=lines[i],
                            diag=diag):
                repeated += 1
        diag.warn_all(warnings[w:])
        return repeated

    def parsed_labels(self) -> dict[str, np.ndarray]:
        """Parser name -> the int8 labels of every item, when the bulk paths read all of them (else empty)."""
        if not self.parsed or self.parsed_items != len(self.keys):
            return {}
        return {name: np.concatenate(parts) if parts else np.empty(0, np.int8) for name, parts in self.parsed.items()}

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
            same = self.gold_at(prev) == gold and self.hash_at(prev) == hash(output)
            if same and label is not None:
                same = self._at(self.label_parts, prev) == label
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
        self._part(self.gold_parts, gold)
        if reread is not None:
            self.out.reread_line(file_idx, lineno, reread)
        else:
            self.out.append(file_idx, output)
        self._part(self.hash_parts, hash(output))
        self._part(self.key_hashes, hash(key))
        if label is not None:
            self._part(self.label_parts, label)
        self._split(n, split)
        self.lines[n] = (file_idx, lineno)
        return True

    def finish(self, name: str, paths: Sequence[Path], run_files: list[RunFile], readers: list[Reader],
               files: list[RawFile]) -> Run:
        """The run ``name`` these items make, read from ``files`` (``paths``: as given) by ``readers``
        (``run_files``: what each file gave). A run whose files' records differ in kind, or of no records, is
        :class:`BadInput`."""
        used = [(rf, r) for rf, r in zip(run_files, readers) if rf.records]
        yields = {r.yields for _, r in used}
        if len(yields) > 1 or len({r.decided for _, r in used if r.yields == "labels"}) > 1:
            if {r.name for _, r in used} == {"exam@1", "judge-jsonl@1"}:
                listing = ", ".join(f"{rf.provenance.path} ({rf.format})" for rf in run_files)
                raise BadInput(f"run {name!r} mixes EXAM-graded and raw-output files: {listing}")
            listing = ", ".join(f"{rf.provenance.path} ({r.name}: {r.yields})" for rf, r in zip(run_files, readers))
            raise BadInput(f"run {name!r} mixes files whose records differ in kind (raw outputs, decided labels, verdicts): {listing}")
        if not len(self):
            raise BadInput(f"run {name!r} has no records", path=", ".join(str(p) for p in paths))
        kind = used[0][1] if used else readers[0]
        labels = None
        if kind.yields != "outputs":
            labels = readonly(self.label_array())
        file_index, line = self.origin_columns()
        return Run(
            name=name,
            keys=as_array(self.keys.build()),
            gold=readonly(self.gold_array()),
            outputs=self.outputs_from(files),
            files=tuple(run_files),
            labels=labels,
            splits=as_array(self.split_column()),
            origins=Origins(as_array(file_index), as_array(line)),
            yields=kind.yields,
            decided=kind.decided,
            label_set=kind.label_set,
        )

    def outputs_from(self, files: Sequence[RawFile]) -> Sequence[str | None]:
        """The raw outputs in item order (``files``: the run's files): kept ones as a tuple; else read
        again from the files, streaming, each time they are iterated (:class:`StreamedOutputs`)."""
        parts = self.out.parts
        if all(p.values is not None for p in parts):
            return tuple(chain.from_iterable(p.values or () for p in parts))
        return StreamedOutputs(self.out, [(f.path, f.provenance().sha256, f.kept) for f in files])

    @staticmethod
    def _at(parts: list, item: int) -> int:
        start = 0
        for part in parts:
            if item < start + len(part):
                return int(part[item - start])
            start += len(part)
        raise IndexError(item)

    def gold_at(self, item: int) -> int:
        return self._at(self.gold_parts, item)

    def hash_at(self, item: int) -> int:
        return self._at(self.hash_parts, item)

    def label_array(self) -> np.ndarray:
        """All decided labels in item order, int8."""
        parts = [p if isinstance(p, np.ndarray) else np.array(p, dtype=np.int8) for p in self.label_parts]
        return np.concatenate(parts).astype(np.int8, copy=False) if parts else np.empty(0, np.int8)

    def gold_array(self) -> np.ndarray:
        """All gold grades in item order, int16."""
        parts = [p if isinstance(p, np.ndarray) else np.array(p, dtype=np.int16) for p in self.gold_parts]
        return np.concatenate(parts).astype(np.int16, copy=False) if parts else np.empty(0, np.int16)

    def split_column(self) -> Runs:
        """The split of every item, as runs (made into an object array when read)."""
        return Runs(list(self.split_runs), len(self.keys))

    def origin_columns(self) -> tuple[Blocks, Blocks]:
        """(file index, line) of every item, as blocks (made into int16 and int32 arrays when read)."""
        n = len(self.keys)
        return Blocks(self.blocks, self.lines, n, "file"), Blocks(self.blocks, self.lines, n, "line")

    def seen_before(self, key_hashes: np.ndarray) -> bool:
        """Whether a key of a new block may repeat one already read: a hash of one of ``key_hashes`` is among
        theirs (a collision of unequal keys only sends the block to the careful path, which compares keys)."""
        if self.key_hashes:  # the hashes added since the last call become one more sorted level
            level = np.sort(np.concatenate([np.asarray(p, dtype=np.int64) for p in self.key_hashes]))
            self.key_hashes = []
            while self._seen and self._seen[-1].size <= level.size:  # levels halve in size: n log n in all
                level = np.sort(np.concatenate([self._seen.pop(), level]), kind="stable")
            self._seen.append(level)
        for level in self._seen:
            at = np.minimum(np.searchsorted(level, key_hashes), level.size - 1)
            if level.size and bool((level[at] == key_hashes).any()):
                return True
        return False

    def where(self, item: int) -> tuple[int, int]:
        if item in self.lines:
            return self.lines[item]
        for start, end, file_idx, lines in self.blocks:
            if start <= item < end:
                return file_idx, item - start + 1 if lines is None else int(lines[item - start])
        raise KeyError(item)  # pragma: no cover - every item is in one of the two


class _Unhashed:
    """The outputs' hashes of a block of the run's last file: never asked for (no later item to compare)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        raise AssertionError("an output of the run's last file compared with a later item")


def _hashes(values: Sequence[str | None]) -> np.ndarray:
    """hash() of each value, int64."""
    return np.fromiter(map(hash, values), dtype=np.int64, count=len(values))


def distinct_hashes(values: list[str]) -> np.ndarray | None:
    """hash() of each of ``values`` (int64, sorted), or None when two are equal (a key repeats: or, rarely, two keys'
    hashes collide; either way the careful path, which compares the keys, reads the file)."""
    return sorted_distinct(_hashes(values))


def sorted_distinct(hashes: np.ndarray) -> np.ndarray | None:
    """``hashes`` sorted (in place), or None when two are equal."""
    hashes.sort()
    if len(hashes) > 1 and bool((hashes[1:] == hashes[:-1]).any()):
        return None
    return hashes


class BulkKeys:
    """The keys of a file read in bulk, a chunk at a time: their bytes (:class:`KeysBuilder`) and hashes (grown
    in place, not joined from pieces at the end: :class:`~replicate.judge.keytable.GrowingBytes`)."""

    def __init__(self) -> None:
        self.keys = KeysBuilder()
        self._hashes = GrowingBytes()

    def extend(self, keys: list[str]) -> None:
        self.keys.extend(keys)
        self._hashes.extend(_hashes(keys).data)

    def __len__(self) -> int:
        return len(self.keys)

    def hashes(self) -> np.ndarray | None:
        """hash() of each key (int64, sorted), or None when two are equal (see :func:`distinct_hashes`) or
        there is none."""
        if not self._hashes:
            return None
        return sorted_distinct(np.frombuffer(self._hashes.take(), dtype=np.int64))
