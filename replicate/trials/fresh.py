"""A fresh collection beside a release: the items both hold, either table restricted to them, the item-level
agreement of their classifications (with the 2 x 2 table of a class share and the swap null's two sides),
and what the fresh collection says about itself (pure: tables in).

``replicate verify`` replicates trial claims against a fresh collection with these
(:mod:`replicate.verify.replication`); nothing here knows of claims.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from replicate.stats.classify import (
    CLASSES,
    EQUIVALENT,
    IMPROVED,
    INCONCLUSIVE,
    REGRESSED,
    diff_at_least,
    float_above,
    float_below,
)
from replicate.stats.replication import Comparison, paired_share_difference
from replicate.stats.swapnull import Side, swap_null_p
from replicate.trials.counts import aggregate
from replicate.trials.load import CATEGORIES, TrialsTable
from replicate.trials.results import CellResult, ItemRows

if TYPE_CHECKING:
    from replicate.collect.archive_read import ArchiveScan

#: Metadata columns of a trials table that name what the endpoint reported (shown in the note when present).
SNAPSHOT_COLUMNS = ("snapshot", "model_snapshot", "response_model", "system_fingerprint", "fingerprint")


@dataclass(frozen=True)
class ItemDifference:
    """Items of the release missing from the fresh table and the reverse, per benchmark (compared: the shared ones)."""

    shared: int
    only_released: dict[str, int]
    only_fresh: dict[str, int]

    @property
    def same(self) -> bool:
        return not self.only_released and not self.only_fresh

    def to_json(self) -> dict:
        return {"shared_items": self.shared, "only_in_release": dict(self.only_released),
                "only_in_fresh": dict(self.only_fresh)}


def _units(table: TrialsTable) -> set[tuple[str, str]]:
    pairs = set(zip(table.benchmark.tolist(), table.item.tolist()))
    return {(table.benchmarks[b], table.items[i]) for b, i in pairs}


def _count_by_benchmark(units: set[tuple[str, str]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for b, _ in sorted(units):
        out[b] = out.get(b, 0) + 1
    return out


def restrict(table: TrialsTable, units: set[tuple[str, str]]) -> TrialsTable:
    """The rows of ``table`` whose (benchmark, item) is in ``units`` (codes and name tuples unchanged)."""
    names = np.array([(table.benchmarks[b], table.items[i]) in units
                      for b, i in zip(table.benchmark.tolist(), table.item.tolist())], dtype=bool)
    return table.take(np.flatnonzero(names))


def shared_items(released: TrialsTable, fresh: TrialsTable) -> tuple[TrialsTable, ItemDifference]:
    """The fresh table on the items the release has, and what differs (never hidden: the note shows it)."""
    r, f = _units(released), _units(fresh)
    diff = ItemDifference(len(r & f), _count_by_benchmark(r - f), _count_by_benchmark(f - r))
    return (fresh if not (f - r) else restrict(fresh, r & f)), diff


def released_on_shared(released: TrialsTable, fresh: TrialsTable) -> TrialsTable | None:
    """The released table on the items the fresh one holds; None when it holds every one of them already."""
    r, f = _units(released), _units(fresh)
    return None if not (r - f) else restrict(released, r & f)


@dataclass(frozen=True)
class Agreement:
    """The release's and the fresh collection's classification of one cell's shared items."""

    source: str
    target: str
    benchmark: str | None
    table: tuple[tuple[int, ...], ...]  # rows: release class, columns: fresh class (CLASSES order)
    items_compared: int

    def _cell(self, r: int, f: int) -> int:
        return self.table[r][f]

    @property
    def significant_released(self) -> int:
        return sum(self._cell(r, f) for r in (IMPROVED, REGRESSED) for f in range(len(CLASSES)))

    @property
    def again(self) -> int:
        """Significant in the release and changed the same way again in the fresh data."""
        return self._cell(IMPROVED, IMPROVED) + self._cell(REGRESSED, REGRESSED)

    @property
    def reversed(self) -> int:
        return self._cell(IMPROVED, REGRESSED) + self._cell(REGRESSED, IMPROVED)

    @property
    def new(self) -> int:
        """Significant in the fresh data, not in the release."""
        return sum(self._cell(r, f) for r in (EQUIVALENT, INCONCLUSIVE) for f in (IMPROVED, REGRESSED))

    @property
    def same_class(self) -> int:
        return sum(self._cell(k, k) for k in range(len(CLASSES)))

    def crossed(self, classes: Collection[int]) -> tuple[int, int, int, int]:
        """The items in ``classes`` on both sides, on the release's only, on the fresh one's only, on neither:
        the 2 x 2 table of a paired class share (:func:`~replicate.stats.replication.paired_share_difference`)."""
        out = [0, 0, 0, 0]
        for r, row in enumerate(self.table):
            for f, n in enumerate(row):
                out[0 if r in classes and f in classes else 1 if r in classes else 2 if f in classes else 3] += n
        return out[0], out[1], out[2], out[3]

    def to_json(self) -> dict:
        return {
            "source": self.source, "target": self.target, "benchmark": self.benchmark,
            "items_compared": self.items_compared, "classes": list(CLASSES),
            "table": [list(r) for r in self.table],
            "significant_in_release": self.significant_released, "changed_again": self.again,
            "reversed": self.reversed, "new_in_fresh": self.new,
            "same_class": self.same_class,
            "agreement": None if not self.items_compared else self.same_class / self.items_compared,
        }


