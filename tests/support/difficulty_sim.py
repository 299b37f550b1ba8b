"""A seeded simulation of the difficulty-aware independence ratio on judges independent given the item.

Each simulated release: 2,000 items in 50 queries of 40, ``m + 2`` runs, run j
right on item i with probability ``expit(a_j - d_i)`` independently
(abilities ``a_j`` evenly spaced over [-0.5, 1.5], shuffled per release);
difficulty either equal (``d_i = 0``) or spread (``d_i`` normal, sd 2, half
its variance shared by the items of a query); optionally the new side copies
the old side's right/wrong on a share of items (errors shared beyond
difficulty). The edge is runs 0 -> 1, its interval the cluster bootstrap over
queries, each replicate refitting the baseline on the drawn items of every run.

- before: the earlier definition (each item's difficulty the other runs'
  smoothed share right, ``(k + 1/2) / (m + 1)``; each side a logistic shift of
  its logit, slope 1, matched to the side's EM; refit per replicate), written
  out here (:func:`smoothed_share_expected`);
- after: :func:`replicate.stats.independence.fit_difficulty` and
  :func:`replicate.stats.independence_boot.cluster_difficulty_replicates`, the
  interval the tool prints (:func:`~replicate.stats.independence_boot.log_t_bounds`:
  a t interval on the log scale) and, beside it, the replicates' percentiles.

Seeded: release r of a design uses ``default_rng([seed, m, 10 * spread,
100 * shared, r])``, its bootstrap ``default_rng([seed, r, 1])``. Used by
``bench/calibration_difficulty.py`` (the table in docs/concepts.md) and by the
tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicate.stats.bootstrap import cluster_weights, percentile_bounds
from replicate.stats.independence import difficulty_counts, fit_difficulty
from replicate.stats.independence_boot import cluster_difficulty_replicates, log_t_bounds

ITEMS, QUERIES, REPLICATES = 2000, 50, 400
SPREAD = 2.0
OTHER_RUNS = (2, 3, 4, 5, 6)
TARGET_COVERAGE = 0.95
SHARED = 0.15


def release(rng: np.random.Generator, other_runs: int, spread: float, *, shared: float = 0.0,
            items: int = ITEMS, queries: int = QUERIES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels (runs x items, 1 right / 0 wrong), gold (all 1), query codes) of one simulated release.

    ``shared``: the new side (run 1) copies the old side's right/wrong on that share of items.
    """
    runs = other_runs + 2
    skill = np.linspace(-0.5, 1.5, runs)
    rng.shuffle(skill)
    codes = np.repeat(np.arange(queries), items // queries)
    half = spread / np.sqrt(2.0)
    d = rng.normal(0, half, queries)[codes] + rng.normal(0, half, len(codes)) if spread > 0 else np.zeros(len(codes))
    right = rng.random((runs, len(codes))) < 1 / (1 + np.exp(-(skill[:, None] - d[None, :])))
    if shared:
        copy = rng.random(len(codes)) < shared
        right[1, copy] = right[0, copy]
    return right.astype(np.int8), np.ones(len(codes), np.int16), codes


# -- the earlier definition, written out -------------------------------------------------------


def _shift(logits: np.ndarray, h: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row, q_k = expit(logits_k + theta) with sum_k h_k q_k = target (rows (r, K)); Newton on theta."""
    theta = np.zeros(len(target))
    for _ in range(60):
        q = 1 / (1 + np.exp(-(logits[None, :] + theta[:, None])))
        f = (h * q).sum(axis=1) - target
        d = (h * q * (1 - q)).sum(axis=1)
        theta = np.clip(theta - np.divide(f, d, out=np.zeros_like(f), where=d > 0), -40, 40)
    q = 1 / (1 + np.exp(-(logits[None, :] + theta[:, None])))
    q[target <= 0] = 0.0
    q[target >= h.sum(axis=1)] = 1.0
    return q


def smoothed_share_expected(cells: np.ndarray) -> np.ndarray:
    """The earlier baseline's expected regression count per row of cell counts ``(r, 4, K)`` (cell 2x + y)."""
    K = cells.shape[2]
    k = np.arange(K)
    logits = np.log((k + 0.5) / (K - 1 - k + 0.5))
    h = cells.sum(axis=1)
    q_old = _shift(logits, h, cells[:, 2:].sum(axis=(1, 2)))
    q_new = _shift(logits, h, (cells[:, 1] + cells[:, 3]).sum(axis=1))
    return (h * q_old * (1 - q_new)).sum(axis=1)


# -- one release, both definitions -----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One release's ratio and 95% interval under each definition."""

    before: tuple[float, float, float]
    #: the interval the tool prints (:func:`replicate.stats.independence_boot.log_t_bounds`)
    after: tuple[float, float, float]
    #: the same replicates' percentile interval
    after_percentile: tuple[float, float, float]


def outcome(labels: np.ndarray, codes: np.ndarray, gold: np.ndarray, weights: np.ndarray) -> Outcome:
    """Both definitions' (ratio, low, high) of edge 0 -> 1, the interval from the same cluster draws."""
    pairs = [(0, 1)]
    G = int(codes.max()) + 1
    counts = difficulty_counts(labels, gold, pairs, codes=codes, n_clusters=G)
    assert counts is not None
    regressed = float(counts.cells[:, 2].sum())
    base = fit_difficulty(counts, pairs, labels.shape[0])
    _, ratio = cluster_difficulty_replicates(counts, base, weights)
    assert base.ratio is not None
    point = float(base.ratio[0])
    lo, hi, _ = log_t_bounds(ratio, base.ratio, G, 0.95)
    plo, phi, _ = percentile_bounds(ratio, 0.95)
    after, after_percentile = (point, float(lo[0]), float(hi[0])), (point, float(plo[0]), float(phi[0]))
    per_cluster = counts.cells[..., 0].astype(np.float64).reshape(G, -1)  # (G, 4 * K)
    drawn = (weights.astype(np.float64) @ per_cluster).reshape(len(weights), 4, -1)
    old = regressed / smoothed_share_expected(counts.cells.sum(axis=0)[..., 0][None].astype(np.float64))[0]
    rep = drawn[:, 2].sum(axis=1) / smoothed_share_expected(drawn)
    lo0, hi0, _ = percentile_bounds(rep[:, None], 0.95)
    return Outcome((old, float(lo0[0]), float(hi0[0])), after, after_percentile)


@dataclass(frozen=True)
class Row:
    """One design's results over its releases."""

    other_runs: int
    spread: float
    shared: float
    releases: int
    mean: dict[str, tuple[float, float]]  # definition -> (mean ratio, its standard error)
    covers: dict[str, tuple[float, float]]  # definition -> (share of intervals covering 1, standard error)
    below: dict[str, float]  # definition -> share of intervals wholly below 1

    def line(self) -> str:
        design = f"{self.other_runs} others, {'equal' if self.spread == 0 else f'spread sd {self.spread:g}'}"
        if self.shared:
            design += f", {self.shared:.0%} shared"
        cells = [design]
        for d in ("before", "after"):
            (m, se), (c, cse) = self.mean[d], self.covers[d]
            cells += [f"{m:.3f} ± {se:.3f}", f"{100 * c:.1f}% ± {100 * cse:.1f}", f"{100 * self.below[d]:.1f}%"]
        (c, cse) = self.covers["after_percentile"]
        cells += [f"{100 * c:.1f}% ± {100 * cse:.1f}", f"{100 * self.below['after_percentile']:.1f}%"]
        return "| " + " | ".join(cells) + " |"


HEADER = ("| design | before: mean ratio | covers 1 | wholly below 1 | after: mean ratio | covers 1 | wholly below 1 "
          "| after, percentile interval: covers 1 | wholly below 1 |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")


def simulate(other_runs: int, spread: float, releases: int, *, seed: int = 0, shared: float = 0.0,
             replicates: int = REPLICATES) -> Row:
    """One design over ``releases`` seeded releases."""
    got = []
    for r in range(releases):
        rng = np.random.default_rng([seed, other_runs, int(10 * spread), int(100 * shared), r])
        labels, gold, codes = release(rng, other_runs, spread, shared=shared)
        weights = cluster_weights(np.random.default_rng([seed, r, 1]), QUERIES, replicates)
        got.append(outcome(labels, codes, gold, weights))
    mean, covers, below = {}, {}, {}
    for d in ("before", "after", "after_percentile"):
        x = np.array([getattr(o, d) for o in got])
        hit = (x[:, 1] <= 1) & (1 <= x[:, 2])
        mean[d] = (float(x[:, 0].mean()), float(x[:, 0].std(ddof=1) / np.sqrt(len(x))))
        c = float(hit.mean())
        covers[d] = (c, float(np.sqrt(max(c * (1 - c), 1e-12) / len(x))))
        below[d] = float((x[:, 2] < 1).mean())
    return Row(other_runs, spread, shared, releases, mean, covers, below)


def misses(row: Row) -> list[str]:
    """What of the target the new definition misses in a null design (none: [])."""
    out = []
    c, cse = row.covers["after"]
    if c < TARGET_COVERAGE - 2 * cse:
        out.append(f"coverage {100 * c:.1f}% below {100 * TARGET_COVERAGE:.0f}% by more than two standard errors")
    m, se = row.mean["after"]
    if abs(m - 1) > 0.02 + 2 * se:
        out.append(f"mean ratio {m:.3f} off 1 by more than 0.02 and two standard errors")
    return out
