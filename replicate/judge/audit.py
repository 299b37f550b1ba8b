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

With :class:`~replicate.judge.uncertainty.Uncertainty` settings every rate
gets a bootstrap interval over the file's items (clustered by the settings'
key field): each parser's EM and unparsed share
(:func:`replicate.stats.shares.bootstrap_shares`), the share of items whose
labels differ (overall and per pair of parsers), and every figure of the edge
under each parser (the edge's own bootstrap, as in ``compare``). Each
difference between a parser and the first one (its EM and unparsed share, and
every edge figure) gets the interval of the paired difference: a joint
bootstrap (:mod:`replicate.stats.differences`) draws the items (clusters) once
per replicate for all parsers, so the interval is not two independent ones.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from replicate.errors import Message, Param, UsageError
from replicate.judge.align import align, show_key
from replicate.judge.compare import Comparison, compare
from replicate.judge.model import LabelledRun, Run, readonly
from replicate.judge.pairs import Policy
from replicate.judge.uncertainty import Uncertainty
from replicate.labels import LabelSet, label_name
from replicate.parsing import UNPARSED, Parser
from replicate.stats.bootstrap import Clusters, Interval
from replicate.stats.differences import edge_differences, share_differences
from replicate.stats.fourcell import as_float, figure_names, float_ratio
from replicate.stats.gold import accuracy
from replicate.stats.policy import check_policy


def edge_figures() -> tuple[str, ...]:
    """What an audit reports the movement of between parsers: ``n`` and every edge figure of the one table."""
    return ("n", *figure_names("edge"))


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


def _label(v: int, label_set: LabelSet | None = None) -> int | str | None:
    """A label as the audit shows it: None when unparsed, else its name when the set names its labels."""
    return None if v == UNPARSED else label_name(int(v), label_set)


@dataclass(frozen=True, slots=True)
class ParserTally:
    """What one parser made of one file."""

    parser: str
    items: int
    parsed: int
    correct: int
    policy: Policy
    #: Bootstrap intervals of ``em`` and ``unparsed_rate`` (with uncertainty settings).
    interval: dict[str, Interval] | None = None

    @property
    def unparsed(self) -> int:
        return self.items - self.parsed

    @property
    def unparsed_rate(self) -> float | None:
        """Share of the file's outputs the parser leaves unparsed."""
        return float_ratio(self.unparsed, self.items)

    @property
    def em(self) -> float | None:
        """EM under the policy: over parsed items (intersect) or all items (wrong)."""
        den = self.parsed if self.policy == "intersect" else self.items
        return as_float(accuracy(self.correct, den))

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "parsed": self.parsed, "unparsed": self.unparsed, "unparsed_rate": self.unparsed_rate,
            "correct": self.correct, "em": self.em,
        }
        if self.interval is not None:
            out["interval"] = {k: v.to_json() for k, v in self.interval.items()}
        return out


@dataclass(frozen=True, slots=True)
class ParserDelta:
    """How one parser's EM and unparsed share differ from the first parser's on one file."""

    parser: str
    reference: str  # the first parser
    em: float | None
    unparsed_rate: float | None
    #: Joint-bootstrap intervals of the two differences (with uncertainty settings).
    interval: dict[str, Interval] | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"reference": self.reference, "em": self.em, "unparsed_rate": self.unparsed_rate}
        if self.interval is not None:
            out["interval"] = {k: v.to_json() for k, v in self.interval.items()}
        return out


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


@dataclass(frozen=True, slots=True)
class Example:
    """One item the parsers read differently."""

    key: str
    gold: int | str  # by name when the first parser's label set names its labels
    output: str | None  # trimmed
    labels: tuple[tuple[str, int | str | None], ...]

    def to_json(self) -> dict:
        return {"key": self.key, "gold": self.gold, "output": self.output, "labels": dict(self.labels)}


@dataclass(frozen=True, slots=True)
class Pattern:
    """A combination of labels (one per parser) and on how many items it occurs."""

    labels: tuple[tuple[str, int | str | None], ...]
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
    #: Bootstrap intervals of the differ shares: ``labels_differ_rate`` first, then one per parser pair (in order).
    differ_intervals: tuple[Interval, ...] | None = None
    settings: Uncertainty | None = None
    #: Each parser after the first against the first: EM and unparsed share differences.
    deltas: tuple[ParserDelta, ...] = ()

    @property
    def labels_differ_rate(self) -> float | None:
        """Share of the file's items on which the parsers' labels differ (unparsed a label of its own)."""
        return float_ratio(self.labels_differ, self.items)

    def to_json(self) -> dict:
        ivs = self.differ_intervals
        pairwise = []
        for k, (a, b, n) in enumerate(self.pairwise_differ):
            row: dict[str, Any] = {"a": a, "b": b, "differ": n, "differ_rate": float_ratio(n, self.items)}
            if ivs is not None:
                row["interval"] = {"differ_rate": ivs[k + 1].to_json()}
            pairwise.append(row)
        out: dict[str, Any] = {
            "path": self.path,
            "run": self.run,
            "items": self.items,
            "parsers": {t.parser: t.to_json() for t in self.parsers},
            "labels_differ": self.labels_differ,
            "labels_differ_rate": self.labels_differ_rate,
            "pairwise_differ": pairwise,
            "differences": {d.parser: d.to_json() for d in self.deltas},
            "patterns": [p.to_json() for p in self.patterns],
            "examples": [e.to_json() for e in self.examples],
        }
        if ivs is not None:
            out["interval"] = {"labels_differ_rate": ivs[0].to_json()}
        if self.settings is not None:
            out["uncertainty"] = self.settings.to_json()
        return out


