"""Baselines for the independence ratio that allow for item difficulty (pure, vectorised).

The classic baseline ``EM_old * (1 - EM_new)`` is the regression rate of two
judges whose errors are independent *and* whose items are all equally hard.
Items are not: a hard item is often wrong under both versions, so two judges
whose errors are independent *given the item* already regress less than the
classic baseline, and their ratio is below 1 (0.5-0.8 at EM 50%, depending on
how difficulty is spread). Two baselines that do not assume equal items:

- **given item difficulty** (:func:`difficulty_baseline`, needs at least two
  runs besides the edge's two): each item's difficulty is estimated from the
  *other* runs (leave the edge's own two out, so the baseline is not fitted to
  the edge); each side's chance of being right on an item is the logistic
  shift of that difficulty that reproduces the side's EM on the edge's items
  (a one-parameter-per-judge Rasch-like model); the baseline is the mean over
  items of ``P(old right) * P(new wrong)``, i.e. errors independent given the
  item. Limits: the other runs must be judges of the same items and scale;
  their shared errors count as difficulty; with few other runs difficulty is
  coarse (it takes only ``m + 1`` values for ``m`` other runs).
- **the rerun floor** (in ``floor``): where repeats of one judge exist, the
  regression rate between two repeats is what two draws of the *same* judge
  give; an edge's regression over that rate says how far beyond rerun noise it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.stats.policy import Policy

UNPARSED = -1
DIFFICULTY_METHOD = "leave-pair-out difficulty, logistic shift per side"
MIN_OTHER_RUNS = 2


def has_difficulty(n_runs: int) -> bool:
    """Whether ``n_runs`` aligned runs leave each edge enough other runs (:data:`MIN_OTHER_RUNS`) to fit difficulty."""
    return n_runs - 2 >= MIN_OTHER_RUNS
#: Difficulty of an item on which k of m other runs are right: (k + 1/2) / (m + 1).
SMOOTHING = 0.5
_COLUMNS = 128
_CLUSTER_CHUNK = 32  # clusters whose Gram products are held at once


@dataclass(frozen=True)
class DifficultyBaseline:
    """Per edge, the regression rate expected from errors independent given the item.

    ``expected[p]`` is NaN where undefined (no item, or fewer than
    :data:`MIN_OTHER_RUNS` other runs). ``other_runs`` is how many runs the
    difficulty of each item was estimated from.
    """

    pairs: tuple[tuple[int, int], ...]
    expected: np.ndarray
    other_runs: int
    #: per edge, the fitted shift of the old and the new side ``(P, 2)`` (None when not fitted)
    theta: np.ndarray | None = None

    def value(self, p: int) -> float | None:
        x = float(self.expected[p])
        return None if np.isnan(x) else x

    def to_json(self, p: int, regression_rate: float | None) -> dict:
        exp = self.value(p)
        ratio = None if exp is None or exp == 0 or regression_rate is None else regression_rate / exp
        return {
            "expected_regression_rate": exp,
            "ratio": ratio,
            "method": DIFFICULTY_METHOD,
            "other_runs": self.other_runs,
        }


def _expit(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _shift(logits: np.ndarray, weights: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row, q = expit(logits + theta) with sum(weights * q) = target (weights (P, K), target (P,)).

    Newton's method on theta, started at 0 and kept within [-40, 40]; rows whose
    target is 0 (or the total) get q = 0 (or 1) outright.
    """
    return _shift_theta(logits, weights, target)[0]


