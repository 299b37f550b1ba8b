"""The engine on synthetic data with known truth, and item by item against scipy."""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from scipy.stats import false_discovery_control, fisher_exact

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.output import dumps_json
from replicate.trials.engine import DEFAULT_SEED, analyse_items, parse_edge, per_item_rows
from replicate.trials.load import read_trials
from replicate.trials.screen import screen
from support.synth.trials import synthetic_rows, write_jsonl


def table_of(tmp_path, rows, name="t.jsonl"):
    write_jsonl(rows, tmp_path / name)
    return read_trials(tmp_path / name)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """120 items; items 0-29 move up by 0.5, items 30-59 move down by 0.5, the rest stay."""
    rng = np.random.default_rng(11)
    base = rng.uniform(0.25, 0.75, 120)
    new = base.copy()
    new[:30] += 0.5
    new[30:60] -= 0.5
    new = np.clip(new, 0, 1)
    rows = synthetic_rows({"old": base, "new": new}, k=50, seed=5)
    d = tmp_path_factory.mktemp("planted")
    write_jsonl(rows, d / "t.jsonl")
    return read_trials(d / "t.jsonl")


def test_planted_changes_are_found_and_unmoved_items_are_not(planted):
    res = analyse_items(planted, [("old", "new")], n_null=200)
    (cell,) = res.cells
    rows = {r["item"]: r["class"] for r in per_item_rows(res)}
    up = [rows[f"q{i:04d}"] for i in range(30)]
    down = [rows[f"q{i:04d}"] for i in range(30, 60)]
    assert up.count("improved") >= 28
    assert down.count("regressed") >= 28
    assert "regressed" not in up and "improved" not in down
    assert cell.shares.p_plus >= 28 / 120 and cell.null_p95["p_chg"] < cell.shares.p_chg


def test_unmoved_items_stay_unflagged_up_to_the_fdr(tmp_path):
    """Over five independent draws, false discoveries stay within BH's 5% of discoveries."""
    rng = np.random.default_rng(11)
    base = rng.uniform(0.25, 0.75, 120)
    new = np.clip(np.concatenate([base[:30] + 0.5, base[30:60] - 0.5, base[60:]]), 0, 1)
    found = false = 0
    for seed in range(5):
        t = table_of(tmp_path, synthetic_rows({"old": base, "new": new}, k=50, seed=seed), f"t{seed}.jsonl")
        classes = [r["class"] for r in per_item_rows(analyse_items(t, [("old", "new")], n_null=0))]
        flagged = [c in ("improved", "regressed") for c in classes]
        found += sum(flagged)
        false += sum(flagged[60:])
    assert found >= 5 * 57
    assert false / found <= 0.05


def test_item_by_item_against_scipy(planted):
    res = analyse_items(planted, [("old", "new")], n_null=0, eps="0.2")
    rows = list(per_item_rows(res))
    ps = [fisher_exact([[r["correct_source"], r["trials_source"] - r["correct_source"]],
                        [r["correct_target"], r["trials_target"] - r["correct_target"]]]).pvalue for r in rows]
    assert [r["p"] for r in rows] == ps
    qs = false_discovery_control(ps, method="bh")
    assert [r["q"] for r in rows] == qs.tolist()
    from fractions import Fraction

    for r, q in zip(rows, qs):
        d = Fraction(r["correct_target"], r["trials_target"]) - Fraction(r["correct_source"], r["trials_source"])
        if q <= 0.05 and d >= Fraction(1, 5):
            assert r["class"] == "improved"
        elif q <= 0.05 and d <= -Fraction(1, 5):
            assert r["class"] == "regressed"
        elif -0.2 < r["ci_low"] and r["ci_high"] < 0.2:
            assert r["class"] == "equivalent"
        else:
            assert r["class"] == "inconclusive"


def test_null_on_unchanged_data_is_small_and_contains_observed(tmp_path):
    rng = np.random.default_rng(2)
    p = rng.uniform(0.1, 0.9, 200)
    t = table_of(tmp_path, synthetic_rows({"a": p, "b": p}, k=20, seed=9))
    res = analyse_items(t, [("a", "b")], n_null=300, seed=4)
    (cell,) = res.cells
    n95 = cell.null_p95
    assert n95["p_chg"] <= 0.02
    assert cell.shares.p_plus <= n95["p_plus"] + 0.01 and cell.shares.p_minus <= n95["p_minus"] + 0.01


