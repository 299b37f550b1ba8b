"""Align labelled runs on the items they share (pure).

After alignment every later figure is vector arithmetic over an
``(n_runs, n_items)`` label matrix; no per-item Python loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from replicate.errors import BadInput, UsageError
from replicate.judge.keytable import KeyTable, raw_keys
from replicate.judge.model import KEY_SEP, LabelledRun, readonly
from replicate.parsing import UNPARSED


def show_key(key: str) -> str:
    """An item key as a reader sees it (key fields separated by ' / ')."""
    return key.replace(KEY_SEP, " / ")


@dataclass(frozen=True)
class Aligned:
    """Runs restricted to the items all of them have, in one matrix.

    ``labels[r, i]`` is run r's label of item i (:data:`UNPARSED` = -1).
    ``items[r]`` describes run r before alignment;
    ``dropped[r]`` counts its items that other runs lack.
    """

    runs: tuple[LabelledRun, ...]
    keys: np.ndarray
    gold: np.ndarray  # int16 (n_items,)
    labels: np.ndarray  # int8 (n_runs, n_items)
    dropped: tuple[int, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.runs)

    @property
    def parsers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.parser for r in self.runs))

    @property
    def readers(self) -> tuple[str, ...]:
        """The readers of the runs' files, each once, in run order."""
        return tuple(dict.fromkeys(name for r in self.runs for name in r.reader.split(" + ")))

    @property
    def n_items(self) -> int:
        return len(self.keys)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise UsageError(f"unknown run {name!r}; runs: {', '.join(self.names)}") from None

    @cached_property
    def unparsed_aligned(self) -> np.ndarray:
        """Per run, unparsed labels among the aligned items (computed once)."""
        return readonly(np.count_nonzero(self.labels == UNPARSED, axis=1))


def _positions(first: LabelledRun, run: LabelledRun) -> np.ndarray:
    """For each item of ``first``, its index in ``run`` (-1 where ``run`` lacks it).

    Two runs whose keys are still held as their bytes (:class:`KeyTable`) and read the same items in the same
    order are told so from the bytes: ``run``'s keys are not made into strings, which it would then hold for
    the rest of the command (about 60 bytes an item, every run but the first: the most of a release's memory
    held per run and item before the pairs)."""
    mine, theirs = raw_keys(run), raw_keys(first)
    if isinstance(mine, KeyTable) and isinstance(theirs, KeyTable) and len(mine) == len(theirs):
        with memoryview(mine.blob) as a, memoryview(theirs.blob) as b:  # bytes, bytearray or memory map
            if a == b:
                return np.arange(len(theirs))
    if len(run.keys) == len(first.keys) and np.array_equal(run.keys, first.keys):
        return np.arange(len(first.keys))
    index = {k: i for i, k in enumerate(run.keys.tolist())}
    get = index.get
    return np.fromiter((get(k, -1) for k in first.keys.tolist()), dtype=np.int64, count=len(first.keys))


def _at(first: LabelledRun, i: int, run: LabelledRun, j: int) -> str:
    """`` (path:line, path:line)``: where the two runs read the item, when known."""
    places = [w for w in (first.where(int(i)), run.where(int(j))) if w]
    return f" ({', '.join(places)})" if places else ""


def _check_gold(runs: Sequence[LabelledRun], gold: np.ndarray, keys: np.ndarray, cols: list[np.ndarray]) -> None:
    for run, pos in zip(runs[1:], cols[1:]):
        other = run.gold[pos]
        bad = np.flatnonzero(other != gold)
        if bad.size:
            shown = "; ".join(
                f"item {show_key(keys[i])}: {runs[0].name} says {gold[i]}, {run.name} says {other[i]}"
                + _at(runs[0], cols[0][i], run, pos[i])
                for i in bad[:5]
            )
            more = f" (and {bad.size - 5} more)" if bad.size > 5 else ""
            files = ", ".join(f.provenance.path for f in run.files) or run.name
            raise BadInput(
                f"gold grades disagree between runs on {bad.size} shared item(s): {shown}{more}",
                path=files,
            )


def align(runs: Sequence[LabelledRun]) -> Aligned:
    """Restrict runs to their shared items (order of the first run) and stack their labels.

    Raises :class:`UsageError` for duplicate run names or fewer than one run, and
    :class:`BadInput` when two runs give different gold grades for one item.
    """
    runs = tuple(runs)
    if not runs:
        raise UsageError("no runs to align")
    names = [r.name for r in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"run names must be unique; repeated: {', '.join(dupes)}")
    first = runs[0]
    cols = [_positions(first, r) for r in runs]
    shared = np.logical_and.reduce([c >= 0 for c in cols])
    cols = [c[shared] for c in cols]
    keys = first.keys[shared]
    gold = first.gold[shared].astype(np.int16)
    _check_gold(runs, gold, keys, cols)
    labels = np.stack([r.labels[c] for r, c in zip(runs, cols)]).astype(np.int8, copy=False)
    dropped = tuple(len(r) - int(shared.sum()) for r in runs)
    return Aligned(runs, readonly(keys), readonly(gold), readonly(labels), dropped)
