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
#: Difficulty of an item on which k of m other runs are right: (k + 1/2) / (m + 1).
SMOOTHING = 0.5
_COLUMNS = 128


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
    return q


def difficulty_baseline(
    labels: np.ndarray, gold: np.ndarray, pairs: Sequence[tuple[int, int]], *, policy: Policy = "intersect"
) -> DifficultyBaseline:
    """Expected regression rate of each edge under errors independent given item difficulty.

    ``labels`` is (runs x items), -1 = unparsed; items of an edge are those
    valid for both of its runs under ``policy`` (as for its four cells). An
    unparsed label of another run counts as not right when estimating difficulty.
    """
    labels = np.asarray(labels)
    gold = np.asarray(gold)
    R = labels.shape[0]
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    m = R - 2
    expected = np.full(len(pairs), np.nan)
    if m < MIN_OTHER_RUNS or not pairs:
        return DifficultyBaseline(pairs, expected, max(m, 0))
    correct = (labels == gold[None, :]) & (labels != UNPARSED)
    valid = labels != UNPARSED if policy == "intersect" else np.ones_like(correct)
    total = correct.sum(axis=0)  # right runs per item, the edge's own two included
    K = m + 1
    logits = np.log((np.arange(K) + SMOOTHING) / (m - np.arange(K) + SMOOTHING))
    # Items grouped by their total; within a group, one Gram product counts, for every
    # pair of runs, the items each side has valid and wrong (x = 0) or right (x = 1).
    order = np.argsort(total, kind="stable")
    bounds = np.searchsorted(total[order], np.arange(R + 2))
    rows = np.concatenate([valid & ~correct, correct & valid])[:, order].astype(np.float32)  # row x * R + r
    grams = np.zeros((R + 1, 2 * R, 2 * R))
    for t in range(R + 1):
        # small column blocks: products of this size run on one thread, which a busy
        # machine serves far faster than a threaded product of the whole group
        for lo in range(bounds[t], bounds[t + 1], _COLUMNS):
            block = rows[:, lo : min(lo + _COLUMNS, bounds[t + 1])]
            grams[t] += block @ block.T
    grams = np.rint(grams)
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    h = np.zeros((len(pairs), K))
    old_right = np.zeros(len(pairs))
    new_right = np.zeros(len(pairs))
    for x in (0, 1):
        for y in (0, 1):
            cnt = grams[:, x * R + a, y * R + b].T  # (P, R + 1): items with total t, a right = x, b right = y
            h += cnt[:, x + y : x + y + K]  # the other runs' count is t - x - y
            old_right += x * cnt.sum(axis=1)
            new_right += y * cnt.sum(axis=1)
    n = h.sum(axis=1)
    q_old = _shift(logits, h, old_right)
    q_new = _shift(logits, h, new_right)
    expected = np.divide((h * q_old * (1 - q_new)).sum(axis=1), n, out=np.full(len(pairs), np.nan), where=n > 0)
    expected.setflags(write=False)
    return DifficultyBaseline(pairs, expected, m)
