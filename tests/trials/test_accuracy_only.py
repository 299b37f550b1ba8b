"""`replicate items` without --edge: each model's accuracy per benchmark, its interval and its six
categories, checked against counts made by hand and a normal interval computed with scipy."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import orjson
from scipy import stats
from typer.testing import CliRunner

from replicate.cli.app import app

runner = CliRunner()

#: (model, benchmark, item) -> categories of its trials, in trial order.
TRIALS = {
    ("old", "b1", "x"): ["correct", "correct", "wrong", "api_error"],
    ("old", "b1", "y"): ["refusal", "correct", "truncation", "correct"],
    ("old", "b1", "z"): ["format_failure", "wrong", "wrong", "wrong"],
    ("old", "b2", "x"): ["correct", "correct", "correct", "correct"],
    ("new", "b1", "x"): ["correct", "correct", "correct", "correct"],
    ("new", "b1", "y"): ["api_error", "api_error", "api_error", "api_error"],
    ("new", "b1", "z"): ["correct", "wrong", "correct", "truncation"],
}


def write(path):
    rows = [{"model": m, "benchmark": b, "item": i, "trial": t, "category": c}
            for (m, b, i), cats in TRIALS.items() for t, c in enumerate(cats)]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_without_edge_gives_accuracy_interval_and_categories(tmp_path):
    r = runner.invoke(app, ["items", str(write(tmp_path / "t.jsonl")), "-f", "json"])
    assert r.exit_code == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["cells"] == []
    acc = {(a["model"], a["benchmark"]): a for a in j["accuracy"]}
    old = acc[("old", "b1")]
    # by hand: x 2/3 (the api error leaves the denominator), y 2/4, z 0/4
    rates = np.array([2 / 3, 2 / 4, 0.0])
    assert old["accuracy"] == float((Fraction(2, 3) + Fraction(2, 4)) / 3)  # exact, rounded once
    half = stats.norm.ppf(0.975) * rates.std(ddof=1) / np.sqrt(3)
    iv = old["interval"]["accuracy"]
    assert np.isclose(iv["low"], max(0.0, rates.mean() - half)) and np.isclose(iv["high"], rates.mean() + half)
    assert old["categories"] == {"correct": 4, "wrong": 4, "format_failure": 1, "refusal": 1, "truncation": 1,
                                 "api_error": 1}
    assert old["trials"] == 12 and old["n_items"] == 3
    new = acc[("new", "b1")]
    # y has only API errors: no rate, counted apart
    assert new["n_items"] == 2 and new["items_without_valid_trials"] == 1
    assert new["accuracy"] == float((1 + Fraction(2, 4)) / 2)
    assert ("new", "b2") not in acc


def test_without_edge_the_table_shows_every_category(tmp_path):
    r = runner.invoke(app, ["items", str(write(tmp_path / "t.jsonl"))])
    assert r.exit_code == 0, r.stderr
    assert "Item classes" not in r.stdout
    assert "Responses per category (trials)" in r.stdout
    line = next(x for x in r.stdout.splitlines() if x.startswith("old") and " b1 " in x and "(" in x)
    assert line.split()[:4] == ["old", "b1", "12", "4"] and "1 (8.3%)" in line