def _shift_theta(logits: np.ndarray, weights: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_shift` with the fitted theta per row (the start of each bootstrap replicate's refit)."""
    total = weights.sum(axis=1)
    theta = np.zeros(len(target))
    for _ in range(60):
        q = _expit(logits[None, :] + theta[:, None])
        f = (weights * q).sum(axis=1) - target
        d = (weights * q * (1 - q)).sum(axis=1)
        step = np.divide(f, d, out=np.zeros_like(f), where=d > 1e-300)
        theta = np.clip(theta - step, -40.0, 40.0)
        if np.all(np.abs(f) <= 1e-10 * np.maximum(total, 1)):
            break
    q = _expit(logits[None, :] + theta[:, None])
    q[target <= 0] = 0.0
    q[target >= total] = 1.0
    return q, theta


def smoothed_logits(other_runs: int) -> np.ndarray:
    """The difficulty logit of an item on which k = 0..m of the m other runs are right (:data:`SMOOTHING`)."""
    k = np.arange(other_runs + 1)
    return np.log((k + SMOOTHING) / (other_runs - k + SMOOTHING))


@dataclass(frozen=True)
class DifficultyCounts:
    """What the difficulty fit reads, per cluster and edge: all of it counts, so a bootstrap sums them.

    ``cells[c, 2 * x + y, k, p]`` counts the items of cluster c valid on both
    sides of edge p on which k of the other runs are right, the old side is
    right (x = 1) or wrong (x = 0) and the new side right (y = 1) or wrong
    (float32, exact integers; edges last).
    """

    pairs: tuple[tuple[int, int], ...]
    cells: np.ndarray  # (G, 4, K, P)
    other_runs: int

    @property
    def hist(self) -> np.ndarray:
        """Items by the other runs' right count: ``(G, K, P)``."""
        c = self.cells
        return c[:, 0] + c[:, 1] + c[:, 2] + c[:, 3]

    def sides(self) -> np.ndarray:
        """Per cluster and edge: (old right, new right, regressed) item counts, ``(G, 3, P)``."""
        c = self.cells.sum(axis=2)
        return np.stack([c[:, 2] + c[:, 3], c[:, 1] + c[:, 3], c[:, 2]], axis=1)


def difficulty_counts(
    labels: np.ndarray,
    gold: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    *,
    codes: np.ndarray | None = None,
    n_clusters: int = 1,
    policy: Policy = "intersect",
) -> DifficultyCounts | None:
    """The counts :func:`difficulty_baseline` fits, per cluster (``codes`` None: one cluster); None with too few runs.

    Items are grouped by (cluster, right runs in all); within a group one Gram
    product of the runs' valid-and-wrong / valid-and-right rows counts, for
    every pair of runs, the items each side has wrong or right.
    """
    labels = np.asarray(labels)
    gold = np.asarray(gold)
    R, N = labels.shape
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    m = R - 2
    if not has_difficulty(R) or not pairs:
        return None
    codes = np.zeros(N, np.int64) if codes is None else np.asarray(codes, dtype=np.int64)
    correct = (labels == gold[None, :]) & (labels != UNPARSED)
    valid = labels != UNPARSED if policy == "intersect" else np.ones_like(correct)
    total = correct.sum(axis=0)  # right runs per item, the edge's own two included
    K = m + 1
    group = codes * (R + 1) + total
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(n_clusters * (R + 1) + 1))
    rows = np.concatenate([valid & ~correct, correct & valid])[:, order].astype(np.float32)  # row x * R + r
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    cells = np.zeros((n_clusters, 4, K, len(pairs)), dtype=np.float32)
    sizes = np.diff(bounds)
    for c0 in range(0, n_clusters, _CLUSTER_CHUNK):
        c1 = min(c0 + _CLUSTER_CHUNK, n_clusters)
        g0 = c0 * (R + 1)
        # per (cluster, total) group, its Gram matrix: float32 sums of 0/1 products, exact below 2**24 items
        grams = np.zeros(((c1 - c0) * (R + 1), 2 * R, 2 * R), dtype=np.float32)
        for g in np.flatnonzero(sizes[g0 : c1 * (R + 1)]).tolist():
            start, stop = int(bounds[g0 + g]), int(bounds[g0 + g + 1])
            # small column blocks: products of this size run on one thread, which a busy
            # machine serves far faster than a threaded product of the whole group
            for lo in range(start, stop, _COLUMNS):
                block = rows[:, lo : min(lo + _COLUMNS, stop)]
                grams[g] += block @ block.T
        flat = grams.reshape(len(grams), 4 * R * R)
        for x in (0, 1):
            for y in (0, 1):
                # (chunk, R + 1, P): items with total t on which a is right (x) and b right (y)
                cnt = np.take(flat, (x * R + a) * 2 * R + y * R + b, axis=1).reshape(c1 - c0, R + 1, len(pairs))
                cells[c0:c1, 2 * x + y] = cnt[:, x + y : x + y + K]  # the other runs' count is t - x - y
    cells.setflags(write=False)
    return DifficultyCounts(pairs, cells, m)


def difficulty_baseline(
    labels: np.ndarray, gold: np.ndarray, pairs: Sequence[tuple[int, int]], *, policy: Policy = "intersect"
) -> DifficultyBaseline:
    """Expected regression rate of each edge under errors independent given item difficulty.

    ``labels`` is (runs x items), -1 = unparsed; items of an edge are those
    valid for both of its runs under ``policy`` (as for its four cells). An
    unparsed label of another run counts as not right when estimating difficulty.
    """
    return fit_difficulty(difficulty_counts(labels, gold, pairs, policy=policy), pairs, np.asarray(labels).shape[0])


def fit_difficulty(counts: DifficultyCounts | None, pairs: Sequence[tuple[int, int]], n_runs: int) -> DifficultyBaseline:
    """:func:`difficulty_baseline` from its counts (summed over clusters), with each side's fitted shift."""
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    if counts is None:
        return DifficultyBaseline(pairs, np.full(len(pairs), np.nan), max(n_runs - 2, 0))
    h = counts.hist.sum(axis=0, dtype=np.float64).T  # (P, K)
    old_right, new_right, _ = counts.sides().sum(axis=0, dtype=np.float64)
    logits = smoothed_logits(counts.other_runs)
    n = h.sum(axis=1)
    q_old, theta_old = _shift_theta(logits, h, old_right)
    q_new, theta_new = _shift_theta(logits, h, new_right)
    expected = np.divide((h * q_old * (1 - q_new)).sum(axis=1), n, out=np.full(len(pairs), np.nan), where=n > 0)
    expected.setflags(write=False)
    return DifficultyBaseline(pairs, expected, counts.other_runs, np.stack([theta_old, theta_new], axis=1))