def test_null_frequency_matches_the_exact_hypergeometric_probability():
    """One item: the null's share of 'changed' equals sum_x Hypergeom(x) * [p(x) <= alpha and |d| >= eps]."""
    from fractions import Fraction

    from scipy.stats import hypergeom

    from replicate.stats.fisher import PValueTables
    from replicate.stats.itemtests import Rule
    from replicate.stats.null import permutation_null

    a, n1, b, n2 = 6, 20, 14, 30
    c, M = a + b, n1 + n2
    exact = 0.0
    for x in range(max(0, c - n2), min(c, n1) + 1):
        y = c - x
        p = fisher_exact([[x, n1 - x], [y, n2 - y]]).pvalue
        d = Fraction(y, n2) - Fraction(x, n1)
        if p <= 0.05 and abs(d) >= Fraction(1, 5):
            exact += hypergeom.pmf(x, M, c, n1)
    R = 20000
    draws = permutation_null(np.array([a]), np.array([n1]), np.array([b]), np.array([n2]),
                             Rule(PValueTables(), 0.05, (Fraction(1, 5),)),
                             n_resamples=R, rng=np.random.default_rng(0))
    assert draws.counts.shape == (R, 1, 1, 2)
    freq = draws.counts.sum() / R
    assert 0.005 < exact < 0.2
    assert abs(freq - exact) < 4 * np.sqrt(exact * (1 - exact) / R)


def test_seeded_reproducibility(planted):
    one = dumps_json(analyse_items(planted, [("old", "new")], n_null=100, seed=1, single_draw=True).to_json())
    two = dumps_json(analyse_items(planted, [("old", "new")], n_null=100, seed=1, single_draw=True).to_json())
    assert one == two
    from fractions import Fraction

    from replicate.stats.fisher import PValueTables
    from replicate.stats.itemtests import Rule
    from replicate.stats.null import permutation_null

    counts = {}
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        a = np.full(40, 10)
        n = np.full(40, 20)
        counts[seed] = permutation_null(a, n, a, n, Rule(PValueTables(), 0.9, (Fraction(1, 20),)),
                                        n_resamples=50, rng=rng).counts
    assert not np.array_equal(counts[1], counts[2])
    res = analyse_items(planted, [("old", "new")], n_null=0)
    assert res.seed == DEFAULT_SEED and res.cells[0].seed == DEFAULT_SEED


def test_unequal_k_and_api_errors(tmp_path):
    rng = np.random.default_rng(4)
    p = rng.uniform(0.2, 0.8, 40)
    rows = synthetic_rows({"a": p, "b": np.clip(p + 0.5, 0, 1)}, k={"a": 30, "b": 45}, seed=3, api_error_rate=0.1)
    t = table_of(tmp_path, rows)
    res = analyse_items(t, [("a", "b")], n_null=50)
    (c,) = res.cells
    assert c.source_side.k_max <= 30 and c.target_side.k_max <= 45 and c.source_side.k_min < 30
    assert c.source_side.api_errors == sum(r["model"] == "a" and r["category"] == "api_error" for r in rows)
    for r in per_item_rows(res):
        want = fisher_exact([[r["correct_source"], r["trials_source"] - r["correct_source"]],
                             [r["correct_target"], r["trials_target"] - r["correct_target"]]]).pvalue
        assert r["p"] == want


def test_all_correct_all_wrong_and_one_item_cell(tmp_path):
    rows = synthetic_rows({"a": [1.0, 0.0, 1.0], "b": [1.0, 0.0, 0.0]}, k=10, seed=0, benchmark=["x", "x", "y"])
    t = table_of(tmp_path, rows)
    res = analyse_items(t, [("a", "b")], n_null=100)
    x, y = res.cells
    assert (x.benchmark, x.n_items, y.benchmark, y.n_items) == ("x", 2, "y", 1)
    # all-correct on both sides and all-wrong on both sides: p = 1, nothing changed, Newcombe
    # interval for 10/10 vs 10/10 is (-0.2775, 0.2775) so not equivalent at eps 0.2.
    assert [r["p"] for r in per_item_rows(res)][:2] == [1.0, 1.0]
    assert x.shares.inconclusive == 2 and x.delta == 0.0
    # one item, 10/10 -> 0/10: p = 1/92378 * 2, BH of one p is itself, a regression of 1.0
    assert y.shares.regressed == 1 and y.delta == -1.0
    assert y.rows.q[0] == fisher_exact([[10, 0], [0, 10]]).pvalue
    res2 = analyse_items(t, [("a", "b")], n_null=0, eps="0.3")
    assert res2.cells[0].shares.equivalent == 2  # 0.2775 < 0.3


