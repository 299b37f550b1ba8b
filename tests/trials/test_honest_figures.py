"""Issue 12's K-trial fixes: strict vs loose per response, exact per-item d, zero-width intervals,
the null's false discoveries, Tarone's untestable items, and the power beside P+ and P-."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from replicate.diagnostics import Diagnostics
from replicate.output import dumps_json
from replicate.stats.classify import parse_eps
from replicate.stats.fisher import PValueTables
from replicate.stats.itemtests import min_attainable_p
from replicate.stats.power import flag_power
from replicate.trials.engine import analyse_items, per_item_rows
from replicate.trials.load import read_trials
from replicate.trials.render import render_items
from support.synth.trials import synthetic_rows, write_jsonl


def table_of(tmp_path, rows, name="t.jsonl"):
    write_jsonl(rows, tmp_path / name)
    return read_trials(tmp_path / name)


def row(model, item, trial, category, loose="absent"):
    r = {"model": model, "benchmark": "b", "item": item, "trial": trial, "category": category}
    if loose != "absent":
        r["correct_loose"] = loose
    return r


def test_strict_vs_loose_is_per_response_and_ignores_api_errors(tmp_path):
    """By hand. Model s, item i1: correct (loose true), wrong (loose true), wrong (no loose reading),
    api_error (loose true). Over the two responses with a loose reading: loose 2/2, strict 1/2, so
    R = 1/2 (strict over all three non-error responses, 1/3, would give 2/3). Item i2: wrong (loose
    false), correct (loose true), api_error (loose true): loose 1/2, strict 1/2, R = 0 (counting the
    API error's loose reading would give loose 2/2). Model t: one response per item, read alike."""
    rows = [
        row("s", "i1", 0, "correct", True), row("s", "i1", 1, "wrong", True),
        row("s", "i1", 2, "wrong", None), row("s", "i1", 3, "api_error", True),
        row("s", "i2", 0, "wrong", False), row("s", "i2", 1, "correct", True),
        row("s", "i2", 2, "api_error", True),
        row("t", "i1", 0, "correct", True), row("t", "i2", 0, "wrong", False),
    ]
    res = analyse_items(table_of(tmp_path, rows), [("s", "t")], n_null=0)
    (c,) = res.cells
    assert c.loose.n_items == 2
    assert c.loose.r_source == pytest.approx((0.5 + 0.0) / 2)
    assert c.loose.r_target == 0.0 and c.loose.delta_r == pytest.approx(-0.25)
    acc = {a.model: a for a in res.accuracy}
    assert acc["s"].strict == pytest.approx((1 / 2 + 1 / 2) / 2) and acc["s"].loose == pytest.approx((1 + 1 / 2) / 2)
    assert acc["s"].r == pytest.approx(0.25)
    # The accuracy itself stays over every non-error trial: i1 1/3, i2 1/2.
    assert acc["s"].accuracy == pytest.approx((1 / 3 + 1 / 2) / 2)


def test_per_item_d_is_exact_at_the_boundary(tmp_path):
    """30/50 - 20/50 is 0.19999999999999996 in floats; the per-item row says exactly 1/5, and a user
    comparing either d field with eps gets the engine's class."""
    rows = [row("s", "x", t, "correct" if t < 20 else "wrong") for t in range(50)]
    rows += [row("t", "x", t, "correct" if t < 30 else "wrong") for t in range(50)]
    res = analyse_items(table_of(tmp_path, rows), [("s", "t")], n_null=0)
    (r,) = per_item_rows(res)
    assert 30 / 50 - 20 / 50 < 0.2
    assert r["d_exact"] == "1/5" and Fraction(r["d_exact"]) >= parse_eps("0.2")
    assert r["d"] == 0.2 and r["d"] >= 0.2
    # The class follows the exact rule: significant at one item? p is the Fisher p of 20/50 vs 30/50.
    assert r["class"] == ("improved" if r["q"] <= 0.05 else "inconclusive")
    rows2 = [row("s", "y", t, "correct" if t < 1 else "wrong") for t in range(3)]
    rows2 += [row("t", "y", t, "correct" if t < 2 else "wrong") for t in range(7)]
    (r2,) = per_item_rows(analyse_items(table_of(tmp_path, rows2, "u.jsonl"), [("s", "t")], n_null=0))
    assert r2["d_exact"] == str(Fraction(2, 7) - Fraction(1, 3)) == "-1/21"


def test_zero_width_intervals_warn_with_a_count(tmp_path):
    # Item a: all correct on both sides (Wald [0, 0]); item b: all wrong then all correct ([1, 1]);
    # item c: mixed (a proper interval).
    rows = [row("s", "a", t, "correct") for t in range(5)] + [row("t", "a", t, "correct") for t in range(5)]
    rows += [row("s", "b", t, "wrong") for t in range(5)] + [row("t", "b", t, "correct") for t in range(5)]
    rows += [row("s", "c", t, "correct" if t < 2 else "wrong") for t in range(5)]
    rows += [row("t", "c", t, "correct" if t < 3 else "wrong") for t in range(5)]
    table = table_of(tmp_path, rows)
    diag = Diagnostics()
    analyse_items(table, [("s", "t")], ci="wald", n_null=0, diagnostics=diag)
    (w,) = [w for w in diag.warnings if w.code == "zero-width-interval"]
    assert "s -> t, benchmark b: 2 item(s) have a zero-width wald interval" in w.message
    diag = Diagnostics()
    analyse_items(table, [("s", "t")], ci="newcombe", n_null=0, diagnostics=diag)
    assert "zero-width-interval" not in diag.counts()


def test_null_reports_false_discoveries_beside_the_percentile(tmp_path):
    """Unchanged items: the 95th percentile of Pchg is 0 (BH at 5% makes any false discovery rare),
    while the expected count and P(at least one) say how rare; both agree with the mean share."""
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 0.8, 150)
    t = table_of(tmp_path, synthetic_rows({"old": base, "new": base}, k=40, seed=9))
    res = analyse_items(t, [("old", "new")], n_null=400, seed=3)
    (c,) = res.cells
    ns = c.null_summary
    assert set(ns) >= {"replications", "mean", "p_value", "expected_false_discoveries", "p_at_least_one"}
    assert c.null_p95["p_chg"] == 0.0
    for k in ("p_plus", "p_minus", "p_chg"):
        assert ns["expected_false_discoveries"][k] == pytest.approx(ns["mean"][k] * c.n_items)
    e, p1 = ns["expected_false_discoveries"]["p_chg"], ns["p_at_least_one"]["p_chg"]
    assert 0 < p1 <= e  # at least one flagged in some replications; P(N >= 1) <= E[N]
    assert p1 < 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)
    text = render_items(res, "table")
    assert "null E[false disc.]" in text and "null P(>= 1)" in text
    assert f"{e:.3g}" in text and f"{100 * p1:.1f}%" in text
    off = analyse_items(t, [("old", "new")], n_null=0).cells[0]
    assert off.null_summary is None and off.to_json()["null"] is None


