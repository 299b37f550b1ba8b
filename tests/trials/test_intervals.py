"""K-trial figures carry intervals in the judge commands' shape; values worked out by hand (scipy's z)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.diagnostics import Diagnostics
from replicate.trials.engine import analyse_items
from replicate.trials.load import read_trials
from replicate.trials.screen import screen
from support.synth.trials import write_jsonl

Z = stats.norm.ppf(0.975)
# (source correct, target correct) of 10 trials per item; item i5 has the same rate on both sides
PLAN = [(2, 9), (3, 8), (5, 5), (6, 4), (4, 7), (1, 10)]


def _rows(plan=PLAN, k=10):
    out = []
    for i, (a, b) in enumerate(plan):
        for model, c in (("s", a), ("t", b)):
            out += [{"model": model, "benchmark": "x", "item": f"i{i}", "trial": j,
                     "category": "correct" if j < c else "wrong"} for j in range(k)]
    return out


def _wilson(k, n):
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("iv") / "t.jsonl"
    write_jsonl(_rows(), path)
    return analyse_items(read_trials(path), [("s", "t")], n_null=0, diagnostics=Diagnostics())


def test_delta_gets_the_paired_normal_interval_over_items(result):
    (c,) = result.cells
    d = np.array([(b - a) / 10 for a, b in PLAN])
    half = Z * d.std(ddof=1) / math.sqrt(len(d))
    iv = c.to_json()["interval"]["delta"]
    assert (iv["low"], iv["high"]) == pytest.approx((d.mean() - half, d.mean() + half))
    assert (iv["method"], iv["replicates"], iv["cluster"], iv["seed"], iv["assumes"]) == (
        "normal-over-items", None, None, None, "independent items")
    # paired, not two independent means: here the items that gain most start lowest (negatively
    # correlated sides), so the paired half-width 0.334 exceeds the unpaired 0.238
    s, t = np.array([a for a, _ in PLAN]) / 10, np.array([b for _, b in PLAN]) / 10
    unpaired = Z * math.sqrt(s.var(ddof=1) / 6 + t.var(ddof=1) / 6)
    assert half == pytest.approx(0.3344, abs=1e-4) and unpaired == pytest.approx(0.2383, abs=1e-4)


def test_each_share_gets_the_wilson_interval_of_its_count_over_the_cells_items(result):
    (c,) = result.cells
    js = c.to_json()
    counts = js["counts"]
    assert counts["improved"] == 2  # i0 (2 -> 9) and i5 (1 -> 10) survive BH; none regresses
    for fig, k in (("p_plus", counts["improved"]), ("p_minus", counts["regressed"]),
                   ("p_chg", counts["improved"] + counts["regressed"]), ("inconclusive", counts["inconclusive"])):
        iv = js["interval"][fig]
        assert (iv["low"], iv["high"]) == pytest.approx(_wilson(k, 6)), fig
        assert iv["method"] == "wilson-score" and iv["clusters"] == 6


def test_accuracies_get_the_normal_interval_over_items_and_the_accuracy_rows_the_same_shape(result):
    (c,) = result.cells
    s = np.array([a for a, _ in PLAN]) / 10
    half = Z * s.std(ddof=1) / math.sqrt(6)
    side = c.source_side.to_json()["interval"]["accuracy"]
    assert (side["low"], side["high"]) == pytest.approx((s.mean() - half, s.mean() + half))
    row = next(a for a in result.accuracy if a.model == "s").to_json()
    assert "ci" not in row and row["interval"]["accuracy"]["low"] == pytest.approx(side["low"])
    assert row["interval"]["accuracy"]["replicates"] is None


def test_a_zero_width_normal_interval_is_warned(tmp_path):
    path = tmp_path / "t.jsonl"
    write_jsonl(_rows([(10, 10), (10, 10), (10, 10)]), path)
    diag = Diagnostics()
    res = analyse_items(read_trials(path), [("s", "t")], n_null=0, diagnostics=diag)
    iv = res.cells[0].to_json()["interval"]
    assert iv["delta"]["low"] == iv["delta"]["high"] == 0.0
    msgs = [w["message"] for w in diag.to_json()["first"] if w["code"] == "zero-width-interval"]
    assert any("s -> t, benchmark x: acc src, acc tgt, delta: the normal interval over items has zero width" in m
               for m in msgs)
    assert any(m.startswith("s, benchmark x: the normal interval") for m in msgs)


def test_the_screening_share_gets_its_wilson_interval(tmp_path):
    path = tmp_path / "t.jsonl"
    write_jsonl(_rows(), path)
    (row,) = screen(read_trials(path)).to_json()["benchmarks"]
    # an item counts when some model's rate lies in [0.1, 0.9]: the source's rates are 0.2, 0.3, 0.5,
    # 0.6, 0.4 and 0.1 (1/10 counts at low 0.1), so all 6 items count
    assert row["informative_items"] == 6
    iv = row["interval"]["share"]
    assert (iv["low"], iv["high"]) == pytest.approx(_wilson(6, 6)) and iv["method"] == "wilson-score"
