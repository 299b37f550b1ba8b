"""Sampling error of judge edges: bootstrap intervals, the clustered McNemar test, small-sample flags (pure).

:class:`Uncertainty` holds the settings a command records (replicates, seed,
cluster key, confidence level, the small-sample threshold);
:func:`edge_uncertainty` computes, for chosen edges of an aligned set, every
figure's bootstrap interval (:mod:`replicate.stats.bootstrap`), Durkalski's
clustered McNemar test and, with at least four runs, the regression rate
expected under errors independent given item difficulty
(:mod:`replicate.stats.independence`).

The cluster of an item is one field of its key (by default the first, the
query id of a TREC key ``query_id / corpus_id``); with a one-field key, or
``cluster=None``, each item is its own cluster (the item bootstrap).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from replicate.judge.align import Aligned
from replicate.judge.model import KEY_SEP
from replicate.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Clusters,
    Interval,
    bootstrap_pairs,
)
from replicate.stats.independence import DifficultyBaseline, difficulty_baseline
from replicate.stats.paired import CLUSTERED_MCNEMAR, chi2_sf_1, chi2_sf_1_log10, mcnemar_clustered
from replicate.stats.policy import Policy

#: Default smallest number of compared items below which an edge or a floor is flagged.
MIN_ITEMS = 100
#: ``cluster`` value asking for the item bootstrap (no cluster key).
ITEM = "item"
EXACT_MCNEMAR_ASSUMES = "the exact McNemar test treats every item as an independent draw"


@dataclass(frozen=True)
class Uncertainty:
    """How sampling error is estimated and when a sample is too small (recorded in outputs).

    ``cluster`` is the key field that groups items (by name, one of
    ``key_fields``), :data:`ITEM` for none, or None for the default: the first
    key field when the key has two or more fields, else none.
    """

    replicates: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    cluster: str | None = None
    key_fields: tuple[str, ...] = ("query_id", "corpus_id")
    confidence_level: float = 0.95
    min_items: int = MIN_ITEMS

    def __post_init__(self) -> None:
        if self.replicates < 1:
            raise ValueError(f"replicates must be a positive integer; got {self.replicates!r}")
        if self.min_items < 0:
            raise ValueError(f"min_items must be >= 0; got {self.min_items!r}")
        if self.cluster not in (None, ITEM) and self.cluster not in self.key_fields:
            raise ValueError(
                f"cluster must be one of the key fields ({', '.join(self.key_fields)}) or {ITEM!r}; got {self.cluster!r}"
            )

    @property
    def cluster_field(self) -> int | None:
        """Index of the key field that groups items; None for the item bootstrap."""
        if self.cluster == ITEM:
            return None
        if self.cluster is None:
            return 0 if len(self.key_fields) >= 2 else None
        return self.key_fields.index(self.cluster)

    def clusters(self, keys: np.ndarray) -> Clusters:
        field = self.cluster_field
        if field is None:
            return Clusters.items(len(keys))
        return Clusters.from_keys(keys, field=field, name=self.key_fields[field], sep=KEY_SEP)

    def shares(self, hits: np.ndarray, counted: np.ndarray, keys: np.ndarray) -> list[Interval]:
        """Bootstrap intervals of each row's share of hits over counted items (rows x items keyed by ``keys``)."""
        from replicate.stats.shares import bootstrap_shares

        return bootstrap_shares(
            hits, counted, clusters=self.clusters(np.asarray(keys)), n_resamples=self.replicates,
            confidence_level=self.confidence_level, seed=self.seed,
        )

    def to_json(self) -> dict:
        field = self.cluster_field
        return {
            "replicates": self.replicates,
            "seed": self.seed,
            "cluster": None if field is None else self.key_fields[field],
            "confidence_level": self.confidence_level,
            "min_items": self.min_items,
        }