@dataclass(frozen=True)
class EdgeAudit:
    """An edge old -> new under each parser, and how its figures move."""

    old: str
    new: str
    comparisons: tuple[Comparison, ...]  # one per parser, in parser order
    #: Per parser after the first, joint-bootstrap intervals of its figures minus the first parser's.
    delta_intervals: tuple[dict[str, Interval], ...] | None = None

    def delta_interval(self, parser: str, figure: str) -> Interval | None:
        """The interval of ``figure`` under ``parser`` minus under the first parser (None without one)."""
        if self.delta_intervals is None:
            return None
        k = [c.parser for c in self.comparisons].index(parser) - 1
        return None if k < 0 else self.delta_intervals[k].get(figure)

    def differences(self) -> dict[str, dict]:
        """parser -> {"reference": first parser, figure: delta, ..., "interval": {figure: interval}}."""
        moves = self.moves()
        first = self.comparisons[0].parser
        out: dict[str, dict] = {}
        for k, c in enumerate(self.comparisons[1:]):
            row: dict[str, Any] = {"reference": first, **{fig: moves[fig]["delta"][c.parser] for fig in edge_figures()}}
            if self.delta_intervals is not None:
                row["interval"] = {fig: iv.to_json() for fig, iv in self.delta_intervals[k].items()}
            out[c.parser] = row
        return out

    def moves(self) -> dict[str, dict]:
        """figure -> {parser: value, ..., "delta": {parser: value - first parser's value}}."""
        out: dict[str, dict] = {}
        base_parser = self.comparisons[0].parser
        for fig in edge_figures():
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
            "differences": self.differences(),
        }


def _figure(c: Comparison, fig: str) -> float | int | None:
    return c.cells.n if fig == "n" else c.cells.value(fig)


@dataclass(frozen=True)
class Audit:
    """A parser audit over several files, with an optional edge."""

    parsers: tuple[str, ...]
    unparsed_policy: Policy
    files: tuple[FileAudit, ...]
    edge: EdgeAudit | None = None
    settings: Uncertainty | None = None

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "parsers": list(self.parsers),
            "unparsed_policy": self.unparsed_policy,
            "files": [f.to_json() for f in self.files],
            "uncertainty": None if self.settings is None else self.settings.to_json(),
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


#: Labels one run under one parser (the command line's goes through the label cache).
LabelFn = Callable[[Run, Parser], np.ndarray]


def label_matrix(run: Run, parsers: Sequence[Parser], label: LabelFn | None = None) -> np.ndarray:
    """Labels of ``run`` under each parser: int8 array (n_parsers, n_items), UNPARSED = -1.

    ``label`` gives one parser's labels (default: parse the outputs).
    """
    if run.labels is not None:
        path = ", ".join(f.provenance.path for f in run.files) or run.name
        raise UsageError(f"{path}: this file holds labels, not raw outputs (EXAM grades): there is nothing to parse")
    rows = [p.parse_many(run.outputs) if label is None else label(run, p) for p in parsers]
    return readonly(np.stack(rows).astype(np.int8, copy=False))