def test_items_missing_or_only_api_errors_are_excluded_and_counted(tmp_path):
    rows = synthetic_rows({"a": [0.5] * 4, "b": [0.5] * 4}, k=5, seed=0)
    rows = [r for r in rows if not (r["model"] == "b" and r["item"] == "q0000")]
    for r in rows:
        if r["model"] == "a" and r["item"] == "q0001":
            r["category"] = "api_error"
    rows += [{"model": "b", "item": "extra", "trial": 0, "benchmark": "bench", "category": "correct"}]
    diag = Diagnostics()
    res = analyse_items(table_of(tmp_path, rows), [("a", "b")], n_null=0, diagnostics=diag)
    (c,) = res.cells
    assert c.n_items == 2
    assert c.excluded == {"missing_source": 1, "missing_target": 1, "no_valid_trials": 1}
    assert diag.counts() == {"items-excluded": 1}
    acc = {(a.model, a.benchmark): a for a in res.accuracy}
    assert acc[("a", "bench")].items_without_valid_trials == 1


def test_pooled_cells_and_sensitivity_and_strata(tmp_path):
    p = np.linspace(0.1, 0.9, 60)
    q = p.copy()
    q[:10] = np.clip(q[:10] + 0.6, 0, 1)
    rows = synthetic_rows({"a": p, "b": q}, k=40, seed=1, benchmark=["x"] * 30 + ["y"] * 30,
                          metadata={"difficulty": [1, 2, 3] * 20})
    t = table_of(tmp_path, rows)
    res = analyse_items(t, [("a", "b")], by="none", n_null=100, sensitivity="0.1,0.2,0.5", strata="difficulty")
    (c,) = res.cells
    assert c.benchmark is None and c.n_items == 60
    eps_rows = {r.eps: r.shares for r in c.sensitivity}
    assert eps_rows["0.2"] == c.shares
    assert eps_rows["0.1"].improved >= eps_rows["0.2"].improved >= eps_rows["0.5"].improved
    assert [s.value for s in c.strata] == [1, 2, 3]
    assert sum(s.shares.improved for s in c.strata) == c.shares.improved
    j = c.to_json()
    assert set(j["null_p95"]) == {"p_plus", "p_minus", "p_chg"}
    for key in ("source", "target", "benchmark", "n_items", "delta", "p_plus", "p_minus", "p_chg",
                "equivalent", "inconclusive", "null_p95", "seed"):
        assert key in j


def test_single_draw_and_loose(tmp_path):
    rows = synthetic_rows({"a": [1.0] * 20, "b": [0.0] * 20}, k=5, seed=0, loose_bonus=0.0)
    for r in rows:
        if r["model"] == "b":
            r["correct_loose"] = True  # loose reading accepts everything b says
    res = analyse_items(table_of(tmp_path, rows), [("a", "b")], n_null=0, single_draw=True)
    (c,) = res.cells
    assert c.single_draw.correct_to_incorrect == 20 and c.single_draw.incorrect_to_correct == 0
    assert c.loose.r_source == 0.0 and c.loose.r_target == 1.0 and c.loose.delta_r == 1.0
    acc = {a.model: a for a in res.accuracy}
    assert acc["b"].r == 1.0 and acc["a"].accuracy == 1.0


def test_usage_errors(planted):
    with pytest.raises(UsageError, match=r"unknown model\(s\) in edges: x, y; models in the table: new, old"):
        analyse_items(planted, [("x", "y")])
    with pytest.raises(UsageError, match="by must be one of benchmark, none; got 'model'"):
        analyse_items(planted, [("old", "new")], by="model")
    with pytest.raises(UsageError, match="ci must be one of newcombe, wald, agresti-caffo"):
        analyse_items(planted, [("old", "new")], ci="exact")
    with pytest.raises(UsageError, match=r"eps must lie in \(0, 1\]"):
        analyse_items(planted, [("old", "new")], eps="2")
    with pytest.raises(UsageError, match="an edge needs two different models, got old:old"):
        analyse_items(planted, [("old", "old")])
    with pytest.raises(UsageError, match="edge must look like SOURCE:TARGET"):
        parse_edge("oldnew")
    assert parse_edge("org:a:org:b", ["org:a", "org:b"]) == ("org:a", "org:b")


