"""Gold kept apart from the runs: joining a gold file's labels to runs by item key (pure).

A gold source is any run a reader read: its gold field when its reader carries
gold (``judge-jsonl@1``, ``exam@1``), else its decided labels (``trec-qrels@1``:
human qrels). :func:`join_gold` gives each run the gold of its items, leaves
out (and reports) items without gold, reports gold naming items the run lacks,
and refuses a run whose own gold disagrees with the gold file, naming both
places. Nothing is dropped silently: what :func:`join_gold` leaves out is in
its :class:`GoldJoin` and in the load's warnings. :func:`attach_gold` is what loading does with gold: the join
when a gold file is given, else the check that runs needing gold carry their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param
from replicate.judge.load.outputs import select
from replicate.judge.model import NO_GOLD, Origins, Run, readonly
from replicate.parsing import UNPARSED

#: Examples named per report (first in file order).
EXAMPLES = 5


def _show(key: str) -> str:
    return key.replace("\x1f", " / ")


@dataclass(frozen=True)
class RunGold:
    """What joining the gold did to one run."""

    name: str
    items: int  # the run's items before the join
    with_gold: int
    without_gold: int  # left out of every figure
    first_without: tuple[str, ...]
    gold_without_item: int  # gold entries naming items this run lacks
    first_gold_without_item: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "items": self.items,
            "with_gold": self.with_gold,
            "without_gold": self.without_gold,
            "first_without_gold": [_show(k) for k in self.first_without],
            "gold_without_item": self.gold_without_item,
            "first_gold_without_item": [_show(k) for k in self.first_gold_without_item],
        }


@dataclass(frozen=True)
class GoldJoin:
    """The gold file, its reader and, per run, what the join kept and left out."""

    path: str
    reader: str
    entries: int
    sha256: str
    runs: tuple[RunGold, ...]
    chosen: str = "given"  # how its reader was chosen: "given" or "by content"

    def covering_none(self, key_names: Sequence[str]) -> Message | None:
        """Why a run was left with no item by the join: the gold file (``gold``) covers none of its items (its
        first such run); None when it covers some of every run's items."""
        for r in self.runs:
            if r.items and not r.with_gold:
                return Message(
                    f"the gold file {self.path} (", Param("gold"), f") covers none of the {r.items} items of run "
                    f"{r.name!r} (first: {', '.join(map(_show, r.first_without))}): its keys must match the run's "
                    f"({', '.join(key_names)}; {r.gold_without_item} gold key(s) name items the run lacks)")
        return None

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "reader": self.reader,
            "sha256": self.sha256,
            "entries": self.entries,
            "runs": [r.to_json() for r in self.runs],
        }


def gold_values(gold: Run) -> np.ndarray:
    """The gold label of each item of a gold source (its gold field, else its decided labels)."""
    if np.any(gold.gold != NO_GOLD):
        return np.asarray(gold.gold, dtype=np.int16)
    if gold.labels is None:
        raise BadInput(
            "the gold file holds neither gold grades nor decided labels (read it with a reader of labels, "
            "e.g. --gold-reader trec-qrels@1)",
            path=", ".join(f.provenance.path for f in gold.files),
        )
    return np.asarray(gold.labels, dtype=np.int16)


def subset(run: Run, keep: np.ndarray, gold: np.ndarray) -> Run:
    """``run`` restricted to the items where ``keep`` is set, with ``gold`` (already restricted) as its gold."""
    idx = np.flatnonzero(keep)
    origins = None
    if run.origins is not None:
        origins = Origins(readonly(run.origins.file_index[idx]), readonly(run.origins.line[idx]))
    return replace(
        run,
        keys=readonly(run.keys[idx]),
        gold=readonly(np.asarray(gold, dtype=np.int16)),
        outputs=select(run.outputs, idx.tolist()),
        labels=None if run.labels is None else readonly(run.labels[idx]),
        splits=None if run.splits is None else readonly(run.splits[idx]),
        origins=origins,
    )