def test_min_attainable_p_by_brute_force():
    from scipy.stats import fisher_exact

    n1 = np.array([5, 5, 5, 8, 3, 6])
    n2 = np.array([5, 5, 5, 4, 7, 6])
    c = np.array([0, 10, 3, 6, 1, 12])
    got = min_attainable_p(n1, n2, c, PValueTables())
    for i in range(len(c)):
        want = min(
            fisher_exact([[a, n1[i] - a], [c[i] - a, n2[i] - c[i] + a]]).pvalue
            for a in range(max(0, c[i] - n2[i]), min(c[i], n1[i]) + 1)
        )
        assert got[i] == want
    assert got[0] == 1.0 and got[1] == 1.0 and got[5] == 1.0  # all wrong / all correct pooled


def test_tarone_equals_the_engine_on_the_filtered_items(tmp_path):
    rng = np.random.default_rng(8)
    base = np.concatenate([np.ones(10), np.zeros(10), rng.uniform(0.02, 0.15, 20), rng.uniform(0.2, 0.8, 60)])
    new = base.copy()
    new[40:60] = np.clip(new[40:60] + 0.5, 0, 1)
    rows = synthetic_rows({"old": base, "new": new}, k=12, seed=1, api_error_rate=0.03)
    t = table_of(tmp_path, rows)
    with_t = analyse_items(t, [("old", "new")], n_null=300, seed=5, tarone=True, sensitivity="0.1,0.3")
    (c,) = with_t.cells
    assert c.tarone_removed >= 20 and c.to_json()["tarone"] == {"removed": c.tarone_removed}
    assert with_t.to_json()["settings"]["tarone"] is True
    kept = {r["item"] for r in per_item_rows(with_t)}
    assert len(kept) == c.n_items == 100 - c.tarone_removed
    # Every removed item is untestable: its smallest attainable p exceeds alpha.
    removed = {f"q{i:04d}" for i in range(100)} - kept
    assert {f"q{i:04d}" for i in range(20)} <= removed
    filtered = table_of(tmp_path, [r for r in rows if r["item"] in kept], "f.jsonl")
    plain = analyse_items(filtered, [("old", "new")], n_null=300, seed=5, sensitivity="0.1,0.3")
    a, b = c.to_json(), plain.cells[0].to_json()
    a.pop("tarone")
    assert dumps_json(a) == dumps_json(b)
    assert list(per_item_rows(with_t)) == list(per_item_rows(plain))
    # And Tarone only ever leaves items out that could not have been flagged.
    full = {r["item"]: r["class"] for r in per_item_rows(analyse_items(t, [("old", "new")], n_null=0))}
    assert all(full[i] not in ("improved", "regressed") for i in removed)


def test_power_beside_p_plus_is_flag_power_on_the_observed_p_values(tmp_path):
    rng = np.random.default_rng(2)
    base = rng.uniform(0.2, 0.8, 40)
    t = table_of(tmp_path, synthetic_rows({"old": base, "new": np.clip(base + 0.3, 0, 1)}, k=30, seed=4))
    res = analyse_items(t, [("old", "new")], n_null=0, power_move=(0.3, 0.7))
    (c,) = res.cells
    p = c.rows.p
    want = flag_power(0.3, 0.7, k=30, n_items=41, others=p)
    assert c.power == want and c.power.method == "exact"
    j = c.to_json()["power_at_reference"]
    assert j["power"] == want.power and j["k_source"] == 30 and j["n_items"] == 41
    assert res.to_json()["settings"]["power_reference"]["p"] == 0.3
    assert "power 0.3 -> 0.7" in render_items(res, "table")


def test_power_and_null_section_in_markdown_and_json_keys(tmp_path):
    rng = np.random.default_rng(6)
    base = rng.uniform(0.2, 0.8, 30)
    t = table_of(tmp_path, synthetic_rows({"old": base, "new": base}, k=20, seed=2))
    res = analyse_items(t, [("old", "new")], n_null=50, tarone=True)
    md = render_items(res, "markdown")
    assert "## Power at this K and the null's false discoveries" in md
    assert "| untestable left out" in md and "P+ and P- are lower bounds on churn at this K" in md
    j = res.to_json()
    cell = j["cells"][0]
    assert {"power", "bounds", "k_source", "k_target", "n_items", "method"} <= set(cell["power_at_reference"])
    assert cell["power_at_reference"]["n_items"] == cell["n_items"] + 1
    assert j["settings"]["tarone"] is True and j["settings"]["power_reference"]["q"] == 0.6
