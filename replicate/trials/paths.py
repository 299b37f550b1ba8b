"""Cancellation across an upgrade path (pure): the direct edge A -> C against its two steps A -> B -> C.

Every edge is classified by ``replicate items``' engine with the same settings
(:func:`replicate.trials.engine.analyse_items`; the classes do not depend on the
permutation null, which is not run). Per item that all three edges classify,
each step's class gives a sign (improved +1, regressed -1, otherwise 0), and the
**path's composition** is

- ``improved``: the signs sum above 0 (up on a step, and not down on the other);
- ``regressed``: the signs sum below 0;
- ``cancelled``: one step up and the other down: ``regressed then recovered``
  (down, up) or ``improved then regressed`` (up, down);
- ``unflagged``: neither step flags the item.

The mean accuracy change adds up exactly over these items (Δ direct = Δ step 1 +
Δ step 2), the item classes do not. Two shares say by how much:

- ``hidden_by_direct``: of the path's flagged step moves (each flagged item on each
  step is one move), the share made by cancelled items (two moves each): churn the
  direct edge cannot show;
- ``hidden_by_path``: of the items the direct edge flags (improved or regressed), the
  share whose path composition is not the same direction: the direct edge's change
  that the two steps do not show (a drift below each step's detection, or a cancellation).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from replicate.errors import Message, Param, UsageError
from replicate.stats.classify import CLASSES, IMPROVED, REGRESSED
from replicate.stats.rational import as_float
from replicate.trials.results import CellResult, ItemsResult

#: The path's composition of two step classes (see the module docstring).
COMPOSED: tuple[str, ...] = ("improved", "regressed", "cancelled", "unflagged")


def parse_path(text: str, models: Sequence[str]) -> tuple[str, str, str]:
    """``"A:B:C"`` -> ``("A", "B", "C")``: three different models of the table."""
    parts = tuple(text.split(":"))
    if len(parts) != 3 or not all(parts):
        raise UsageError(Message(Param("path"), f" must look like OLD:MIDDLE:NEW (three models), got {text!r}"))
    unknown = [m for m in parts if m not in models]
    if unknown:
        raise UsageError(Message(Param("path"), f": unknown model(s) {', '.join(unknown)}; models in the table: "
                                 f"{', '.join(models)}"))
    if len(set(parts)) != 3:
        raise UsageError(Message(Param("path"), f" needs three different models, got {text!r}"))
    return parts[0], parts[1], parts[2]


def _sign(code: int) -> int:
    return 1 if code == IMPROVED else -1 if code == REGRESSED else 0


def compose(first: int, second: int) -> str:
    """The path's composition of two step class codes."""
    s1, s2 = _sign(first), _sign(second)
    if s1 and s2 and s1 != s2:
        return "cancelled"
    total = s1 + s2
    return "improved" if total > 0 else "regressed" if total < 0 else "unflagged"


@dataclass(frozen=True)
class PathItem:
    """One item's three classes and the path's composition."""

    benchmark: str
    item: str
    step1: str
    step2: str
    direct: str
    composed: str
    d_step1: Fraction
    d_step2: Fraction

    def to_json(self) -> dict:
        return {"benchmark": self.benchmark, "item": self.item, "step1": self.step1, "step2": self.step2,
                "direct": self.direct, "path": self.composed,
                "d_step1": float(self.d_step1), "d_step2": float(self.d_step2),
                "d_direct": float(self.d_step1 + self.d_step2)}


