"""Item classes under a benchmark's loose reading (IFBench's official verifier has a strict and a loose one).

The loose reading is the same table read through ``correct_loose``: a trial is
correct when its loose reading is true, and otherwise keeps its category (a
strictly correct response that the loose reading rejects is ``wrong``). Trials
without a loose reading are not in the loose table (counted); API errors stay
API errors. :func:`analyse_readings` runs the engine of ``replicate items`` on
both tables with the same settings, so Fisher, BH, eps, the equivalence
interval and the permutation null are the same rules (and the same seeds) under
either reading, and sets the two classifications of every item side by side.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Literal, get_args

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import Message, Param, UsageError
from replicate.stats.classify import CLASSES
from replicate.trials.load import API_ERROR, CATEGORIES, CORRECT, TrialsTable, readonly
from replicate.trials.results import CellResult, ItemsResult

Reading = Literal["strict", "loose", "both"]
READINGS: tuple[Reading, ...] = get_args(Reading)
WRONG = CATEGORIES.index("wrong")


def loose_reading(table: TrialsTable) -> tuple[TrialsTable, int]:
    """The table as its loose reading classifies it, and how many non-error trials carry no loose reading
    (left out). A table without any loose reading is a UsageError."""
    if not table.has_loose:
        raise UsageError(Message(Param("reading"), f" loose: {table.path} has no loose reading (a "
                                 "'correct_loose' column of true/false)"))
    api = table.category == API_ERROR
    keep = np.flatnonzero(api | (table.loose >= 0))
    category = table.category.copy()
    category[(table.loose == 1) & ~api] = CORRECT
    category[(table.loose == 0) & (table.category == CORRECT)] = WRONG
    no_loose = np.full(keep.size, -1, dtype=table.loose.dtype)  # one reading now: no strict-vs-loose R
    no_loose.flags.writeable = False
    loose = table.take(keep, path=f"{table.path} (loose reading)", category=readonly(category[keep]), loose=no_loose)
    return loose, int(table.n_rows - keep.size)


@dataclass(frozen=True)
class CellMoves:
    """One cell's items under both readings: how many fall in each (strict class, loose class)."""

    source: str
    target: str
    benchmark: str | None
    n_items: int  # items in the cell under both readings
    moves: dict[tuple[str, str], int]  # (strict class, loose class) -> items

    @property
    def changed(self) -> int:
        return sum(n for (a, b), n in self.moves.items() if a != b)

    def to_json(self) -> dict:
        return {"source": self.source, "target": self.target, "benchmark": self.benchmark,
                "n_items": self.n_items, "changed_class": self.changed,
                "moves": [{"strict": a, "loose": b, "items": n} for (a, b), n in sorted(self.moves.items())]}


def cell_moves(strict: CellResult, loose: CellResult) -> CellMoves:
    """The (strict class, loose class) counts over the items both cells classified."""
    def classes(c: CellResult) -> dict[tuple[str, str], str]:
        r = c.rows
        if r is None:
            return {}
        return {(b, i): CLASSES[int(k)] for b, i, k in zip(r.benchmarks, r.items, r.cls.tolist())}

    s, lo = classes(strict), classes(loose)
    moves: dict[tuple[str, str], int] = {}
    for key in s.keys() & lo.keys():
        pair = (s[key], lo[key])
        moves[pair] = moves.get(pair, 0) + 1
    return CellMoves(strict.source, strict.target, strict.benchmark, len(s.keys() & lo.keys()), moves)


@dataclass(frozen=True, eq=False)
class ReadingsResult:
    """``replicate items --reading both``: the engine's result under each reading, and the moves between them."""

    strict: ItemsResult
    loose: ItemsResult
    moves: tuple[CellMoves, ...]
    no_loose_trials: int

    def to_json(self) -> dict:
        return {"reading": "both", "strict": self.strict.to_json(), "loose": self.loose.to_json(),
                "moves": [m.to_json() for m in self.moves], "trials_without_loose_reading": self.no_loose_trials}


def analyse_readings(
    table: TrialsTable,
    reading: str,
    analyse: Callable[[TrialsTable], ItemsResult],
    *,
    diagnostics: Diagnostics | None = None,
) -> ItemsResult | ReadingsResult:
    """``analyse`` (the engine with the command's settings) under ``reading``: strict (the table as it is),
    loose (:func:`loose_reading`) or both side by side. Trials the loose reading leaves out are a warning."""
    if reading not in READINGS:
        raise UsageError(Message(Param("reading"), f" must be one of {', '.join(READINGS)}; got {reading!r}"))
    if reading == "strict":
        return analyse(table)
    loose_table, dropped = loose_reading(table)
    if dropped and diagnostics is not None:
        diagnostics.warn("no-loose-reading", f"{dropped} non-error trial(s) carry no loose reading (correct_loose "
                         "null or absent): they are left out of the loose reading's figures", path=table.path)
    loose = dataclasses.replace(analyse(loose_table), reading="loose")
    if reading == "loose":
        return loose
    strict = analyse(table)
    moves = tuple(cell_moves(s, lo) for s, lo in zip(strict.cells, loose.cells))
    return ReadingsResult(strict, loose, moves, dropped)
