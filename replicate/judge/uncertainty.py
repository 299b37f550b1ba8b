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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from replicate.background import beside, beside_process
from replicate.judge.align import Aligned
from replicate.judge.model import KEY_SEP
from replicate.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Clusters,
    Interval,
    PairBootstrap,
    bootstrap_pairs,
    cluster_category_counts,
    cluster_weights,
    interval_list,
    percentile_bounds,
)
from replicate.stats.fourcell import INDEPENDENCE_RATIO, INDEPENDENT_REGRESSION_RATE
from replicate.stats.independence import (
    DIFFICULTY_METHOD,
    DifficultyBaseline,
    difficulty_baseline,
    difficulty_count_chunks,
    difficulty_counts,
    fit_difficulty,
    has_difficulty,
)
from replicate.stats.independence_boot import (
    LOG_T,
    cluster_difficulty,
    item_difficulty_replicates,
    log_t_bounds,
)
from replicate.stats.min_items import MIN_ITEMS as MIN_ITEMS  # the one threshold (stats/min_items.py)
from replicate.stats.paired import CLUSTERED_MCNEMAR, chi2_sf_1, chi2_sf_1_log10, mcnemar_clustered
from replicate.stats.policy import Policy

#: ``cluster`` value asking for the item bootstrap (no cluster key).
ITEM = "item"
EXACT_MCNEMAR_ASSUMES = "the exact McNemar test treats every item as an independent draw"
#: The difficulty baseline is refit in each replicate, at a cost that grows with the other runs' counts
#: (bins, one per count 0..m): at most this many (edge, replicate, bin) refits, and never fewer than
#: :data:`MIN_DIFFICULTY_REPLICATES` replicates (the first of the edges' draws). The ratio's log-t interval
#: reads only the replicates' spread (its relative error with 100 replicates is about 7%).
DIFFICULTY_REFITS = 400_000
MIN_DIFFICULTY_REPLICATES = 100
#: Past this many (edge, replicate, bin) refits at :data:`MIN_DIFFICULTY_REPLICATES` replicates the default
#: computes the difficulty baseline's point values but not its interval, and says so (``--difficulty-intervals``
#: asks for it whatever the cost). Every ordered pair of R runs is R (R - 1) edges of R - 1 bins: 44 runs are
#: 1,892 x 43 x 100 = 8,135,600 refits (a 44-run matrix: about 6 s of CPU), 47 runs 9,945,200, 48 runs
#: 10,603,200; past 44 runs the refits' CPU grows as about R^3.75 (88 runs: 86 s against 8 s without it).
DIFFICULTY_INTERVAL_BUDGET = 10_000_000
#: The item bootstrap splits each replicate's categories over difficulty with this stream of the seed.
DIFFICULTY_STREAM = 1


