"""Small and mismatched samples (pure): flags for edges on too few items and for run sets that drop items.

No verdict without its n: every flag names the number of items behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate.judge.compare import Comparison
from replicate.judge.uncertainty import MIN_ITEMS
from replicate.stats.countintervals import CellFigures
from replicate.stats.min_items import too_few_items


@dataclass(frozen=True, slots=True)
class SampleFlag:
    """A sample problem: what (``code``), which edge or run, and the numbers."""

    code: str  # small_sample | items_dropped | items_differ_from_floor | small_floor
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message} [{self.code}]"

    def to_json(self) -> dict:
        return {"code": self.code, "where": self.where, "message": self.message}


def small_sample_flag(
    where: str, n: int, min_items: int, what: str = "compared on", *, intervals: bool = True
) -> SampleFlag | None:
    message = too_few_items(what, n, min_items, intervals=intervals)
    return None if message is None else SampleFlag("small_sample", where, message)


@dataclass(frozen=True)
class CellsReport:
    """The figures of a four-cell table given as counts, and the small-sample flag of its n (as for edges)."""

    figures: CellFigures
    min_items: int = MIN_ITEMS

    @property
    def flag(self) -> SampleFlag | None:
        """``small_sample`` when the table has fewer than ``min_items`` items (the threshold of edges and floors)."""
        return small_sample_flag("four-cell table", self.figures.cells.n, self.min_items, "the table has")

    def to_json(self) -> dict:
        out = self.figures.to_json()
        out["uncertainty"]["min_items"] = self.min_items
        flag = self.flag
        out["small_sample"] = flag is not None
        out["flags"] = [] if flag is None else [flag.to_json()]
        return out


def dropped_per_run(edges: Sequence[Comparison]) -> list[dict]:
    """Each run of a chain once, in order: its items, how many the shared set drops, unparsed."""
    seen: dict[str, dict] = {}
    for e in edges:
        for side in (e.old, e.new):
            entry = {"name": side.name, "items": side.items, "dropped": side.items - e.shared_items, "unparsed": side.unparsed}
            if side.extraction_failures is not None:
                entry["extraction_failures"] = side.extraction_failures
            seen.setdefault(side.name, entry)
    return list(seen.values())


def edge_flags(edges: Sequence[Comparison], *, min_items: int | None, intervals: bool = True) -> list[SampleFlag]:
    """Runs whose items others lack (how many each), and edges on fewer than ``min_items`` items.

    ``intervals``: whether the edges have intervals (the small-sample words point to them).
    """
    flags = []
    shared = edges[0].shared_items if edges else 0
    for run in dropped_per_run(edges):
        if run["dropped"]:
            flags.append(
                SampleFlag(
                    "items_dropped", run["name"],
                    f"{run['dropped']} of its {run['items']} items are missing from other runs and are dropped; "
                    f"every edge uses the {shared} shared items",
                )
            )
    if min_items is not None:
        for e in edges:
            flag = small_sample_flag(f"{e.old.name} -> {e.new.name}", e.cells.n, min_items, intervals=intervals)
            if flag is not None:
                flags.append(flag)
    return flags