def test_screen_exact_bounds(tmp_path):
    # item accuracies for one model: 5/50 = 0.1 (inside, exactly at low), 4/50 (outside), 45/50 = 0.9 (inside)
    rows = []
    for item, ok in (("i1", 5), ("i2", 4), ("i3", 45)):
        rows += [{"model": "m", "item": item, "trial": j, "benchmark": "b",
                  "category": "correct" if j < ok else "wrong"} for j in range(50)]
    res = screen(table_of(tmp_path, rows), low="0.1", high="0.9", threshold="0.6666")
    (r,) = res.rows
    assert (r.n_items, r.informative, r.passes) == (3, 2, True)
    res = screen(table_of(tmp_path, rows), threshold="0.67")
    assert res.rows[0].passes is False
    with pytest.raises(UsageError, match="low must not exceed high"):
        screen(table_of(tmp_path, rows), low="0.9", high="0.1")


def test_results_do_not_depend_on_row_order(tmp_path):
    """The same trials in another row order give the same figures, null and single draw included."""
    rng = np.random.default_rng(8)
    p = rng.uniform(0.2, 0.8, 30)
    rows = synthetic_rows({"old": p, "new": np.clip(p + 0.3, 0, 1)}, k=12, seed=3, benchmark=["x", "y"] * 15)
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    out = []
    for name, rs in (("a.jsonl", rows), ("b.jsonl", shuffled)):
        j = analyse_items(table_of(tmp_path, rs, name), [("old", "new")], n_null=50, seed=3,
                          single_draw=True).to_json()
        del j["input"]["file"]
        out.append((j, sorted(map(orjson.dumps, per_item_rows(analyse_items(
            table_of(tmp_path, rs, name), [("old", "new")], n_null=0))))))
    assert out[0] == out[1]


def test_strata_on_list_valued_metadata_is_a_clear_error(tmp_path):
    rows = synthetic_rows({"a": [0.5, 0.5], "b": [0.5, 0.5]}, k=3, seed=0,
                          metadata={"tags": [["x", "y"], ["z"]], "level": [1, True]})
    t = table_of(tmp_path, rows)
    with pytest.raises(BadInput, match=r"t\.jsonl:1: metadata column 'tags' holds a list \(\['x', 'y'\]\); "
                                       r"strata needs one value per item: a string, a number or true/false"):
        analyse_items(t, [("a", "b")], n_null=0, strata="tags")
    # 1 and true are two strata, not one (Python's True == 1)
    res = analyse_items(t, [("a", "b")], n_null=0, strata="level")
    assert [(s.value, s.shares.n_items) for s in res.cells[0].strata] == [(1, 1), (True, 1)]


def test_null_summary_mean_and_monte_carlo_p_value(tmp_path, planted):
    rng = np.random.default_rng(2)
    p = rng.uniform(0.1, 0.9, 60)
    t = table_of(tmp_path, synthetic_rows({"a": p, "b": p}, k=10, seed=9))
    from fractions import Fraction

    from replicate.stats.fisher import PValueTables
    from replicate.stats.itemtests import Rule
    from replicate.stats.null import permutation_null
    from replicate.trials.engine import _cell_rng

    res = analyse_items(t, [("a", "b")], n_null=200, seed=4, eps="0.1", alpha=0.9)
    (cell,) = res.cells
    r = cell.rows
    # recompute the same draws by hand from the cell's documented random stream
    draws = permutation_null(r.a, r.n1, r.b, r.n2, Rule(PValueTables(), 0.9, (Fraction(1, 10),)),
                             n_resamples=200, rng=_cell_rng(4, "null", "a", "b", "bench")).counts[:, 0, 0]
    plus, minus = draws[:, 0], draws[:, 1]
    obs_plus, obs_minus = cell.shares.improved, cell.shares.regressed
    s = cell.to_json()["null"]
    assert s["replications"] == 200
    assert s["mean"]["p_plus"] == pytest.approx(plus.mean() / 60)
    assert s["p_value"]["p_plus"] == (1 + sum(x >= obs_plus for x in plus.tolist())) / 201
    assert s["p_value"]["p_chg"] == (1 + sum(x + y >= obs_plus + obs_minus for x, y in zip(plus, minus))) / 201
    assert 0.05 < s["p_value"]["p_chg"]  # no true change: the data look like the null
    # planted changes lie beyond every replication: the smallest possible p-value
    big = analyse_items(planted, [("old", "new")], n_null=99).cells[0].to_json()["null"]
    assert big["p_value"]["p_chg"] == 1 / 100
    assert analyse_items(planted, [("old", "new")], n_null=0).cells[0].to_json()["null"] is None