@dataclass(frozen=True)
class PathCell:
    """The direct edge against its path on one benchmark (``None``: benchmarks pooled)."""

    benchmark: str | None
    items: tuple[PathItem, ...]
    left_out: int  # items the direct edge classifies that a step does not

    @property
    def n_items(self) -> int:
        return len(self.items)

    def count(self, pred: Callable[[PathItem], bool]) -> int:
        return sum(1 for i in self.items if pred(i))

    @property
    def crosstab(self) -> dict[tuple[str, str], int]:
        """(direct class, path composition) -> items."""
        out: dict[tuple[str, str], int] = {}
        for i in self.items:
            out[(i.direct, i.composed)] = out.get((i.direct, i.composed), 0) + 1
        return out

    def flagged(self, which: str, cls: str) -> int:
        return self.count(lambda i: getattr(i, which) == cls)

    @property
    def regressed_then_recovered(self) -> int:
        return self.count(lambda i: (i.step1, i.step2) == ("regressed", "improved"))

    @property
    def improved_then_regressed(self) -> int:
        return self.count(lambda i: (i.step1, i.step2) == ("improved", "regressed"))

    @property
    def step_moves(self) -> int:
        return sum(self.flagged(s, c) for s in ("step1", "step2") for c in ("improved", "regressed"))

    @property
    def hidden_by_direct(self) -> Fraction | None:
        moves = self.step_moves
        cancelled = self.regressed_then_recovered + self.improved_then_regressed
        return None if moves == 0 else Fraction(2 * cancelled, moves)

    @property
    def direct_flagged(self) -> int:
        return self.flagged("direct", "improved") + self.flagged("direct", "regressed")

    @property
    def hidden_by_path(self) -> Fraction | None:
        n = self.direct_flagged
        shown = self.count(lambda i: i.direct in ("improved", "regressed") and i.composed == i.direct)
        return None if n == 0 else Fraction(n - shown, n)

    def delta(self, which: str) -> Fraction | None:
        """Mean per-item difference over the cell's items of step 1, step 2 or the direct edge, exactly."""
        if not self.items:
            return None
        get = {"step1": lambda i: i.d_step1, "step2": lambda i: i.d_step2,
               "direct": lambda i: i.d_step1 + i.d_step2}[which]
        return sum((get(i) for i in self.items), Fraction(0)) / len(self.items)

    def net(self, which: str) -> int:
        """Improved minus regressed items on step 1, step 2 or the direct edge."""
        return self.flagged(which, "improved") - self.flagged(which, "regressed")

    def to_json(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "n_items": self.n_items,
            "left_out": self.left_out,
            "delta": {k: as_float(self.delta(k)) for k in ("step1", "step2", "direct")},
            "counts": {k: {c: self.flagged(k, c) for c in CLASSES} for k in ("step1", "step2", "direct")},
            "net": {k: self.net(k) for k in ("step1", "step2", "direct")},
            "path": {c: self.flagged("composed", c) for c in COMPOSED},
            "regressed_then_recovered": self.regressed_then_recovered,
            "improved_then_regressed": self.improved_then_regressed,
            "step_moves": self.step_moves,
            "hidden_by_direct": as_float(self.hidden_by_direct),
            "direct_flagged": self.direct_flagged,
            "hidden_by_path": as_float(self.hidden_by_path),
            "crosstab": [{"direct": d, "path": p, "items": n} for (d, p), n in sorted(self.crosstab.items())],
        }


@dataclass(frozen=True, eq=False)
class PathResult:
    """``replicate path``: the direct edge against its two steps, per benchmark."""

    path: tuple[str, str, str]
    cells: tuple[PathCell, ...]
    items: ItemsResult  # the engine's result on the three edges (step 1, step 2, direct)

    def to_json(self) -> dict:
        it = self.items.to_json()
        settings = {k: it["settings"][k] for k in ("eps", "eps_text", "alpha", "ci", "by", "confidence_level",
                                                    "fisher", "multiple_testing", "reading")}
        return {"path": list(self.path), "cells": [c.to_json() for c in self.cells], "settings": settings,
                "input": it["input"]}


def _by_item(cell: CellResult) -> dict[tuple[str, str], tuple[int, Fraction]]:
    r = cell.rows
    if r is None:
        return {}
    out = {}
    for k, (b, i) in enumerate(zip(r.benchmarks, r.items)):
        d = Fraction(int(r.b[k]), int(r.n2[k])) - Fraction(int(r.a[k]), int(r.n1[k]))
        out[(b, i)] = (int(r.cls[k]), d)
    return out