def difficulty_replicates(n_edges: int, replicates: int, bins: int) -> int:
    """How many of the edges' bootstrap replicates refit the difficulty baseline (:data:`DIFFICULTY_REFITS`)."""
    return min(replicates, max(MIN_DIFFICULTY_REPLICATES, DIFFICULTY_REFITS // max(n_edges * bins, 1)))


def difficulty_interval_refits(n_edges: int, bins: int, replicates: int = MIN_DIFFICULTY_REPLICATES) -> int:
    """The (edge, replicate, bin) refits the difficulty baseline's interval takes with ``replicates`` drawn
    (:func:`difficulty_replicates` of them refit), counted as :data:`DIFFICULTY_REFITS` counts them: every edge,
    a reverse edge included (the cluster bootstrap reads a reverse edge's refit from its mirror's)."""
    return n_edges * bins * difficulty_replicates(n_edges, replicates, bins)


def difficulty_over_budget(n_edges: int, n_runs: int, settings: Uncertainty) -> str | None:
    """Why the difficulty baseline gets no interval (its refits past :data:`DIFFICULTY_INTERVAL_BUDGET`), else None.

    None also where there is nothing to refit (no replicates, fewer than four runs, no edge) or when
    ``settings.difficulty_intervals`` asks for the interval whatever the cost.
    """
    if settings.difficulty_intervals or not settings.resampled or not n_edges or not has_difficulty(n_runs):
        return None
    bins = max(n_runs - 1, 1)
    refits = difficulty_interval_refits(n_edges, bins, settings.replicates)
    if refits <= DIFFICULTY_INTERVAL_BUDGET:
        return None
    return (
        f"no interval computed: it would take {refits:,} (pair, bin, replicate) refits of the baseline "
        f"({n_edges:,} pairs x {bins} bins x {difficulty_replicates(n_edges, settings.replicates, bins)} "
        f"replicates), past the default's {DIFFICULTY_INTERVAL_BUDGET:,}; --difficulty-intervals computes it"
    )


@dataclass(frozen=True)
class Uncertainty:
    """How sampling error is estimated and when a sample is too small (recorded in outputs).

    ``cluster`` is the key field that groups items (by name, one of
    ``key_fields``), :data:`ITEM` for none, or None for the default: the first
    key field when the key has two or more fields, else none.
    """

    #: 0: no intervals, only what needs no resampling (the clustered McNemar test, the difficulty
    #: baseline's point values, the small-sample flags)
    replicates: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    cluster: str | None = None
    key_fields: tuple[str, ...] = ("query_id", "corpus_id")
    confidence_level: float = 0.95
    min_items: int = MIN_ITEMS
    #: Refit the difficulty baseline for its interval whatever the cost (by default not past
    #: :data:`DIFFICULTY_INTERVAL_BUDGET` refits: its point values only, and why)
    difficulty_intervals: bool = False

    def __post_init__(self) -> None:
        if self.replicates < 0:
            raise ValueError(f"replicates must be an integer >= 0 (0: no intervals); got {self.replicates!r}")
        if self.min_items < 0:
            raise ValueError(f"min_items must be >= 0; got {self.min_items!r}")
        if self.cluster not in (None, ITEM) and self.cluster not in self.key_fields:
            raise ValueError(
                f"cluster must be one of the key fields ({', '.join(self.key_fields)}) or {ITEM!r}; got {self.cluster!r}"
            )

    @property
    def resampled(self) -> bool:
        """Whether intervals are resampled (``replicates`` > 0)."""
        return self.replicates > 0

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

    def shares(
        self, hits: np.ndarray, counted: np.ndarray, keys: np.ndarray | None, clusters: Clusters | None = None
    ) -> list[Interval]:
        """Bootstrap intervals of each row's share of hits over counted items (rows x items keyed by ``keys``).

        ``clusters`` are those of ``keys`` (:meth:`clusters`) when the caller has them already (``keys`` None).
        """
        if clusters is None and keys is None:
            raise ValueError("shares needs the items' keys or their clusters")
        from replicate.stats.shares import bootstrap_shares

        return bootstrap_shares(
            hits, counted, clusters=self.clusters(np.asarray(keys)) if clusters is None else clusters,
            n_resamples=self.replicates,
            confidence_level=self.confidence_level, seed=self.seed,
        )

    def shares_of_counts(self, counts: np.ndarray, clusters: Clusters) -> list[Interval]:
        """:meth:`shares` from the shares' counts per cluster (:func:`~replicate.stats.shares.bootstrap_share_counts`):
        ``(clusters, rows, 2)`` of (counted hits, counted misses), or their totals ``(1, rows, 2)`` for the item bootstrap."""
        from replicate.stats.shares import bootstrap_share_counts

        return bootstrap_share_counts(
            counts, clusters=clusters, n_resamples=self.replicates, confidence_level=self.confidence_level, seed=self.seed,
        )

    def to_json(self) -> dict:
        field = self.cluster_field
        return {
            "replicates": self.replicates,
            "seed": self.seed,
            "cluster": None if field is None else self.key_fields[field],
            "confidence_level": self.confidence_level,
            "min_items": self.min_items,
            # recorded when asked for (the default's JSON is as before the option)
            **({"difficulty_intervals": True} if self.difficulty_intervals else {}),
        }


@dataclass(frozen=True)
class EdgeUncertainty:
    """One edge's sampling error: an interval per figure, the clustered McNemar test, the difficulty baseline."""

    interval: dict[str, Interval]
    mcnemar_statistic: float | None  # None: no items (no test)
    mcnemar_p: float | None
    clusters: int
    cluster: str | None
    difficulty_expected: float | None
    difficulty_other_runs: int
    #: Intervals of ``expected_regression_rate`` and ``ratio`` of the difficulty baseline (refit per replicate).
    difficulty_interval: dict[str, Interval] | None = None
    difficulty_resampling: str | None = None
    #: Why the difficulty baseline has no interval although replicates were drawn (:func:`difficulty_over_budget`).
    difficulty_reason: str | None = None

    @property
    def resampled(self) -> bool:
        """Whether the figures have intervals (none with ``replicates`` 0: only McNemar and the difficulty baseline)."""
        return bool(self.interval)

    def mcnemar_json(self) -> dict:
        return {
            "statistic": self.mcnemar_statistic,
            "p": self.mcnemar_p,
            # p below the float range is 0.0; this is not
            "log10_p": None if self.mcnemar_statistic is None else chi2_sf_1_log10(self.mcnemar_statistic),
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
                **({} if not self.resampled else {"interval": {
                    "expected_regression_rate": self.interval[INDEPENDENT_REGRESSION_RATE.name].to_json(),
                    "ratio": self.interval[INDEPENDENCE_RATIO.name].to_json(),
                }}),
            },
            "given_item_difficulty": {
                "expected_regression_rate": exp,
                "ratio": None if exp is None or exp == 0 or reg is None else reg / exp,
                "method": DIFFICULTY_METHOD,
                "other_runs": self.difficulty_other_runs,
                "available": exp is not None,
                **({} if self.difficulty_interval is None or exp is None else {
                    "interval": {k: v.to_json() for k, v in self.difficulty_interval.items()},
                    "resampling": self.difficulty_resampling,
                }),
                **({} if self.difficulty_reason is None or exp is None else {"reason": self.difficulty_reason}),
            },
        }


def edge_uncertainty(
    aligned: Aligned, pairs: Sequence[tuple[int, int]], settings: Uncertainty, *, policy: Policy = "intersect",
    clusters: Clusters | None = None,
) -> list[EdgeUncertainty]:
    """Sampling error of each edge (old, new) of ``aligned`` (one bootstrap for all of them).

    ``clusters`` are ``settings.clusters(aligned.keys)`` when the caller has them already.
    """
    return start_edge_uncertainty(aligned, pairs, settings, policy=policy, clusters=clusters).result()


class PendingEdges:
    """:func:`edge_uncertainty` begun: the cluster bootstrap's difficulty refits already under way beside.

    :meth:`result` runs the edges' bootstrap in the calling thread and joins the refits; the caller
    may do other work first (a matrix computes its point figures), which then overlaps the refits.
    """

    def __init__(
        self, aligned: Aligned, pairs: list[tuple[int, int]], settings: Uncertainty, policy: Policy, clusters: Clusters
    ) -> None:
        self._args = (aligned, pairs, clusters, settings, policy)
        # The cluster bootstrap's refits need only the clusters and the seed: they start at once, in a
        # forked child where that is safe (they are numpy in many small steps, which hold the GIL between
        # them, so a thread only takes turns with this one), else in a thread. Same values either way.
        # With fewer than four runs there is nothing to refit: a thread, not a fork, gives the point values.
        start = beside_process if has_difficulty(aligned.labels.shape[0]) else beside
        self._over = difficulty_over_budget(len(pairs), aligned.labels.shape[0], settings)
        refit = not clusters.is_items and settings.resampled and self._over is None
        self._refits = start(_difficulty, *self._args) if refit else None
        self._value: list[list[EdgeUncertainty]] = []

    def result(self) -> list[EdgeUncertainty]:
        if not self._value:
            self._value.append(self._compute())
        return self._value[0]

    def _compute(self) -> list[EdgeUncertainty]:
        aligned, pairs, clusters, settings, policy = self._args
        if not settings.resampled:
            return _unresampled(aligned, pairs, clusters, policy)
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
        per_cluster = boot.per_cluster if boot.per_cluster is not None else np.asarray(boot.totals)[None, :, :]
        stat, p = _mcnemar(per_cluster, items=boot.per_cluster is None)
        refits = self._refits
        if self._over is not None:  # past the budget: the point values only (the same counts, summed exactly)
            refits = beside(_difficulty_points, aligned, pairs, policy)
        elif refits is None:  # the item bootstrap's refits split the edges' own replicates: beside their intervals
            refits = beside(_difficulty, aligned, pairs, clusters, settings, policy, boot)
        # the intervals in this thread: a second thread of blocks beside the refits' made a 22-run matrix slower
        intervals = without_absent(aligned, pairs, boot.intervals())
        diff, diff_iv, how = refits.result()
        return _edge_list(intervals, stat, p, clusters, diff, diff_iv, how, self._over)


def without_absent(
    aligned: Aligned, pairs: Sequence[tuple[int, int]], intervals: list[dict[str, Interval]]
) -> list[dict[str, Interval]]:
    """No interval for a figure the edge's runs cannot give (the change rate of correctness-only runs), with why.

    The bootstrap counts categories for every edge; where the figure itself is ``-`` (not computable) its
    interval must not be printed either.
    """
    from replicate.labels import absent_figures

    verdicts = [getattr(r, "yields", "outputs") == "verdicts" for r in aligned.runs]
    if not any(verdicts):
        return intervals
    for k, (i, j) in enumerate(pairs):
        if verdicts[i] or verdicts[j]:
            absent = absent_figures([aligned.runs[i], aligned.runs[j]])
            intervals[k] = {f: iv.without(absent[f]) if f in absent else iv for f, iv in intervals[k].items()}
    return intervals


def start_edge_uncertainty(
    aligned: Aligned, pairs: Sequence[tuple[int, int]], settings: Uncertainty, *, policy: Policy = "intersect",
    clusters: Clusters | None = None,
) -> PendingEdges:
    """:func:`edge_uncertainty` begun (its refits started); ``.result()`` finishes it. Same values."""
    pairs = [(int(a), int(b)) for a, b in pairs]
    clusters = settings.clusters(aligned.keys) if clusters is None else clusters
    return PendingEdges(aligned, pairs, settings, policy, clusters)


def _edge_list(
    intervals: Sequence[dict[str, Interval]], stat: np.ndarray, p: np.ndarray, clusters: Clusters,
    diff: DifficultyBaseline, diff_iv: list[dict[str, Interval]] | None = None, how: str | None = None,
    reason: str | None = None,
) -> list[EdgeUncertainty]:
    """One :class:`EdgeUncertainty` per edge from the per-edge arrays and lists."""
    return [
        EdgeUncertainty(
            interval=iv,
            mcnemar_statistic=None if np.isnan(p[k]) else float(stat[k]),
            mcnemar_p=None if np.isnan(p[k]) else float(p[k]),
            clusters=clusters.count,
            cluster=clusters.name,
            difficulty_expected=diff.value(k),
            difficulty_other_runs=diff.other_runs,
            difficulty_interval=None if diff_iv is None else diff_iv[k],
            difficulty_resampling=how,
            difficulty_reason=reason,
        )
        for k, iv in enumerate(intervals)
    ]


def _mcnemar(per_cluster: np.ndarray, *, items: bool) -> tuple[np.ndarray, np.ndarray]:
    """Durkalski's clustered McNemar statistic and p per edge, from category counts ``(G, P, 5)``.

    ``items`` (no cluster key: the counts are the totals, ``G`` = 1): each item is its own cluster,
    and the statistic is the classic ``(b - c)^2 / (b + c)`` from the totals. NaN p for an edge with no items.
    """
    none = per_cluster.sum(axis=(0, 2)) == 0
    if items:
        b, c = per_cluster[0, :, 1].astype(np.float64), per_cluster[0, :, 2].astype(np.float64)
        stat = np.divide((b - c) ** 2, b + c, out=np.zeros_like(b), where=(b + c) > 0)
        p = chi2_sf_1(stat)
    else:
        stat, p = mcnemar_clustered(per_cluster[:, :, 1], per_cluster[:, :, 2])
    return stat, np.where(none, np.nan, p)


def _unresampled(aligned: Aligned, pairs: list[tuple[int, int]], clusters: Clusters, policy: Policy) -> list[EdgeUncertainty]:
    """What needs no replicate (``replicates`` 0): the clustered McNemar test and the difficulty baseline's point values.

    The same values as with intervals: both come from the same counts, summed exactly.
    """
    codes = np.zeros(len(clusters.codes), np.int64) if clusters.is_items else clusters.codes
    per_cluster = cluster_category_counts(
        aligned.labels, aligned.gold, pairs, codes, 1 if clusters.is_items else clusters.count, policy=policy
    )
    stat, p = _mcnemar(per_cluster, items=clusters.is_items)
    diff = difficulty_baseline(aligned.labels, aligned.gold, pairs, policy=policy)
    return _edge_list([{} for _ in pairs], stat, p, clusters, diff)


def _difficulty_points(
    aligned: Aligned, pairs: list[tuple[int, int]], policy: Policy
) -> tuple[DifficultyBaseline, None, None]:
    """The difficulty baseline's point values, no refit (past :data:`DIFFICULTY_INTERVAL_BUDGET`)."""
    return difficulty_baseline(aligned.labels, aligned.gold, pairs, policy=policy), None, None


def _difficulty(
    aligned: Aligned, pairs: list[tuple[int, int]], clusters: Clusters, settings: Uncertainty, policy: Policy,
    boot: PairBootstrap | None = None,
) -> tuple[DifficultyBaseline, list[dict[str, Interval]] | None, str | None]:
    """The difficulty baseline with its intervals and how they were resampled (refits, then their percentiles)."""
    return _difficulty_intervals(
        *_difficulty_refits(aligned, pairs, clusters, settings, policy, boot), settings, clusters, len(pairs)
    )


def _difficulty_refits(
    aligned: Aligned, pairs: list[tuple[int, int]], clusters: Clusters, settings: Uncertainty, policy: Policy,
    boot: PairBootstrap | None = None,
) -> tuple[DifficultyBaseline, tuple[np.ndarray, np.ndarray] | None, int]:
    """The difficulty baseline of each edge and, refit in each of the edges' first replicates, (rate, ratio) per replicate.

    The cluster bootstrap redraws the edges' cluster weights (same seed, same
    draws); the item bootstrap splits the edges' own replicate counts (``boot``).
    """
    n_runs = aligned.labels.shape[0]
    B = difficulty_replicates(len(pairs), settings.replicates, max(n_runs - 1, 1))
    if clusters.is_items:
        counts = difficulty_counts(aligned.labels, aligned.gold, pairs, policy=policy)
        diff = fit_difficulty(counts, pairs, n_runs)
        if counts is None:
            return diff, None, B
        assert boot is not None
        rng = np.random.default_rng([settings.seed, DIFFICULTY_STREAM])
        return diff, item_difficulty_replicates(rng, counts, diff, boot.replicates[:B]), B
    if not has_difficulty(n_runs) or not pairs:
        return fit_difficulty(None, pairs, n_runs), None, B

    def chunks() -> Iterator[np.ndarray]:  # the clusters' counts a chunk at a time (read again if need be)
        out = difficulty_count_chunks(
            aligned.labels, aligned.gold, pairs, codes=clusters.codes, n_clusters=clusters.count, policy=policy
        )
        assert out is not None
        return out

    weights = cluster_weights(np.random.default_rng(settings.seed), clusters.count, B)
    diff, replicates = cluster_difficulty(chunks, pairs, n_runs - 2, weights)
    return diff, replicates, B


def _difficulty_intervals(
    diff: DifficultyBaseline, refits: tuple[np.ndarray, np.ndarray] | None, B: int, settings: Uncertainty,
    clusters: Clusters, n_pairs: int,
) -> tuple[DifficultyBaseline, list[dict[str, Interval]] | None, str | None]:
    """The difficulty baseline with the intervals of its refits, and how they were resampled."""
    if refits is None:
        return diff, None, None
    rate, ratio = refits
    assert diff.ratio is not None  # fitted: there were counts to refit
    out: list[dict[str, Interval]] = [{} for _ in range(n_pairs)]
    level = settings.confidence_level
    bounds = {
        "expected_regression_rate": (percentile_bounds(rate, level), clusters.method),
        # the ratio: a t interval on the log scale (the percentiles of this ratio ran short in simulation)
        "ratio": (log_t_bounds(ratio, diff.ratio, clusters.count, level), clusters.method.replace("percentile", LOG_T)),
    }
    for name, ((lo, hi, undefined), method) in bounds.items():
        ivs = interval_list(
            lo, hi, undefined, method=method, replicates=B, cluster=clusters.name, clusters=clusters.count,
            confidence_level=level, seed=settings.seed,
        )
        for k, iv in enumerate(ivs):
            out[k][name] = iv
    first = f"the first {B} of the edges' {settings.replicates} bootstrap replicates" if B < settings.replicates else (
        f"each of the edges' {B} bootstrap replicates")
    how = (
        f"{first}, each drawing the items of every run (the other runs too) and refitting the baseline; the "
        "regression rate in the ratio comes from the same draws; the ratio's interval is a t interval on the log "
        "scale (the replicates' spread of the log ratio, t quantile over the clusters less one, widened by "
        "sqrt(clusters / (clusters - 1)))"
        + ("" if B == settings.replicates else f" (at most {DIFFICULTY_REFITS:,} refits of an edge's bin in all)")
    )
    return diff, out, how


def em_intervals(
    aligned: Aligned, settings: Uncertainty, *, policy: Policy = "intersect", clusters: Clusters | None = None
) -> list[Interval]:
    """Each aligned run's EM (correct over the items counted under ``policy``) with its bootstrap interval.

    The same clusters, replicates and seed as the edges' bootstrap (:func:`edge_uncertainty`).
    """
    from replicate.judge.pairs import outcomes

    right, counted = outcomes(aligned, policy)
    return settings.shares(right & counted, counted, aligned.keys, clusters)


def small_sample(n: int, settings: Uncertainty | None) -> bool:
    return settings is not None and n < settings.min_items
