"""The difficulty-aware independence baseline: against a plain loop and a root finder, and on simulated judges."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.stats.independence import difficulty_baseline
from support.difficulty_sim import simulate
from support.rasch_reference import plain_expected


def rasch_judges(rng, n_judges: int, n_items: int, *, spread: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Judges right with probability expit(skill - difficulty), independently given the item."""
    gold = np.zeros(n_items, dtype=np.int16)
    difficulty = rng.normal(0, spread, n_items)
    skill = rng.normal(0, 0.4, n_judges)
    right = rng.random((n_judges, n_items)) < 1 / (1 + np.exp(-(skill[:, None] - difficulty[None, :])))
    return np.where(right, 0, 1).astype(np.int8), gold


def test_matches_a_plain_loop_with_a_root_finder():
    rng = np.random.default_rng(4)
    labels, gold = rasch_judges(rng, 5, 300)
    labels[rng.random(labels.shape) < 0.03] = -1
    pairs = [(0, 1), (3, 2), (4, 0), (1, 0)]
    got = difficulty_baseline(labels, gold, pairs)
    for p, (a, b) in enumerate(pairs):
        expected, _, n = plain_expected(labels, gold, a, b)
        assert got.value(p) == pytest.approx(expected / n, rel=1e-9)
    assert got.other_runs == 3


def test_matches_the_plain_loop_with_six_other_runs_and_an_empty_bin():
    rng = np.random.default_rng(8)
    labels, gold = rasch_judges(rng, 8, 400, spread=0.3)
    labels[2, (labels[2:] == gold).all(axis=0)] = 1  # for edge 0 -> 1 no item has all six others right
    pairs = [(0, 1), (5, 7)]
    got = difficulty_baseline(labels, gold, pairs)
    for p, (a, b) in enumerate(pairs):
        expected, _, n = plain_expected(labels, gold, a, b)
        assert got.value(p) == pytest.approx(expected / n, rel=1e-9)


def test_sides_always_or_never_right_take_their_limits():
    rng = np.random.default_rng(3)
    labels, gold = rasch_judges(rng, 5, 200)
    labels[0] = gold  # old always right: every item the new side has wrong is a regression
    labels[3] = 1 - gold  # never right
    got = difficulty_baseline(labels, gold, [(0, 1), (1, 3), (3, 1), (2, 0)])
    correct = labels == gold
    assert got.value(0) == pytest.approx(np.mean(~correct[1]))
    assert got.value(1) == pytest.approx(np.mean(correct[1]))
    assert got.value(2) == 0.0 and got.value(3) == 0.0


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


@pytest.mark.parametrize("spread", [0.0, 2.0])
def test_judges_independent_given_the_item_cover_1_where_the_smoothed_share_baseline_did_not(spread):
    """30 seeded releases of 2,000 items, two other runs (tests/support/difficulty_sim.py): the ratio averages 1
    and its cluster-bootstrap interval covers 1 in most releases; the earlier definition (smoothed share of the
    other runs, slope 1) averaged 1.25 on equally hard items and 0.83 on spread ones, covering 1 in almost none."""
    row = simulate(2, spread, 30, seed=5, replicates=200)
    mean, se = row.mean["after"]
    assert abs(mean - 1) < 0.02 + 3 * se and se < 0.01
    assert row.covers["after"][0] >= 0.8
    before = row.mean["before"][0]
    assert (before > 1.15) if spread == 0 else (before < 0.9)
    assert row.covers["before"][0] <= 0.2