def test_a_cell_under_min_items_is_flagged_with_its_n(planted):
    from replicate.trials.render import render_items

    # 120 items: flagged under --min-items 121, not under 120 (the threshold edges and floors use)
    small = analyse_items(planted, [("old", "new")], n_null=0, min_items=121)
    enough = analyse_items(planted, [("old", "new")], n_null=0, min_items=120)
    (cell,) = orjson.loads(dumps_json(small))["cells"]
    assert cell["small_sample"] is True and cell["n_items"] == 120
    (flag,) = cell["flags"]
    assert flag["code"] == "small_sample" and flag["where"] == "old -> new, benchmark bench"
    assert "only n = 120 items, fewer than --min-items 121" in flag["message"]
    assert orjson.loads(dumps_json(small))["settings"]["min_items"] == 121
    assert "Warning: old -> new, benchmark bench: the cell has only n = 120 items" in render_items(small, "table")
    (ok,) = orjson.loads(dumps_json(enough))["cells"]
    assert ok["small_sample"] is False and ok["flags"] == []
    assert "Warning:" not in render_items(enough, "table")


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval, written out (Wilson 1927)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_strata_sensitivity_and_single_draw_intervals_are_those_of_their_own_items(tmp_path):
    p = np.linspace(0.1, 0.9, 60)
    q = p.copy()
    q[:12] = np.clip(q[:12] + 0.6, 0, 1)
    rows = synthetic_rows({"a": p, "b": q}, k=40, seed=5, metadata={"difficulty": [1, 2, 3] * 20})
    res = analyse_items(table_of(tmp_path, rows), [("a", "b")], by="none", n_null=0, sensitivity="0.1,0.5",
                        strata="difficulty", single_draw=True)
    (c,) = res.cells
    per_item = {r["item"]: r for r in per_item_rows(res)}
    difficulty = {r["item"]: r["difficulty"] for r in rows}
    for s in c.strata:
        mine = [r for item, r in per_item.items() if difficulty[item] == s.value]
        assert s.shares.n_items == len(mine) == 20
        improved = sum(r["class"] == "improved" for r in mine)
        lo, hi = _wilson(improved, 20)
        assert s.intervals["p_plus"].low == pytest.approx(lo, abs=1e-12)
        assert s.intervals["p_plus"].high == pytest.approx(hi, abs=1e-12)
        d = np.array([r["correct_target"] / r["trials_target"] - r["correct_source"] / r["trials_source"] for r in mine])
        half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(len(d))
        assert s.intervals["delta"].low == pytest.approx(d.mean() - half, abs=1e-12)
        assert s.intervals["delta"].high == pytest.approx(d.mean() + half, abs=1e-12)
        assert s.intervals["delta"].replicates is None and s.intervals["delta"].assumes == "independent items"
    for r in c.sensitivity:
        lo, hi = _wilson(r.shares.equivalent, r.shares.n_items)
        assert (r.intervals["equivalent"].low, r.intervals["equivalent"].high) == pytest.approx((lo, hi), abs=1e-12)
    sd = c.single_draw
    lo, hi = _wilson(sd.correct_to_incorrect + sd.incorrect_to_correct, sd.n_items)
    assert (sd.intervals["changed"].low, sd.intervals["changed"].high) == pytest.approx((lo, hi), abs=1e-12)
    js = res.to_json()["cells"][0]
    assert js["strata"][0]["small_sample"] is True  # 20 items < 100
    assert [f["where"] for f in js["flags"]][1:] == ["a -> b, difficulty 1", "a -> b, difficulty 2", "a -> b, difficulty 3"]
