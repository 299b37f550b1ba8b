"""The trial-level error of the engine's mean figures (replicate.trials.trial_error), from the rows by hand."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.trials.engine import analyse_items
from replicate.trials.load import read_trials
from replicate.trials.trial_error import TrialErrors
from support.synth.trials import synthetic_rows, write_jsonl


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rates = {"old": np.linspace(0.2, 0.8, 12), "new": np.linspace(0.3, 0.9, 12)}
    rows = synthetic_rows(rates, k={"old": 4, "new": 6}, benchmark=["a"] * 7 + ["b"] * 5, seed=3,
                          api_error_rate=0.1, loose_bonus=0.3)
    path = tmp_path_factory.mktemp("err") / "t.jsonl"
    write_jsonl(rows, path)
    return read_trials(path), rows


def by_hand(rows, model, bench=None, reading="category"):
    """(variance, spread) of the model's mean rate over its items with a reading: p(1 - p) / (k - 1) / N² per item
    (an item with one trial: 1/4 / N²), the spread each term squared over k - 1."""
    per: dict[str, list[bool]] = {}
    for r in rows:
        if r["model"] != model or (bench is not None and r["benchmark"] != bench) or r["category"] == "api_error":
            continue
        per.setdefault(r["item"], []).append(r["category"] == "correct" if reading == "category" else r["correct_loose"])
    n = len(per)
    terms = []
    for trials in per.values():
        k, p = len(trials), sum(trials) / len(trials)
        terms.append((p * (1 - p) / (k - 1) / n**2, k - 1) if k > 1 else (0.25 / n**2, None))
    return sum(v for v, _ in terms), sum(v * v / d for v, d in terms if d is not None)


def test_a_models_accuracy_on_a_benchmark(table):
    t, rows = table
    errors = TrialErrors(t)
    for model in ("old", "new"):
        for bench in ("a", "b"):
            assert errors.accuracy(model, bench) == pytest.approx(by_hand(rows, model, bench))
            assert errors.accuracy(model, bench, loose=True) == pytest.approx(by_hand(rows, model, bench, "loose"))


def test_a_cells_delta_and_delta_r_add_the_errors_of_their_means(table):
    t, rows = table
    cell = next(c for c in analyse_items(t, [("old", "new")], by="none").cells)
    errors = TrialErrors(t)
    both = [by_hand(rows, m) for m in ("old", "new")]
    assert errors.delta(cell) == pytest.approx((both[0][0] + both[1][0], both[0][1] + both[1][1]))
    # every non-error trial has a loose reading, so delta R's four means are over every item
    four = both + [by_hand(rows, m, reading="loose") for m in ("old", "new")]
    assert errors.delta_r(cell) == pytest.approx((sum(v for v, _ in four), sum(s for _, s in four)))