def agreement(released: CellResult, fresh: CellResult) -> Agreement:
    """Cross-tabulate the two classifications of the items both cells hold."""
    assert released.rows is not None and fresh.rows is not None
    cls_f = {(b, it): int(k) for b, it, k in zip(fresh.rows.benchmarks, fresh.rows.items, fresh.rows.cls.tolist())}
    n = len(CLASSES)
    table = [[0] * n for _ in range(n)]
    compared = 0
    for b, it, k in zip(released.rows.benchmarks, released.rows.items, released.rows.cls.tolist()):
        f = cls_f.get((b, it))
        if f is not None:
            table[int(k)][f] += 1
            compared += 1
    return Agreement(released.source, released.target, released.benchmark,
                     tuple(tuple(r) for r in table), compared)


def swap_sides(released: ItemRows, fresh: ItemRows, eps: Fraction) -> tuple[Side, Side]:
    """Both cells' items as the swap null of a paired class share reads them (:class:`~replicate.stats.swapnull.Side`):
    the items both hold first, in the release's order on both sides, then each side's own."""
    keys = [list(zip(r.benchmarks, r.items)) for r in (released, fresh)]
    theirs = set(keys[1])
    shared = [k for k in keys[0] if k in theirs]
    mine = set(shared)

    def side(rows: ItemRows, own: list) -> Side:
        at = {k: i for i, k in enumerate(own)}
        order = np.array([at[k] for k in shared] + [i for i, k in enumerate(own) if k not in mine], dtype=np.int64)
        up, down = diff_at_least(rows.a, rows.n1, rows.b, rows.n2, eps)
        inside = float_above(rows.lo, -eps) & float_below(rows.hi, eps)
        return Side(np.asarray(rows.p)[order], up[order], down[order], inside[order], len(shared))

    return side(released, keys[0]), side(fresh, keys[1])


def paired_class_share(released: CellResult, fresh: CellResult, classes: Collection[int], *, eps: Fraction,
                       alpha: float, n_resamples: int, seed: int) -> Comparison | None:
    """Newcombe's paired interval of the share of a cell's items in ``classes``, fresh - release, from each
    shared item's class on the two sides crossed (:meth:`Agreement.crossed`), with the swap null's p
    (:func:`~replicate.stats.swapnull.swap_null_p`): BH's coupling of the items kept, which the exact McNemar
    test on the discordant items ignores. None when the two cells share no item."""
    cross = agreement(released, fresh).crossed(classes)
    if not sum(cross):
        return None
    assert released.rows is not None and fresh.rows is not None
    _, p = swap_null_p(*swap_sides(released.rows, fresh.rows, eps), classes, alpha=alpha, n_resamples=n_resamples,
                       seed=seed)
    return replace(paired_share_difference(*cross), p_value=p)


@dataclass(frozen=True)
class CollectionProvenance:
    """What a fresh collection says about itself: file, counts by category, snapshots, archive header and dates."""

    name: str
    trials: dict[str, Any]  # the trials file: path, size, sha256
    rows: int
    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    scorers: tuple[str, ...]
    categories: dict[str, dict[str, int]]  # model -> category -> trials
    snapshots: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # column -> model -> values
    archive: dict[str, Any] | None = None  # path, sha256, config (no secrets), seed, first/last trial date
    items: ItemDifference | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "trials": self.trials, "rows": self.rows, "models": list(self.models),
                "benchmarks": list(self.benchmarks), "scorers": list(self.scorers),
                "categories": self.categories, "snapshots": self.snapshots, "archive": self.archive,
                "items": None if self.items is None else self.items.to_json()}


def collection_provenance(name: str, table: TrialsTable, diff: ItemDifference,
                          archive: dict[str, Any] | None) -> CollectionProvenance:
    counts = aggregate(table)[0]
    cats = counts.categories.sum(axis=1)
    categories = {m: {c: int(cats[i, j]) for j, c in enumerate(CATEGORIES)} for i, m in enumerate(counts.models)}
    snapshots: dict[str, dict[str, list[str]]] = {}
    for col in SNAPSHOT_COLUMNS:
        if col in table.metadata_columns:
            meta = table.column_codes(col)
            has = meta.codes >= 0  # rows without a value are left out
            pairs = np.unique(table.model[has].astype(np.int64) * max(len(meta.values), 1) + meta.codes[has])
            per: dict[str, set[str]] = {}
            for m, c in zip(*np.divmod(pairs, max(len(meta.values), 1))):  # one (model, value) pair each
                per.setdefault(table.models[int(m)], set()).add(str(meta.values[int(c)]))
            snapshots[col] = {m: sorted(v) for m, v in sorted(per.items())}
    prov = table.provenance.to_json() if table.provenance else {"path": table.path}
    return CollectionProvenance(name, prov, table.n_rows, table.models, table.benchmarks, table.scorers,
                                categories, snapshots, archive, diff)


def archive_summary(scan: ArchiveScan, sha256: str, path: str) -> dict[str, Any]:
    """The archive header's public config (it holds no secrets: only the key's variable name) and trial dates,
    from a :class:`~replicate.collect.archive_read.ArchiveScan` (no trial record held)."""
    header = scan.header or {}
    return {"path": path, "sha256": sha256, "config": header.get("config"), "seed": header.get("seed"),
            "params_hash": header.get("params_hash"), "trials": scan.trials,
            "resumes": len(scan.resumes), "first_trial": scan.first_ts, "last_trial": scan.last_ts}
