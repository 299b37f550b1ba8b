"""Recompute trial claims from trials tables with the ``items`` / ``screen`` engine (pure: tables in, values out).

Nothing here classifies an item or computes a share: every figure is read by
key from :func:`replicate.trials.engine.analyse_items` (the cells),
:func:`replicate.trials.engine.accuracy_table` or
:func:`replicate.trials.screen.screen`, called with the claim's settings, so a
claim and the ``items`` / ``screen`` commands can never disagree. Counts stay
integers, shares of items exact fractions (``improved / n``) and means of
per-item rates (accuracy, delta, R, delta R) exact fractions too, so matching
at printed precision suffers no binary rounding: a mean exactly on a rounding
boundary is a tie, never a float-order accident.

Claims sharing a table and settings share one engine call (all their edges at
once); the permutation null runs only for a group with a ``null_p95`` claim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from replicate.diagnostics import Diagnostics
from replicate.trials.counts import aggregate
from replicate.trials.engine import accuracy_table, analyse_items, parse_edge
from replicate.trials.load import TrialsTable
from replicate.trials.results import CellResult, ItemsResult, ModelAccuracy
from replicate.trials.screen import ScreenResult, ScreenRow, screen
from replicate.verify.claim import Claim
from replicate.verify.matching import Computed


def _items_key(name: str, c: Claim) -> tuple:
    s = c.settings
    return (name, s.eps, s.alpha, s.ci, c.by, s.null, s.seed)


def problems_with_names(claims: Sequence[Claim], table: TrialsTable, label: str) -> list[str]:
    """Each claim naming a model, benchmark or edge absent from ``table``, with what the table holds."""
    out = []
    for c in claims:
        say = f"claim {c.id!r}: "
        if c.benchmark is not None and c.benchmark not in table.benchmarks:
            out.append(f"{say}benchmark {c.benchmark!r} is not in {label}; benchmarks: {', '.join(table.benchmarks)}")
        models: list[str] = []
        if c.spec.scope == "cell" and c.edge is not None:
            models = list(parse_edge(c.edge, table.models))
        elif c.model is not None:
            models = [c.model]
        missing = [m for m in models if m not in table.models]
        if missing:
            what = "edge " + repr(c.edge) + " names " if c.edge is not None else ""
            out.append(f"{say}{what}model(s) {', '.join(map(repr, missing))} not in {label}; "
                       f"models: {', '.join(table.models)}")
        elif len(models) == 2 and models[0] == models[1]:
            out.append(f"{say}edge {c.edge!r} names the same model twice")
        if c.spec.needs_loose and not table.has_loose:
            out.append(f"{say}{c.metric} needs a loose reading, but {label} has no correct_loose values")
    return out


class TrialsRecomputer:
    """Computes trial claims over named tables, calling the engine once per table and settings."""

    def __init__(self, tables: Mapping[str, TrialsTable], diagnostics: Diagnostics | None = None) -> None:
        self.tables = dict(tables)
        self.diagnostics = diagnostics if diagnostics is not None else Diagnostics()
        self._items: dict[tuple, ItemsResult] = {}
        self._accuracy: dict[str, tuple[ModelAccuracy, ...]] = {}
        self._screen: dict[tuple, ScreenResult] = {}
        self._cached: dict[tuple, Any] = {}

    def cached(self, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()`` once per ``key``: a metric family's own engine call (see :mod:`replicate.verify.sources.costs`)."""
        if key not in self._cached:
            self._cached[key] = make()
        return self._cached[key]

    def prepare(self, claims: Sequence[Claim], name_of: Mapping[str, str] | None = None) -> None:
        """Run the engine for every cell the claims need: one call per (table, settings), all edges at once.

        ``name_of`` maps a claim's table to the table to compute from (a replication).
        The permutation null runs only for a group holding a ``null_p95`` claim (no
        other figure depends on it).
        """
        groups: dict[tuple, list[Claim]] = {}
        for c in claims:
            if c.spec.scope == "cell":
                groups.setdefault(_items_key((name_of or {}).get(c.table, c.table), c), []).append(c)
        for key, members in groups.items():
            if key in self._items:
                continue
            name, eps, alpha, ci, by, n_null, seed = key
            edges = list(dict.fromkeys(self.edge_of(c, name) for c in members))
            with_null = any(c.spec.needs_null for c in members)
            self._items[key] = analyse_items(
                self.tables[name], edges, by=by, eps=eps, alpha=alpha, ci=ci,
                n_null=n_null if with_null else 0, seed=seed, diagnostics=self.diagnostics,
            )

    def edge_of(self, c: Claim, name: str) -> tuple[str, str]:
        return parse_edge(c.edge or "", self.tables[name].models)

    def cell(self, c: Claim, name: str) -> CellResult:
        key = _items_key(name, c)
        if key not in self._items:
            self.prepare([c], {c.table: name})
        src, tgt = self.edge_of(c, name)
        for cell in self._items[key].cells:
            if cell.source == src and cell.target == tgt and cell.benchmark == c.benchmark:
                return cell
        raise KeyError((src, tgt, c.benchmark))  # pragma: no cover - prepare() asked for it

    def accuracy_row(self, c: Claim, name: str) -> ModelAccuracy | None:
        if name not in self._accuracy:
            self._accuracy[name] = accuracy_table(aggregate(self.tables[name])[0])
        return next((a for a in self._accuracy[name] if a.model == c.model and a.benchmark == c.benchmark), None)

    def screen_row(self, c: Claim, name: str) -> ScreenRow | None:
        """The claim's benchmark screened on table ``name`` (one screen per table and band)."""
        s = c.settings
        key = (name, s.low, s.high, s.threshold)
        if key not in self._screen:
            self._screen[key] = screen(self.tables[name], low=s.low, high=s.high, threshold=s.threshold)
        return next((r for r in self._screen[key].rows if r.benchmark == c.benchmark), None)

    def compute(self, c: Claim, name: str | None = None) -> Computed:
        """The claim's figure from table ``name`` (default: the claim's own table)."""
        name = name or c.table
        if c.spec.compute is not None:  # a metric row with its own computation
            return c.spec.compute(self, c, name)
        scope = c.spec.scope
        if scope == "cell":
            return cell_value(self.cell(c, name), c.metric, c.printed.unit)
        if scope == "model":
            row = self.accuracy_row(c, name)
            if row is None:
                return Computed(None, f"{c.model} has no trials on {c.benchmark}")
            return accuracy_value(row, c.metric)
        row_s = self.screen_row(c, name)
        if row_s is None:  # pragma: no cover - names are checked before
            return Computed(None, f"no benchmark {c.benchmark}")
        return screen_value(row_s, c.metric, c.printed.unit)


def cell_value(cell: CellResult, metric: str, unit: str) -> Computed:
    """A cell figure by its ``items --format json`` name (:meth:`~replicate.trials.results.CellResult.figure`)."""
    return Computed(*cell.figure(metric[len("items."):], count=unit == "count"), n=cell.n_items)


def accuracy_value(row: ModelAccuracy, metric: str) -> Computed:
    if metric == "accuracy":
        v = row.accuracy_exact
        return Computed(v, None if v is not None else "no item has a non-error trial", n=row.n_items)
    v = row.loose_exact
    return Computed(v, None if v is not None else "no item has a loose reading", n=row.loose_items)


def screen_value(row: ScreenRow, metric: str, unit: str) -> Computed:
    """A screen figure by its ``screen --format json`` name (:meth:`~replicate.trials.screen.ScreenRow.figure`)."""
    return Computed(*row.figure(metric[len("screen."):], count=unit == "count"), n=row.n_items)