@dataclass(frozen=True)
class EdgeUncertainty:
    """One edge's sampling error: an interval per figure, the clustered McNemar test, the difficulty baseline."""

    interval: dict[str, Interval]
    mcnemar_statistic: float
    mcnemar_p: float
    clusters: int
    cluster: str | None
    difficulty_expected: float | None
    difficulty_other_runs: int

    def mcnemar_json(self) -> dict:
        return {
            "statistic": self.mcnemar_statistic,
            "p": self.mcnemar_p,
            "log10_p": chi2_sf_1_log10(self.mcnemar_statistic),  # p below the float range is 0.0; this is not
            "method": CLUSTERED_MCNEMAR if self.cluster is not None else "mcnemar-asymptotic (one item per cluster)",
            "cluster": self.cluster,
            "clusters": self.clusters,
            "note": EXACT_MCNEMAR_ASSUMES + "; this test resamples nothing but allows items of one cluster to be alike",
        }

    def baselines_json(self, cells: Any) -> dict:
        """The classic and the difficulty-aware baseline of the independence ratio, side by side."""
        reg = cells.regression_rate
        exp = self.difficulty_expected
        return {
            "classic": {
                "expected_regression_rate": cells.independent_regression_rate,
                "ratio": cells.independence_ratio,
                "method": "EM_old x (1 - EM_new): errors independent and every item equally hard",
                "interval": {
                    "expected_regression_rate": self.interval["independent_regression_rate"].to_json(),
                    "ratio": self.interval["independence_ratio"].to_json(),
                },
            },
            "given_item_difficulty": {
                "expected_regression_rate": exp,
                "ratio": None if exp is None or exp == 0 or reg is None else reg / exp,
                "method": "errors independent given the item; difficulty from the other runs (leave-pair-out)",
                "other_runs": self.difficulty_other_runs,
                "available": exp is not None,
            },
        }


def edge_uncertainty(
    aligned: Aligned, pairs: Sequence[tuple[int, int]], settings: Uncertainty, *, policy: Policy = "intersect"
) -> list[EdgeUncertainty]:
    """Sampling error of each edge (old, new) of ``aligned`` (one bootstrap for all of them)."""
    pairs = [(int(a), int(b)) for a, b in pairs]
    clusters = settings.clusters(aligned.keys)
    boot = bootstrap_pairs(
        aligned.labels,
        aligned.gold,
        pairs,
        clusters=clusters,
        policy=policy,
        n_resamples=settings.replicates,
        confidence_level=settings.confidence_level,
        seed=settings.seed,
    )
    # one item per cluster: Durkalski's statistic is the classic (b - c)^2 / (b + c), from the totals
    counts = boot.per_cluster if boot.per_cluster is not None else np.asarray(boot.totals)[None, :, :]
    if boot.per_cluster is None:
        b, c = counts[0, :, 1].astype(np.float64), counts[0, :, 2].astype(np.float64)
        stat = np.divide((b - c) ** 2, b + c, out=np.zeros_like(b), where=(b + c) > 0)
        p = chi2_sf_1(stat)
    else:
        stat, p = mcnemar_clustered(counts[:, :, 1], counts[:, :, 2])
    diff: DifficultyBaseline = difficulty_baseline(aligned.labels, aligned.gold, pairs, policy=policy)
    return [
        EdgeUncertainty(
            interval=iv,
            mcnemar_statistic=float(stat[k]),
            mcnemar_p=float(p[k]),
            clusters=clusters.count,
            cluster=clusters.name,
            difficulty_expected=diff.value(k),
            difficulty_other_runs=diff.other_runs,
        )
        for k, iv in enumerate(boot.intervals())
    ]


def em_intervals(aligned: Aligned, settings: Uncertainty, *, policy: Policy = "intersect") -> list[Interval]:
    """Each aligned run's EM (correct over the items counted under ``policy``) with its bootstrap interval.

    The same clusters, replicates and seed as the edges' bootstrap (:func:`edge_uncertainty`).
    """
    from replicate.judge.pairs import outcomes

    right, counted = outcomes(aligned, policy)
    return settings.shares(right & counted, counted, aligned.keys)


def small_sample(n: int, settings: Uncertainty | None) -> bool:
    return settings is not None and n < settings.min_items