def audit_file(
    run: Run,
    parsers: Sequence[Parser],
    *,
    policy: Policy = "intersect",
    examples: int = 5,
    width: int = 160,
    labels: np.ndarray | None = None,
    uncertainty: Uncertainty | None = None,
) -> FileAudit:
    """Audit one run of raw outputs under two or more parsers (see module doc).

    ``labels`` may pass a pre-computed :func:`label_matrix` to avoid parsing twice;
    ``uncertainty`` settings add an interval to every rate.
    """
    _check(parsers, policy, examples)
    lab = label_matrix(run, parsers) if labels is None else labels
    names = [p.name for p in parsers]
    gold = run.gold
    parsed = lab != UNPARSED
    correct = (lab == gold[None, :]) & parsed
    differ = np.any(lab != lab[0:1], axis=0)
    idx = np.flatnonzero(differ)
    pair_idx = [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))]
    pair_differ = np.array([lab[a] != lab[b] for a, b in pair_idx]).reshape(len(pair_idx), len(run))
    pairwise = tuple((names[a], names[b], int(np.count_nonzero(d))) for (a, b), d in zip(pair_idx, pair_differ))
    intervals: list[dict[str, Interval] | None] = [None] * len(names)
    delta_ivs: list[dict[str, Interval] | None] = [None] * (len(names) - 1)
    differ_ivs = None
    if uncertainty is not None and uncertainty.resampled:
        every = np.ones_like(parsed)
        counted = parsed if policy == "intersect" else every
        hits_all = np.vstack([differ, pair_differ])
        em_ivs, unparsed_ivs, differ_ivs = (
            uncertainty.shares(hits, den, run.keys)
            for hits, den in ((correct, counted), (~parsed, every), (hits_all, np.ones_like(hits_all)))
        )
        intervals = [{"em": e, "unparsed_rate": u} for e, u in zip(em_ivs, unparsed_ivs)]
        clusters = uncertainty.clusters(run.keys)
        em_d, unparsed_d = (
            _joint_shares(hits, den, clusters, uncertainty) for hits, den in ((correct, counted), (~parsed, every))
        )
        delta_ivs = [{"em": e, "unparsed_rate": u} for e, u in zip(em_d, unparsed_d)]
    tallies = tuple(
        ParserTally(name, len(run), int(parsed[k].sum()), int(correct[k].sum()), policy, intervals[k])
        for k, name in enumerate(names)
    )
    deltas = tuple(
        ParserDelta(t.parser, names[0], _minus(t.em, tallies[0].em), _minus(t.unparsed_rate, tallies[0].unparsed_rate), iv)
        for t, iv in zip(tallies[1:], delta_ivs)
    )
    combos = Counter(map(tuple, lab[:, idx].T.tolist()))
    ordered = sorted(combos.items(), key=lambda kv: (-kv[1], kv[0]))
    sets = [p.label_set for p in parsers]
    patterns = tuple(Pattern(tuple(zip(names, map(_label, combo, sets))), count) for combo, count in ordered)
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
            label_name(int(gold[i]), sets[0]) if gold[i] >= 0 else int(gold[i]),
            trim(run.outputs[i], width),
            tuple(zip(names, map(_label, lab[:, i].tolist(), sets))),
        )
        for i in chosen
    )
    return FileAudit(
        path, run.name, len(run), tallies, int(idx.size), pairwise, patterns, exs,
        None if differ_ivs is None else tuple(differ_ivs), uncertainty, deltas,
    )


def _joint_shares(hits: np.ndarray, counted: np.ndarray, clusters: Clusters, settings: Uncertainty) -> list[Interval]:
    """Intervals of each row's share minus the first row's (the rows read the same items; one draw for all)."""
    return share_differences(
        hits, counted, clusters=clusters, n_resamples=settings.replicates,
        confidence_level=settings.confidence_level, seed=settings.seed,
    )


def edge_delta_intervals(
    old: LabelledRun, new: LabelledRun, labels: Sequence[tuple[np.ndarray, np.ndarray]], settings: Uncertainty,
    *, policy: Policy,
) -> tuple[dict[str, Interval], ...]:
    """Joint-bootstrap intervals of each parser's edge figures minus the first parser's.

    ``old`` and ``new`` (read by the first parser) fix the shared items; ``labels``
    holds each parser's (old, new) labels in the runs' own item order.
    """
    aligned = align([old, new])
    rows = []
    for run in (old, new):
        index = {k: i for i, k in enumerate(run.keys.tolist())}
        rows.append(np.fromiter((index[k] for k in aligned.keys.tolist()), dtype=np.int64, count=aligned.n_items))
    stacked = np.stack([lab[r] for pair in labels for lab, r in zip(pair, rows)])
    ivs = edge_differences(
        stacked, aligned.gold, [(2 * k, 2 * k + 1) for k in range(len(labels))],
        clusters=settings.clusters(aligned.keys), policy=policy, n_resamples=settings.replicates,
        confidence_level=settings.confidence_level, seed=settings.seed,
    )
    return tuple(ivs)


def audit(
    runs: Sequence[Run],
    parsers: Sequence[Parser],
    *,
    policy: Policy = "intersect",
    edge: tuple[str, str] | None = None,
    examples: int = 5,
    width: int = 160,
    uncertainty: Uncertainty | None = None,
    label: LabelFn | None = None,
) -> Audit:
    """Audit every run under ``parsers``; with ``edge`` (old, new run names) also that edge per parser.

    With ``uncertainty`` settings every rate, the edge's included, gets a bootstrap interval.
    ``label`` gives a run's labels under one parser (default: parse its outputs; the command
    passes the loader's, through the label cache).
    """
    _check(parsers, policy, examples)
    runs = tuple(runs)
    mats = {run.name: label_matrix(run, parsers, label) for run in runs}
    files = tuple(
        audit_file(
            run, parsers, policy=policy, examples=examples, width=width, labels=mats[run.name], uncertainty=uncertainty
        )
        for run in runs
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

        comparisons = tuple(
            compare(labelled(old, k), labelled(new, k), policy=policy, uncertainty=uncertainty, agreement=False)
            for k in range(len(parsers))
        )
        deltas = None
        if uncertainty is not None and uncertainty.resampled:
            pairs = [(mats[old.name][k], mats[new.name][k]) for k in range(len(parsers))]
            deltas = edge_delta_intervals(labelled(old, 0), labelled(new, 0), pairs, uncertainty, policy=policy)
        edge_audit = EdgeAudit(old.name, new.name, comparisons, deltas)
    return Audit(tuple(p.name for p in parsers), policy, files, edge_audit, uncertainty)