def join_gold(runs: tuple[Run, ...], gold: Run, diagnostics: Diagnostics) -> tuple[tuple[Run, ...], GoldJoin]:
    """Each run with the gold file's labels joined by key (see module doc)."""
    values = gold_values(gold)
    keys = gold.keys.tolist()
    gold_path = ", ".join(f.provenance.path for f in gold.files)
    usable = values != UNPARSED
    unusable = np.flatnonzero(~usable)
    if unusable.size:
        # a gold item without a label (a reference judge's unparsed verdict) is no gold: the runs'
        # items of that key are left out as without gold (reported below), never counted either way
        where = gold.origins.where(int(unusable[0]), gold.files) if gold.origins is not None else gold.name
        diagnostics.warn(
            "gold-unparsed",
            f"{unusable.size} gold item(s) have no label (unparsed), so no gold: their items are left out; "
            f"first: {_show(keys[int(unusable[0])])} at {where}",
            path=gold_path,
        )
    index = {k: i for i, k in enumerate(keys) if usable[i]}
    out: list[Run] = []
    reports: list[RunGold] = []
    clash_with: str | None = None  # the first item whose gold the gold file contradicts
    for run in runs:
        pos = np.fromiter((index.get(k, -1) for k in run.keys.tolist()), dtype=np.int64, count=len(run))
        has = pos >= 0
        joined = values[pos[has]]
        own = run.gold[has]
        clash = np.flatnonzero((own != NO_GOLD) & (own != joined))
        if clash.size:
            i = int(np.flatnonzero(has)[clash[0]])
            g = int(pos[i])
            here = run.origins.where(i, run.files) if run.origins is not None else run.name
            there = gold.origins.where(g, gold.files) if gold.origins is not None else gold_path
            clash_with = (f"item {_show(run.keys[i])} has gold {int(run.gold[i])} in run {run.name!r} ({here}) "
                          f"but {int(values[g])} in the gold file ({there}); {clash.size} item(s) disagree")
            break
        missing = np.flatnonzero(~has)
        seen = np.zeros(len(keys), dtype=bool)
        seen[pos[has]] = True
        unused = np.flatnonzero(~seen & usable)
        report = RunGold(
            run.name, len(run), int(has.sum()), int(missing.size),
            tuple(run.keys[i] for i in missing[:EXAMPLES].tolist()),
            int(unused.size), tuple(keys[i] for i in unused[:EXAMPLES].tolist()),
        )
        if report.without_gold:
            diagnostics.warn(
                "no-gold",
                f"{report.without_gold} of run {run.name!r}'s {len(run)} items have no gold in the gold file "
                f"(left out of every figure); first: {', '.join(map(_show, report.first_without))}",
                path=gold_path,
            )
        if report.gold_without_item:
            diagnostics.warn(
                "gold-without-item",
                f"{report.gold_without_item} gold judgment(s) name items run {run.name!r} lacks; "
                f"first: {', '.join(map(_show, report.first_gold_without_item))}",
                path=gold_path,
            )
        out.append(subset(run, has, joined))
        reports.append(report)
    if clash_with is not None:
        raise BadInput(clash_with)
    sha = gold.files[0].provenance.sha256 if gold.files else ""
    chosen = gold.files[0].chosen if gold.files else "given"
    return tuple(out), GoldJoin(gold_path, gold.reader, len(gold), sha, tuple(reports), chosen)


def attach_gold(
    runs: tuple[Run, ...], gold: Run | None, diagnostics: Diagnostics, *, need: bool,
) -> tuple[tuple[Run, ...], GoldJoin | None]:
    r"""The runs with the gold file's labels joined (:func:`join_gold`) when there is one; else the runs as
    read, a run that carries no gold (and no verdicts) being :class:`BadInput` when the command ``need``\ s gold."""
    if gold is not None:
        return join_gold(runs, gold, diagnostics)
    for run in runs if need else ():
        if run.yields != "verdicts" and len(run) and np.all(run.gold == NO_GOLD):
            raise BadInput(
                f"run {run.name!r} carries no gold (its reader {run.reader} reads labels only): "
                "give the reference labels with --gold FILE (e.g. human qrels)"
            )
    return runs, None
