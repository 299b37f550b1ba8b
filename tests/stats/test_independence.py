"""The difficulty-aware independence baseline: against a plain loop, and on simulated judges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from replicate.stats.independence import SMOOTHING, difficulty_baseline


def rasch_judges(rng, n_judges: int, n_items: int, *, spread: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Judges right with probability expit(skill - difficulty), independently given the item."""
    gold = np.zeros(n_items, dtype=np.int16)
    difficulty = rng.normal(0, spread, n_items)
    skill = rng.normal(0, 0.4, n_judges)
    right = rng.random((n_judges, n_items)) < 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    return np.where(right, 0, 1).astype(np.int8), gold


def plain_expected(labels, gold, a, b) -> float:
    """One edge by a loop over items and a root finder per side."""
    R, N = labels.shape
    m = R - 2
    others = [r for r in range(R) if r not in (a, b)]
    ks, old_right, new_right = [], 0, 0
    for i in range(N):
        if labels[a, i] < 0 or labels[b, i] < 0:
            continue
        ks.append(sum(labels[r, i] == gold[i] for r in others))
        old_right += labels[a, i] == gold[i]
        new_right += labels[b, i] == gold[i]
    logit = [math.log((k + SMOOTHING) / (m - k + SMOOTHING)) for k in ks]

    def probs(target):
        def f(t):
            return sum(1 / (1 + math.exp(-(x + t))) for x in logit) - target
        t = brentq(f, -40, 40, xtol=1e-13)
        return [1 / (1 + math.exp(-(x + t))) for x in logit]

    qa, qb = probs(old_right), probs(new_right)
    return sum(x * (1 - y) for x, y in zip(qa, qb)) / len(ks)


def test_matches_a_plain_loop_with_a_root_finder():
    rng = np.random.default_rng(4)
    labels, gold = rasch_judges(rng, 5, 300)
    labels[rng.random(labels.shape) < 0.03] = -1
    pairs = [(0, 1), (3, 2), (4, 0)]
    got = difficulty_baseline(labels, gold, pairs)
    for p, (a, b) in enumerate(pairs):
        assert got.value(p) == pytest.approx(plain_expected(labels, gold, a, b), rel=1e-9)
    assert got.other_runs == 3


def test_independent_judges_given_the_item_score_about_one_where_the_classic_ratio_does_not():
    rng = np.random.default_rng(7)
    labels, gold = rasch_judges(rng, 14, 6000)
    correct = labels == gold
    pairs = [(0, 1), (2, 3), (5, 4)]
    base = difficulty_baseline(labels, gold, pairs)
    for p, (a, b) in enumerate(pairs):
        regression = np.mean(correct[a] & ~correct[b])
        classic = correct[a].mean() * (1 - correct[b].mean())
        assert regression / classic < 0.85  # the classic ratio calls them partly alike
        assert regression / base.value(p) == pytest.approx(1.0, abs=0.1)


def test_a_judge_that_shares_errors_beyond_difficulty_scores_below_one():
    rng = np.random.default_rng(9)
    labels, gold = rasch_judges(rng, 10, 6000)
    copy = labels[0].copy()
    flip = rng.random(6000) < 0.1
    copy[flip] = 1 - copy[flip]
    labels = np.vstack([labels, copy[None, :]])
    correct = labels == gold
    base = difficulty_baseline(labels, gold, [(0, 10)])
    regression = np.mean(correct[0] & ~correct[10])
    assert regression / base.value(0) < 0.5


def test_needs_two_other_runs():
    rng = np.random.default_rng(1)
    labels, gold = rasch_judges(rng, 3, 50)
    base = difficulty_baseline(labels, gold, [(0, 1)])
    assert base.value(0) is None and base.to_json(0, 0.1)["ratio"] is None
