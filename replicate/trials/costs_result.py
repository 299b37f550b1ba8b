"""Result objects of ``replicate costs`` (frozen; see :mod:`replicate.trials.costs` for every definition).

``to_json()`` gives shares as fractions (0-1), token counts as numbers, money in
the prices file's currency, and ``None`` wherever a figure is undefined (no
trial reports that usage; no source tokens to divide by) - never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from replicate.provenance import FileProvenance
from replicate.stats.bootstrap import Interval
from replicate.trials.prices import Prices

#: Summary figures of a distribution, in the order printed.
STATS: tuple[str, ...] = ("mean", "median", "p90", "p99", "max")


@dataclass(frozen=True)
class Distribution:
    """One kind of tokens over trials (or items): ``n`` values reported, ``null`` not reported (left out)."""

    n: int
    null: int
    mean: float | None = None
    median: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None

    @property
    def null_share(self) -> float | None:
        total = self.n + self.null
        return None if total == 0 else self.null / total

    def stat(self, name: str) -> float | None:
        return getattr(self, name)

    def to_json(self) -> dict:
        return {"n": self.n, "null": self.null, "null_share": self.null_share, **{s: self.stat(s) for s in STATS}}


@dataclass(frozen=True)
class ModelCost:
    """One model in one benchmark (None: benchmarks pooled): per kind, tokens per trial and per item."""

    model: str
    benchmark: str | None
    trials: int  # non-error trials
    api_errors: int  # left out: an API error has no response
    items: int  # items with a non-error trial
    per_trial: dict[str, Distribution]
    per_item: dict[str, Distribution]
    #: per kind, each item's mean (NaN: no trial reports it), for the plots; not in JSON
    item_values: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> dict:
        return {"model": self.model, "benchmark": self.benchmark, "trials": self.trials,
                "api_errors": self.api_errors, "items": self.items,
                "per_trial": {k: d.to_json() for k, d in self.per_trial.items()},
                "per_item": {k: d.to_json() for k, d in self.per_item.items()}}


def _iv(iv: Interval | None) -> dict | None:
    return None if iv is None else iv.to_json()


@dataclass(frozen=True)
class ClassChange:
    """The paired change over the items of one class of the edge (improved, regressed, ...)."""

    items: int  # items of the class
    paired: int  # of which both sides report this usage
    median_change: float | None
    median_ratio: float | None
    more: int  # paired items costing more on the target
    #: median_change, median_ratio, share_more: the cell's bootstrap replicates, each item keeping its class
    intervals: dict[str, Interval] = field(default_factory=dict)

    @property
    def share_more(self) -> float | None:
        return None if self.paired == 0 else self.more / self.paired

    def to_json(self) -> dict:
        return {"items": self.items, "paired": self.paired, "median_change": self.median_change,
                "median_ratio": self.median_ratio, "more": self.more, "share_more": self.share_more,
                "interval": {k: _iv(v) for k, v in self.intervals.items()}}


@dataclass(frozen=True)
class Change:
    """One kind of tokens on one edge cell: per item, target mean minus source mean, and their ratio."""

    paired: int  # items where both sides report this usage
    no_usage: int  # cell items left out: a side reports none
    median_change: float | None
    median_ratio: float | None
    ratio_items: int  # paired items with source > 0 (the ratio's items)
    zero_source: int  # paired items left out of the ratio: the source used none
    more: int
    less: int
    same: int
    per_correct_source: float | None  # tokens over the trials reporting them / correct ones among those trials
    per_correct_target: float | None
    by_class: dict[str, ClassChange]
    intervals: dict[str, Interval] = field(default_factory=dict)

    @property
    def share_more(self) -> float | None:
        return None if self.paired == 0 else self.more / self.paired

    def to_json(self) -> dict:
        return {
            "paired_items": self.paired, "no_usage_items": self.no_usage,
            "median_change": self.median_change, "median_ratio": self.median_ratio,
            "ratio_items": self.ratio_items, "zero_source_items": self.zero_source,
            "more": self.more, "less": self.less, "same": self.same, "share_more": self.share_more,
            "per_correct": {"source": self.per_correct_source, "target": self.per_correct_target},
            "interval": {k: _iv(v) for k, v in self.intervals.items()},
            "by_class": {c: v.to_json() for c, v in self.by_class.items()},
        }


@dataclass(frozen=True)
class EdgeCost:
    """One edge x benchmark cell (the items ``replicate items`` classifies there), per kind a :class:`Change`."""

    source: str
    target: str
    benchmark: str | None
    items: int
    excluded: dict[str, int]  # as in ``items``: missing on a side, or only API errors there
    accuracy_source: float | None
    accuracy_target: float | None
    changes: dict[str, Change]
    #: the accuracies' intervals as ``items`` gives them (normal over items), by side
    accuracy_intervals: dict[str, Interval] = field(default_factory=dict)
    #: per kind, the (source, target) item means over the cell's items, and each item's class code; not in JSON
    item_pairs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False, compare=False)
    classes: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def edge(self) -> str:
        return f"{self.source}:{self.target}"

    def to_json(self) -> dict:
        return {"source": self.source, "target": self.target, "benchmark": self.benchmark, "items": self.items,
                "excluded": self.excluded,
                "accuracy": {"source": self.accuracy_source, "target": self.accuracy_target,
                             "interval": {k: _iv(v) for k, v in self.accuracy_intervals.items()}},
                "by_kind": {k: c.to_json() for k, c in self.changes.items()}}


@dataclass(frozen=True)
class CostsResult:
    """Everything ``replicate costs`` reports; :meth:`median_tokens` and :meth:`edge_median_ratio` look figures up."""

    usage_reported: bool
    usage_columns: tuple[str, ...]
    kinds: tuple[str, ...]
    models: tuple[ModelCost, ...]
    edges: tuple[EdgeCost, ...]
    by: str
    classification: dict[str, Any] | None  # eps, alpha, ci of the item classes (None without edges)
    bootstrap: dict[str, Any]  # replicates, seed, cluster, confidence_level
    prices: Prices | None
    unpriced: tuple[str, ...]  # models of the table the prices file does not price
    input: dict
    diagnostics: dict = field(default_factory=dict)
    provenance: FileProvenance | None = None

    def median_tokens(self, model: str, benchmark: str | None, kind: str,
                      per: Literal["trial", "item"] = "trial") -> float | None:
        """The median of ``kind`` per trial (or per item) of ``model`` in ``benchmark`` (None: pooled); KeyError if absent."""
        for m in self.models:
            if m.model == model and m.benchmark == benchmark:
                return (m.per_trial if per == "trial" else m.per_item)[kind].median
        raise KeyError(f"no model {model!r} in benchmark {benchmark!r}")

    def edge_median_ratio(self, edge: str, benchmark: str | None, kind: str) -> float | None:
        """The median per-item ratio target / source of ``kind`` on ``edge`` (``SRC:TGT``); KeyError if absent."""
        for e in self.edges:
            if e.edge == edge and e.benchmark == benchmark:
                return e.changes[kind].median_ratio
        raise KeyError(f"no edge {edge!r} in benchmark {benchmark!r}")

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "usage_reported": self.usage_reported,
            "usage_columns": list(self.usage_columns),
            "kinds": list(self.kinds),
            "by": self.by,
        }
        if not self.usage_reported:
            out["reason"] = NO_USAGE
        out.update({
            "models": [m.to_json() for m in self.models],
            "edges": [e.to_json() for e in self.edges],
            "classification": self.classification,
            "bootstrap": self.bootstrap,
            "prices": None if self.prices is None else self.prices.to_json(),
            "unpriced_models": list(self.unpriced),
            "input": self.input,
        })
        return out


NO_USAGE = ("no non-error trial reports token usage (prompt_tokens, completion_tokens and reasoning_tokens are "
            "absent or null), as in released responses without usage: there are no cost figures")
