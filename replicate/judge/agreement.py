"""Agreement of judge runs with gold and with each other: kappa, Scott's pi, alpha, tau-b, rho (pure).

Over the aligned items (:mod:`replicate.judge.align`), each compared pair
(a run against gold, or two runs) gets every figure of
:func:`replicate.stats.agreement.all_figures` on the labels as read and, for
each threshold ``t`` asked for, on the labels binarized at ``t`` (``>= t`` is
1), each with the cluster-bootstrap interval every other figure has
(:mod:`replicate.stats.agreement_boot`, the same cluster draws for one seed).

Unparsed outputs follow the unparsed policy: under ``intersect`` an item
unparsed on either side leaves every figure of that pair; under ``wrong`` it
stays in the nominal figures (unweighted kappa, Scott's pi, nominal alpha) as
a label of its own that equals no gold label, while the figures that need a
place on the scale (weighted kappa, ordinal/interval/ratio alpha, tau-b, rho)
use the items parsed on both sides, as MAE and Pearson's r do. Each figure
records the items it was computed on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from replicate.errors import Message, Param, UsageError
from replicate.judge.align import Aligned
from replicate.judge.model import NO_GOLD
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import UNPARSED
from replicate.stats.agreement import Figure, all_figures, figure_values
from replicate.stats.agreement_boot import agreement_intervals, cluster_tables
from replicate.stats.bootstrap import Clusters, Interval
from replicate.stats.min_items import too_few_items
from replicate.stats.policy import Policy, check_policy

#: The index that stands for gold in a pair of sides.
GOLD = -1
UNORDERED = "categorical labels have no order"


@dataclass(frozen=True)
class AgreementRow:
    """One compared pair (``left`` against ``right``) on one reading of the labels (as read, or binarized)."""

    left: str
    right: str
    binarize: int | None
    items: int  # aligned items the pair could use (with gold, for a run against gold)
    parsed: int  # items parsed on both sides
    unparsed: tuple[int, int]  # unparsed items of each side
    values: dict[str, float | None]  # figure column -> value (None: undefined or absent)
    counted: dict[str, int]  # figure column -> items it was computed on
    intervals: dict[str, Interval] | None = None
    absent: dict[str, str] = field(default_factory=dict)  # figure column -> why it cannot be given
    small: str | None = None  # the small-sample flag's words, else None

    def value(self, column: str) -> float | None:
        return self.values[column]

    def counted_json(self) -> dict:
        """Items behind the nominal figures (unweighted kappa, pi, nominal alpha) and behind the others."""
        nominal = [n for c, n in self.counted.items() if Figure.from_column(c).nominal]
        ordered = [n for c, n in self.counted.items() if not Figure.from_column(c).nominal]
        return {"nominal": nominal[0] if nominal else None, "ordered": ordered[0] if ordered else None}

    def to_json(self) -> dict:
        """The figures flat by column name (as compare's JSON), each beside its interval under ``interval``."""
        out: dict[str, Any] = {
            "left": self.left, "right": self.right, "binarize": self.binarize, "items": self.items,
            "parsed": self.parsed, "unparsed": {"left": self.unparsed[0], "right": self.unparsed[1]},
            **self.values, "counted": self.counted_json(),
        }
        if self.intervals is not None:  # no interval without its figure
            out["interval"] = {c: (self.intervals[c].to_json() if v is not None else None) for c, v in self.values.items()}
        if self.absent:
            out["absent"] = dict(self.absent)
        out["small_sample"] = self.small is not None
        if self.small:
            out["flag"] = self.small
        return out


@dataclass(frozen=True)
class AgreementReport:
    """Every compared pair's agreement figures, with how they were computed."""

    rows: tuple[AgreementRow, ...]
    columns: tuple[str, ...]
    thresholds: tuple[int, ...]
    domain: tuple[int, ...]
    policy: Policy
    parsers: tuple[str, ...]
    readers: tuple[str, ...]
    runs: tuple[dict, ...]
    settings: Uncertainty | None
    shared_items: int = 0  # items every run (and gold, when compared with it) has

    def row(self, left: str, right: str = "gold", binarize: int | None = None) -> AgreementRow:
        """The row of ``left`` against ``right`` (either order) on the labels binarized at ``binarize``."""
        for r in self.rows:
            if {r.left, r.right} == {left, right} and r.binarize == binarize:
                return r
        raise KeyError((left, right, binarize))

    def value(self, column: str, left: str, right: str = "gold", binarize: int | None = None) -> float | None:
        """One figure (by column, e.g. ``krippendorff_alpha_ordinal``): the lookup a verify metric needs."""
        return self.row(left, right, binarize).value(column)

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "shared_items": self.shared_items,
            "figures": list(self.columns), "binarize": list(self.thresholds), "domain": list(self.domain),
            "unparsed_policy": self.policy, "parser": " + ".join(self.parsers), "reader": " + ".join(self.readers),
            "runs": list(self.runs), "rows": [r.to_json() for r in self.rows],
        }
        if self.settings is not None:
            out["uncertainty"] = self.settings.to_json()
        return out


