"""All-pairs matrices against a plain loop, baselines against scipy, sanity flags."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.judge.align import align
from replicate.judge.matrix import Baseline, baselines, matrix, pearson_r, sanity_flags
from replicate.judge.model import LabelledRun
from replicate.stats.fourcell import FourCell, figure_names


def _run(name, keys, gold, labels):
    return LabelledRun(
        name, np.array(keys, dtype=object), np.array(gold, dtype=np.int16), np.array(labels, dtype=np.int8), "toy@1"
    )


def _random_runs(seed=11, n=400, r=5):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 4, n)
    keys = [f"q{i}" for i in range(n)]
    runs = []
    for k in range(r):
        labels = np.where(rng.random(n) < 0.6, gold, rng.integers(0, 4, n))
        labels[rng.random(n) < 0.03] = -1
        runs.append(_run(f"m{k}", keys, gold, labels))
    return runs, gold


def _loop_figures(old, new, gold, policy):
    """The straightforward per-pair loop over items, dicts keyed by item."""
    a = dict(zip(old.keys.tolist(), old.labels.tolist()))
    b = dict(zip(new.keys.tolist(), new.labels.tolist()))
    g = dict(zip(old.keys.tolist(), gold.tolist()))
    both = only_old = only_new = neither = changed = 0
    for key, x in a.items():
        y = b[key]
        if policy == "intersect" and (x < 0 or y < 0):
            continue
        rx, ry = x == g[key], y == g[key]
        both += rx and ry
        only_old += rx and not ry
        only_new += ry and not rx
        neither += not rx and not ry
        changed += x != y
    return FourCell(both, only_old, only_new, neither), changed


@pytest.mark.parametrize("policy", ["intersect", "wrong"])
def test_matrix_matches_a_plain_loop(policy):
    runs, gold = _random_runs()
    m = matrix(runs, policy=policy)
    assert set(m.figures) == set(figure_names("matrix"))
    comps = {(c.old.name, c.new.name): c for c in m.comparisons()}
    assert len(comps) == 5 * 4
    for i, old in enumerate(runs):
        for j, new in enumerate(runs):
            if i == j:
                continue
            cells, changed = _loop_figures(old, new, gold, policy)
            c = comps[old.name, new.name]
            assert c.cells == cells and c.changed == changed
            n = cells.n
            assert m.figures["regression_rate"][i, j] == cells.only_old / n
            assert m.figures["regression_share_of_old_correct"][i, j] == cells.only_old / cells.old_correct
            assert m.figures["independence_ratio"][i, j] == pytest.approx(cells.independence_ratio, rel=1e-14)
            assert m.figures["label_agreement"][i, j] == pytest.approx(1 - changed / n, rel=1e-14)
    assert not m.figures["regression_rate"].flags.writeable


def test_undefined_figures_are_nan_in_the_matrix():
    keys = ["a", "b"]
    never = _run("never", keys, [1, 1], [0, 0])  # never right: share of old-correct undefined
    always = _run("always", keys, [1, 1], [1, 1])
    m = matrix([never, always])
    assert math.isnan(m.figures["regression_share_of_old_correct"][0, 1])
    # always -> never: old_correct 2, new wrong on 2 -> ratio = 2*2/(2*2) = 1
    assert m.figures["independence_ratio"][1, 0] == 1.0
    # never -> always: old never right -> undefined
    assert math.isnan(m.figures["independence_ratio"][0, 1])


def test_baselines_against_scipy_and_by_hand():
    runs, gold = _random_runs(seed=5, n=300, r=3)
    al = align(runs)
    for policy in ("intersect", "wrong"):
        for b, run in zip(baselines(al, policy=policy), runs):
            parsed = run.labels >= 0
            x, y = run.labels[parsed].astype(float), gold[parsed].astype(float)
            assert b.n_scored == parsed.sum()
            assert b.mae == pytest.approx(np.mean(np.abs(x - y)), abs=1e-15)
            assert b.pearson_r == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
            correct = np.sum(run.labels == gold)
            assert b.em == correct / (parsed.sum() if policy == "intersect" else len(gold))


def test_pearson_r_undefined_for_constant_labels():
    assert pearson_r(np.array([1, 1, 1]), np.array([0, 1, 2])) is None
    assert pearson_r(np.array([1]), np.array([0])) is None


def test_small_baseline_by_hand():
    a = _run("a", ["x", "y", "z", "w"], [0, 1, 3, 2], [0, 2, 1, -1])
    b = _run("b", ["x", "y", "z", "w"], [0, 1, 3, 2], [0, 1, 3, 2])
    ba, bb = matrix([a, b]).baselines
    assert (ba.n, ba.correct, ba.unparsed, ba.n_scored) == (3, 1, 1, 3)
    assert ba.mae == (0 + 1 + 2) / 3
    assert bb.mae == 0.0 and bb.em == 1.0 and bb.pearson_r == pytest.approx(1.0)


def _codes(flags):
    return sorted((f.code, f.run) for f in flags)


def test_labels_outside_the_scale_raise_mae_above_scale():
    # a parser that read a 0-10 scale: labels 7-9 against gold 0-3 give an MAE above 3
    keys = list("abcd")
    gold = [0, 1, 0, 2]
    ten = _run("ten-scale", keys, gold, [9, 8, 7, 9])
    ok = _run("ok", keys, gold, [0, 1, 0, 2])
    m = matrix([ten, ok], scale=(0, 3))
    assert m.baselines[0].mae == (9 + 7 + 7 + 7) / 4 > 3
    assert _codes(m.flags) == [("labels_outside_scale", "ten-scale"), ("mae_above_scale", "ten-scale")]
    msg = next(f.message for f in m.flags if f.code == "mae_above_scale")
    assert msg.startswith("MAE 7.5 exceeds the range 3 of the label scale 0-3")


def test_gold_outside_scale_is_flagged_once():
    keys = list("ab")
    m = matrix([_run("a", keys, [5, 1], [1, 1]), _run("b", keys, [5, 1], [0, 1])])
    gold_flags = [f for f in m.flags if f.code == "gold_outside_scale"]
    assert len(gold_flags) == 1 and gold_flags[0].run is None
    assert gold_flags[0].message == "1 gold grade(s) outside the scale 0-3"


def test_printed_figures_can_be_checked():
    # baselines typed in from a printed report: an MAE of 3.517 on a 0-3 scale and an EM of 1.2
    printed = [
        Baseline("x", 100, 0, 0, 100, 50, 100, 3.517, 0.3, em=0.5),
        Baseline("y", 100, 0, 0, 100, 120, 100, 0.8, 0.3, em=1.2),
        Baseline("z", 80, 0, 0, 80, 40, 80, 0.8, 0.3, em=0.5),
    ]
    assert _codes(sanity_flags(printed, scale=(0, 3))) == [
        ("em_outside_unit", "y"),
        ("mae_above_scale", "x"),
        ("n_differs", "z"),
    ]


def test_n_differs_and_items_differ_flags():
    keys = list("abcde")
    gold = [0, 1, 2, 3, 0]
    full = _run("full", keys, gold, [0, 1, 2, 3, 0])
    same = _run("same", keys, gold, [0, 1, 2, 0, 0])
    holes = _run("holes", keys, gold, [0, -1, -1, 3, 0])
    extra = _run("extra", keys + ["f"], gold + [1], [0, 1, 2, 3, 0, 1])
    m = matrix([full, same, holes, extra])
    assert _codes(m.flags) == [("items_differ", "extra"), ("n_differs", "holes")]
    nd = next(f for f in m.flags if f.code == "n_differs")
    assert nd.message == "n = 3 is 40.0% below the largest n = 5 (2 unparsed)"
    assert str(nd) == "holes: n = 3 is 40.0% below the largest n = 5 (2 unparsed) [n_differs]"
    # under 'wrong' every run's n is the shared item count
    assert _codes(matrix([full, same, holes, extra], policy="wrong").flags) == [("items_differ", "extra")]


def test_n_differs_tolerance_boundary():
    def base(name, n):
        return Baseline(name, 1000, 0, 1000 - n, n, n // 2, n, 0.5, 0.5, em=0.5)

    runs = [base("full", 1000), base("at", 990), base("past", 989)]
    # 1% of 1000 = 10 fewer items is tolerated; 11 fewer is flagged
    assert _codes(sanity_flags(runs)) == [("n_differs", "past")]
    assert _codes(sanity_flags(runs, n_tolerance=0.0)) == [("n_differs", "at"), ("n_differs", "past")]


def test_constant_labels_flag_undefined_r():
    keys = list("abc")
    m = matrix([_run("flat", keys, [0, 1, 2], [1, 1, 1]), _run("ok", keys, [0, 1, 2], [0, 1, 2])])
    assert _codes(m.flags) == [("r_undefined", "flat")]


def test_matrix_json_shape():
    runs, _ = _random_runs(n=50, r=3)
    js = matrix(runs).to_json()
    assert [r["name"] for r in js["runs"]] == ["m0", "m1", "m2"]
    assert len(js["pairs"]) == 6
    assert (js["pairs"][0]["old"]["name"], js["pairs"][0]["new"]["name"]) == ("m0", "m1")
    assert {"cells", "regression_rate", "change_rate", "independence_ratio", "parser"} <= set(js["pairs"][0])
    assert js["unparsed_policy"] == "intersect" and js["scale"] == {"min": 0, "max": 3}


def test_comparisons_equal_the_compare_module():
    from replicate.judge.compare import comparison_of

    runs, _ = _random_runs(n=60, r=3)
    m = matrix(runs, policy="wrong")
    expected = [comparison_of(m.aligned, m.counts, i, j) for i, j in m.ordered_pairs()]
    assert m.comparisons() == expected


def test_pairs_json_computed_over_all_pairs_equals_each_edges_own():
    """matrix's pairs are written from arrays over all pairs; each must equal the edge's own JSON, with a run of
    verdicts among them (its pairs have no label changes) and with and without intervals."""
    from dataclasses import replace as with_

    from replicate.judge.uncertainty import Uncertainty

    runs, _ = _random_runs(n=120, r=4)
    runs[2] = with_(runs[2], yields="verdicts")
    for settings in (None, Uncertainty(replicates=30, confidence_level=0.9)):
        m = matrix(runs, uncertainty=settings)
        pairs = m.to_json()["pairs"]
        assert pairs == [c.to_json() for c in m.comparisons()]
        verdict_pairs = [p for p in pairs if "m2" in (p["old"]["name"], p["new"]["name"])]
        assert len(verdict_pairs) == 6 and all(p["change_rate"] is None for p in verdict_pairs)
        assert all(p["change_rate"] is not None for p in pairs if p not in verdict_pairs)