def path_cells(result: ItemsResult, path: tuple[str, str, str]) -> tuple[PathCell, ...]:
    """Match the engine's cells of A -> B, B -> C and A -> C by benchmark and their items by key."""
    a, b, c = path
    edges = {(x.source, x.target, x.benchmark): x for x in result.cells}
    out = []
    for bench in dict.fromkeys(x.benchmark for x in result.cells):
        s1, s2, d = (_by_item(edges[(p, q, bench)]) for p, q in ((a, b), (b, c), (a, c)))
        keys = sorted(d.keys() & s1.keys() & s2.keys())
        items = []
        for key in keys:
            c1, d1 = s1[key]
            c2, d2 = s2[key]
            items.append(PathItem(key[0], key[1], CLASSES[c1], CLASSES[c2], CLASSES[d[key][0]], compose(c1, c2), d1, d2))
        out.append(PathCell(bench, tuple(items), len(d.keys() - set(keys))))
    return tuple(out)


def analyse_path(table: Any, path: tuple[str, str, str], analyse: Callable[..., ItemsResult]) -> PathResult:
    """The path's three edges classified by ``analyse`` (the engine with the command's settings), matched."""
    a, b, c = path
    result = analyse(table, [(a, b), (b, c), (a, c)])
    return PathResult(path, path_cells(result, path), result)


def path_item_rows(result: PathResult):
    """One JSON-ready row per item (for ``--per-item``)."""
    for cell in result.cells:
        for i in cell.items:
            yield i.to_json()



def render_path(result: PathResult, fmt: Any) -> str:
    """The direct edge against the path per benchmark, and per benchmark the direct class by the path's composition."""
    from replicate.output import Format, pct, prose, table
    from replicate.trials.render import input_lines

    fmt = Format(fmt)
    md = fmt is Format.markdown
    a, b, c = result.path
    it = result.items

    def share(x: Fraction | None) -> str:
        return pct(as_float(x), 1)

    def signed(x: Fraction | None) -> str:
        return "-" if x is None else f"{100 * float(x):+.1f} pp"

    rows = []
    for cell in result.cells:
        bench = "(all)" if cell.benchmark is None else cell.benchmark
        rows.append([bench, cell.n_items, signed(cell.delta("direct")), signed(cell.delta("step1")),
                     signed(cell.delta("step2")),
                     f"{cell.flagged('direct', 'improved')} / {cell.flagged('direct', 'regressed')}",
                     f"{cell.flagged('step1', 'improved')} / {cell.flagged('step1', 'regressed')}",
                     f"{cell.flagged('step2', 'improved')} / {cell.flagged('step2', 'regressed')}",
                     cell.regressed_then_recovered, cell.improved_then_regressed,
                     share(cell.hidden_by_direct), share(cell.hidden_by_path)])
    head = (f"Direct edge {a} -> {c} against the path {a} -> {b} -> {c} (item classes of 'items': eps {it.eps}, "
            f"BH q <= {it.alpha}, {it.ci} 95% interval)")
    out = [f"## {head}\n" if md else f"{head}\n", table(rows, [
        "benchmark", "items", "delta direct", "delta step 1", "delta step 2", "direct up / down", "step 1 up / down",
        "step 2 up / down", "down then up", "up then down", "step moves hidden by direct",
        "direct change hidden by path"], fmt)]
    out.append(prose(
        "up / down: items reliably improved / regressed. The mean change adds up (delta direct = the two steps' "
        "deltas), the items do not: 'down then up' items regress on the first step and recover on the second, "
        "'up then down' the reverse; both look unchanged on the direct edge. Step moves hidden by direct: the "
        "share of the steps' flagged moves made by those items (two each). Direct change hidden by path: the "
        "share of the direct edge's flagged items whose path (up on a step and not down on the other, or down "
        "and not up) is not the same direction.\n", fmt))
    for cell in result.cells:
        bench = "(all)" if cell.benchmark is None else cell.benchmark
        ct = cell.crosstab
        trows = [[d, *(ct.get((d, p), 0) for p in COMPOSED), sum(ct.get((d, p), 0) for p in COMPOSED)]
                 for d in CLASSES]
        title = f"Benchmark {bench}: direct class (rows) by the path's composition (columns)"
        note = f"\n{cell.left_out} item(s) the direct edge classifies are missing on a step: left out.\n" if cell.left_out else ""
        out += ["", f"## {title}\n" if md else f"{title}\n",
                table(trows, ["direct", *COMPOSED, "total"], fmt) + note]
    out.append(input_lines(it.provenance, fmt).rstrip("\n"))
    return "\n".join(out)