def value_domain(aligned: Aligned, *, with_gold: bool) -> tuple[tuple[int, ...], bool]:
    """The ordered codes labels can take (the runs' label sets, and every label and gold grade seen), and
    whether the labels are ordered (no categorical label set)."""
    seen = set(np.unique(aligned.labels[aligned.labels != UNPARSED]).tolist())
    if with_gold:
        seen |= set(np.unique(aligned.gold[aligned.gold != NO_GOLD]).tolist())
    ordered = True
    for run in aligned.runs:
        if run.label_set is not None:
            seen |= set(run.label_set.codes)
            ordered = ordered and run.label_set.is_ordinal
    return tuple(sorted(int(v) for v in seen)), ordered


def _codes(side: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Codes of one run's labels: the position in ``domain``, ``len(domain)`` for unparsed."""
    side = np.asarray(side, dtype=np.int64)
    missing = side == UNPARSED
    return np.where(missing, len(domain), np.searchsorted(domain, np.where(missing, domain[0], side)))


def _gold_codes(gold: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Codes of gold: the position in ``domain``; ``len(domain) + 1`` (left out) for an item without gold."""
    gold = np.asarray(gold, dtype=np.int64)
    absent = gold == NO_GOLD
    return np.where(absent, len(domain) + 1, np.searchsorted(domain, np.where(absent, domain[0], gold)))


def agreement_rows(
    aligned: Aligned,
    pairs: Sequence[tuple[int, int]],
    *,
    thresholds: Sequence[int] = (),
    policy: Policy = "intersect",
    settings: Uncertainty | None = None,
    names: Sequence[tuple[str, str]] | None = None,
) -> list[AgreementRow]:
    """Rows for each pair of sides ``(i, j)`` (run indices; :data:`GOLD` for gold) and each reading.

    ``names`` overrides the sides' names in the rows (compare says old, new, gold).
    """
    check_policy(policy)
    if not pairs:
        return []
    domain_t, ordered = value_domain(aligned, with_gold=any(GOLD in p for p in pairs))
    if not domain_t:
        domain_t = (0,)
    if thresholds and not ordered:
        raise UsageError("--binarize needs ordered labels (grades); these runs' labels are categorical")
    domain = np.array(domain_t, dtype=np.int64)
    clusters = settings.clusters(aligned.keys) if settings is not None else None
    per_cluster = _pair_tables(aligned, pairs, domain, clusters or Clusters.items(aligned.n_items))
    readings: list[int | None] = [None, *thresholds]
    figures = [f for t in readings for f in all_figures(t)]
    totals = per_cluster.sum(axis=0)
    values = {f: figure_values(totals, f, domain, policy=policy) for f in figures}
    intervals = None
    if settings is not None and settings.resampled and clusters is not None:
        intervals = agreement_intervals(
            per_cluster, figures, domain, clusters=clusters, policy=policy, n_resamples=settings.replicates,
            confidence_level=settings.confidence_level, seed=settings.seed,
        )
    shown = names or [(_name(aligned, i), _name(aligned, j)) for i, j in pairs]
    min_items = settings.min_items if settings is not None else 0
    rows = []
    for p, (left, right) in enumerate(shown):
        table = totals[p]
        parsed = int(table[:-1, :-1].sum())
        small = too_few_items(f"{left} vs {right}:", parsed, min_items, intervals=intervals is not None)
        for t in readings:
            figs = [f for f in figures if f.binarize == t]
            absent = {} if ordered else {f.column: UNORDERED for f in figs if not f.nominal}
            rows.append(AgreementRow(
                left, right, t, int(table.sum()), parsed, (int(table[-1, :].sum()), int(table[:, -1].sum())),
                values={f.column: None if f.column in absent or np.isnan(values[f][p]) else float(values[f][p])
                        for f in figs},
                counted={f.column: int(table.sum()) if policy == "wrong" and f.nominal else parsed for f in figs},
                intervals=None if intervals is None else {f.column: intervals[p][figures.index(f)] for f in figs},
                absent=absent, small=small,
            ))
    return rows


def _pair_tables(aligned: Aligned, pairs: Sequence[tuple[int, int]], domain: np.ndarray, clusters: Clusters) -> np.ndarray:
    """Per cluster and pair, the table ``(G, P, V + 1, V + 1)`` over the domain and the unparsed slot.

    Codes are positions in the domain, then the unparsed slot, then a slot for an item without gold,
    which is left out of the gold rows (sliced off).
    """
    codes = np.stack([_codes(aligned.labels[i], domain) if i != GOLD else _gold_codes(aligned.gold, domain)
                      for p in pairs for i in p])
    size = len(domain) + 1
    return cluster_tables(codes[0::2], codes[1::2], size + 1, clusters)[..., :size, :size]


def _name(aligned: Aligned, i: int) -> str:
    return "gold" if i == GOLD else aligned.names[i]


def check_thresholds(thresholds: Sequence[int], domain: Sequence[int]) -> None:
    """Refuse a threshold that cannot binarize labels of ``domain`` (their values, sorted): ``label >= t`` splits
    them in two only for ``min < t <= max``; any other ``t`` (a huge number, a grade off the scale) makes every
    label 0 or every label 1, and every figure undefined."""
    if not domain:
        return
    lo, hi = domain[0], domain[-1]
    bad = [t for t in thresholds if not lo < t <= hi]
    if bad:
        shown = ", ".join(map(str, domain)) if len(domain) <= 12 else f"{lo} to {hi}"
        allowed = f"only {lo + 1}..{hi} split them" if hi > lo + 1 else (f"only {hi} splits them" if hi > lo else "none splits them")
        raise UsageError(Message(Param("thresholds"), f" {', '.join(map(str, bad))}: {'not a threshold' if len(bad) == 1 else 'not thresholds'} of these labels "
                                 f"(label >= T is 1): their values are {shown}, and {allowed}; another T makes "
                                 "every label 0 or every label 1"))


def agreement_report(
    aligned: Aligned,
    *,
    gold: bool = True,
    pairs: bool = False,
    thresholds: Sequence[int] = (),
    policy: Policy = "intersect",
    settings: Uncertainty | None = None,
) -> AgreementReport:
    """Each run against gold (``gold``) and, with ``pairs``, every two runs against each other."""
    n = len(aligned.runs)
    sides = ([(i, GOLD) for i in range(n)] if gold else []) + ([(i, j) for i in range(n) for j in range(i + 1, n)]
                                                               if pairs else [])
    if not sides:
        raise UsageError("nothing to compare: give --gold (runs against gold) or --pairs with two or more runs")
    if aligned.n_items == 0:
        sides = []  # the command says the runs share no item
    domain, ordered = value_domain(aligned, with_gold=gold)
    if sides and ordered:  # categorical labels: agreement_rows says --binarize needs grades
        check_thresholds(thresholds, domain)
    rows = agreement_rows(aligned, sides, thresholds=thresholds, policy=policy, settings=settings)
    runs = tuple({"name": r.name, "items": len(r), "unparsed": r.unparsed, "parser": r.parser,
                  "files": [f.to_json() for f in r.files]} for r in aligned.runs)
    return AgreementReport(
        tuple(rows), tuple(f.column for f in all_figures()), tuple(thresholds), domain, policy,
        aligned.parsers, aligned.readers, runs, settings, aligned.n_items,
    )


def edge_agreement(aligned: Aligned, i: int, j: int, *, policy: Policy, settings: Uncertainty | None) -> tuple[AgreementRow, ...]:
    """An edge's agreement rows as compare gives them: old vs gold, new vs gold (when there is gold), old vs new."""
    has_gold = bool(np.any(aligned.gold != NO_GOLD))
    pairs = ([(i, GOLD), (j, GOLD)] if has_gold else []) + [(i, j)]
    names = ([("old", "gold"), ("new", "gold")] if has_gold else []) + [("old", "new")]
    return tuple(agreement_rows(aligned, pairs, policy=policy, settings=settings, names=names))
