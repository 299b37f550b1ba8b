"""Parser audits: how much a figure depends on which parser read the raw outputs (pure).

For each file (one run of raw outputs) and two or more parsers:

- how many outputs each parser reads and leaves unparsed, and the EM each
  parser's labels give against gold (under the unparsed policy);
- on how many items the parsers' labels differ (an unparsed output counts as
  a label of its own: "read by one parser, not by the other" is a difference),
  split by pattern (e.g. ``strict=null, fallback=2``) with counts;
- trimmed examples of differing outputs, one per pattern first (most frequent
  pattern first), then further ones in file order;
- with an edge old -> new, the edge's figures under each parser and how they
  move from the first parser to each other one.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from replicate.errors import Message, Param, UsageError
from replicate.judge.align import show_key
from replicate.judge.compare import Comparison, compare
from replicate.judge.model import LabelledRun, Run, readonly
from replicate.judge.pairs import Policy
from replicate.parsing import UNPARSED, Parser
from replicate.stats.fourcell import as_float
from replicate.stats.gold import accuracy
from replicate.stats.policy import check_policy

#: Edge figures whose movement between parsers an audit reports.
EDGE_FIGURES = ("n", "em_old", "em_new", "regression_rate", "regression_share_of_old_correct", "change_rate", "independence_ratio")

_WS = re.compile(r"\s+")


def trim(text: str | None, width: int = 160) -> str | None:
    """One-line preview: whitespace collapsed; long texts keep their head and tail.

    Labels usually sit at the start or the end of an output, so the middle is
    what gets cut (marked with `` … ``).
    """
    if text is None:
        return None
    if width < 20:
        raise ValueError(f"width must be at least 20; got {width}")
    flat = _WS.sub(" ", text).strip()
    if len(flat) <= width:
        return flat
    head = (width - 3) * 3 // 5
    tail = width - 3 - head
    return f"{flat[:head]} … {flat[-tail:]}"


def _label(v: int) -> int | None:
    return None if v == UNPARSED else int(v)


@dataclass(frozen=True, slots=True)
class ParserTally:
    """What one parser made of one file."""

    parser: str
    items: int
    parsed: int
    correct: int
    policy: Policy

    @property
    def unparsed(self) -> int:
        return self.items - self.parsed

    @property
    def em(self) -> float | None:
        """EM under the policy: over parsed items (intersect) or all items (wrong)."""
        den = self.parsed if self.policy == "intersect" else self.items
        return as_float(accuracy(self.correct, den))

    def to_json(self) -> dict:
        return {"parsed": self.parsed, "unparsed": self.unparsed, "correct": self.correct, "em": self.em}


@dataclass(frozen=True, slots=True)
class Example:
    """One item the parsers read differently."""

    key: str
    gold: int
    output: str | None  # trimmed
    labels: tuple[tuple[str, int | None], ...]

    def to_json(self) -> dict:
        return {"key": self.key, "gold": self.gold, "output": self.output, "labels": dict(self.labels)}


@dataclass(frozen=True, slots=True)
class Pattern:
    """A combination of labels (one per parser) and on how many items it occurs."""

    labels: tuple[tuple[str, int | None], ...]
    count: int

    def to_json(self) -> dict:
        return {"labels": dict(self.labels), "count": self.count}


@dataclass(frozen=True)
class FileAudit:
    """The audit of one file (one run)."""

    path: str
    run: str
    items: int
    parsers: tuple[ParserTally, ...]
    labels_differ: int
    pairwise_differ: tuple[tuple[str, str, int], ...]
    patterns: tuple[Pattern, ...]
    examples: tuple[Example, ...]

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "run": self.run,
            "items": self.items,
            "parsers": {t.parser: t.to_json() for t in self.parsers},
            "labels_differ": self.labels_differ,
            "pairwise_differ": [{"a": a, "b": b, "differ": k} for a, b, k in self.pairwise_differ],
            "patterns": [p.to_json() for p in self.patterns],
            "examples": [e.to_json() for e in self.examples],
        }


@dataclass(frozen=True)
class EdgeAudit:
    """An edge old -> new under each parser, and how its figures move."""

    old: str
    new: str
    comparisons: tuple[Comparison, ...]  # one per parser, in parser order

    def moves(self) -> dict[str, dict]:
        """figure -> {parser: value, ..., "delta": {parser: value - first parser's value}}."""
        out: dict[str, dict] = {}
        base_parser = self.comparisons[0].parser
        for fig in EDGE_FIGURES:
            values = {c.parser: _figure(c, fig) for c in self.comparisons}
            first = values[base_parser]
            delta = {
                p: (None if v is None or first is None else v - first) for p, v in values.items() if p != base_parser
            }
            out[fig] = {"values": values, "delta": delta}
        return out

    def to_json(self) -> dict:
        return {
            "old": self.old,
            "new": self.new,
            "parsers": {c.parser: c.to_json() for c in self.comparisons},
            "moves": self.moves(),
        }


def _figure(c: Comparison, fig: str) -> float | int | None:
    if fig == "change_rate":
        return c.change_rate
    return getattr(c.cells, fig)


@dataclass(frozen=True)
class Audit:
    """A parser audit over several files, with an optional edge."""

    parsers: tuple[str, ...]
    unparsed_policy: Policy
    files: tuple[FileAudit, ...]
    edge: EdgeAudit | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "parsers": list(self.parsers),
            "unparsed_policy": self.unparsed_policy,
            "files": [f.to_json() for f in self.files],
        }
        if self.edge is not None:
            out["edge"] = self.edge.to_json()
        return out


def _check(parsers: Sequence[Parser], policy: str, examples: int) -> None:
    check_policy(policy)
    names = [p.name for p in parsers]
    if len(names) < 2:
        raise UsageError(Message("a parser audit needs at least two parsers (", Param("parsers"), " A ",
                                 Param("parsers"), f" B); got {len(names)}"))
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(Message("each ", Param("parsers"), f" must differ; repeated: {', '.join(dupes)}"))
    if examples < 0:
        raise ValueError(f"examples must be >= 0; got {examples}")


def label_matrix(run: Run, parsers: Sequence[Parser]) -> np.ndarray:
    """Labels of ``run`` under each parser: int8 array (n_parsers, n_items), UNPARSED = -1."""
    if run.labels is not None:
        path = ", ".join(f.provenance.path for f in run.files) or run.name
        raise UsageError(f"{path}: this file holds labels, not raw outputs (EXAM grades): there is nothing to parse")
    return readonly(np.stack([p.parse_many(run.outputs) for p in parsers]).astype(np.int8, copy=False))


def audit_file(
    run: Run,
    parsers: Sequence[Parser],
    *,
    policy: Policy = "intersect",
    examples: int = 5,
    width: int = 160,
    labels: np.ndarray | None = None,
) -> FileAudit:
    """Audit one run of raw outputs under two or more parsers (see module doc).

    ``labels`` may pass a pre-computed :func:`label_matrix` to avoid parsing twice.
    """
    _check(parsers, policy, examples)
    lab = label_matrix(run, parsers) if labels is None else labels
    names = [p.name for p in parsers]
    gold = run.gold
    parsed = lab != UNPARSED
    correct = (lab == gold[None, :]) & parsed
    tallies = tuple(
        ParserTally(name, len(run), int(parsed[k].sum()), int(correct[k].sum()), policy) for k, name in enumerate(names)
    )
    differ = np.any(lab != lab[0:1], axis=0)
    idx = np.flatnonzero(differ)
    pairwise = tuple(
        (names[a], names[b], int(np.count_nonzero(lab[a] != lab[b])))
        for a in range(len(names))
        for b in range(a + 1, len(names))
    )
    combos = Counter(map(tuple, lab[:, idx].T.tolist()))
    ordered = sorted(combos.items(), key=lambda kv: (-kv[1], kv[0]))
    patterns = tuple(Pattern(tuple(zip(names, map(_label, combo))), count) for combo, count in ordered)
    first_of: dict[tuple, int] = {}
    for i in idx.tolist():
        first_of.setdefault(tuple(lab[:, i].tolist()), i)
    chosen = [first_of[combo] for combo, _ in ordered][:examples]
    if len(chosen) < examples:
        taken = set(chosen)
        chosen += [i for i in idx.tolist() if i not in taken][: examples - len(chosen)]
    path = ", ".join(f.provenance.path for f in run.files) or run.name
    exs = tuple(
        Example(
            show_key(str(run.keys[i])),
            int(gold[i]),
            trim(run.outputs[i], width),
            tuple(zip(names, (_label(v) for v in lab[:, i].tolist()))),
        )
        for i in chosen
    )
    return FileAudit(path, run.name, len(run), tallies, int(idx.size), pairwise, patterns, exs)


def audit(
    runs: Sequence[Run],
    parsers: Sequence[Parser],
    *,
    policy: Policy = "intersect",
    edge: tuple[str, str] | None = None,
    examples: int = 5,
    width: int = 160,
) -> Audit:
    """Audit every run under ``parsers``; with ``edge`` (old, new run names) also that edge per parser."""
    _check(parsers, policy, examples)
    runs = tuple(runs)
    mats = {run.name: label_matrix(run, parsers) for run in runs}
    files = tuple(
        audit_file(run, parsers, policy=policy, examples=examples, width=width, labels=mats[run.name]) for run in runs
    )
    edge_audit = None
    if edge is not None:
        by_name = {r.name: r for r in runs}
        missing = [n for n in edge if n not in by_name]
        if missing:
            raise UsageError(
                Message(Param("edge"), f" names unknown run(s) {', '.join(map(repr, missing))}; runs: {', '.join(by_name)}")
            )
        old, new = (by_name[n] for n in edge)

        def labelled(run: Run, k: int) -> LabelledRun:
            return LabelledRun(run.name, run.keys, run.gold, mats[run.name][k], parsers[k].name, run.files)

        edge_audit = EdgeAudit(
            old.name,
            new.name,
            tuple(compare(labelled(old, k), labelled(new, k), policy=policy) for k in range(len(parsers))),
        )
    return Audit(tuple(p.name for p in parsers), policy, files, edge_audit)
