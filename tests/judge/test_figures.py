"""Four-cell figures against hand-computed cells and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.errors import BadInput, UsageError
from replicate.judge.align import align
from replicate.judge.compare import chain, compare
from replicate.judge.figures import FourCell, pair_counts, wilson_interval
from replicate.judge.model import LabelledRun


def test_published_recomputation_figures():
    # GPT-4o Mini -> GPT-5 Mini as printed in a published recomputation.
    fc = FourCell(both=6252, only_old=5776, only_new=1455, neither=7163)
    assert fc.n == 20646
    assert round(100 * fc.regression_rate, 1) == 28.0
    assert round(100 * fc.regression_share_of_old_correct, 1) == 48.0
    assert round(100 * fc.backward_rate, 1) == 7.0
    assert round(100 * fc.independent_regression_rate, 1) == 36.5
    assert round(fc.independence_ratio, 2) == 0.77
    # exact fractions, not just rounding
    assert fc.regression_rate == 5776 / 20646
    assert fc.regression_share_of_old_correct == 5776 / 12028
    assert fc.independent_regression_rate == pytest.approx((12028 / 20646) * (1 - 7707 / 20646), rel=1e-15)


def test_identity_forward_minus_backward_is_accuracy_difference():
    fc = FourCell(10, 7, 3, 5)
    assert fc.regression_rate - fc.backward_rate == pytest.approx(fc.em_old - fc.em_new, abs=1e-15)
    assert fc.accuracy_difference == (7 - 3) / 25


def test_undefined_figures_are_none_not_zero():
    assert FourCell(0, 0, 0, 0).regression_rate is None
    assert FourCell(0, 0, 0, 0).independence_ratio is None
    # old never right -> independent rate 0 -> ratio undefined
    assert FourCell(0, 0, 4, 6).independence_ratio is None
    # new always right -> denominator 0 as well
    assert FourCell(5, 0, 5, 0).independence_ratio is None
    assert FourCell(0, 0, 3, 2).regression_share_of_old_correct is None


@pytest.mark.parametrize("b,c", [(0, 0), (5, 5), (12, 3), (1, 40), (300, 251)])
def test_mcnemar_matches_scipy_binomtest(b, c):
    fc = FourCell(100, b, c, 50)
    expected = 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5).pvalue
    assert fc.mcnemar_p() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (5776, 20646)])
def test_wilson_matches_scipy(k, n):
    res = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(res.low, abs=1e-12)
    assert hi == pytest.approx(res.high, abs=1e-12)


def test_fourcell_rejects_bad_counts():
    with pytest.raises(ValueError, match="only_old must be a non-negative integer"):
        FourCell(1, -1, 0, 0)
    with pytest.raises(ValueError, match="figure must be one of"):
        FourCell(1, 1, 1, 1).confidence_interval("nope")


def _run(name, keys, gold, labels):
    return LabelledRun(
        name,
        np.array(keys, dtype=object),
        np.array(gold, dtype=np.int16),
        np.array(labels, dtype=np.int8),
        "toy@1",
    )


def test_compare_cells_by_hand_with_unparsed_policies():
    keys = list("abcdefgh")
    gold = [0, 1, 2, 3, 0, 1, 2, 3]
    # item:   a  b  c  d  e   f  g  h
    old = _run("old", keys, gold, [0, 1, 2, 0, 0, 2, -1, 3])
    new = _run("new", keys, gold, [0, 0, 2, 3, 1, 2, 2, -1])
    # intersect drops g (old unparsed) and h (new unparsed):
    # a: both, b: only_old, c: both, d: only_new, e: only_old, f: neither
    cmp = compare(old, new, policy="intersect")
    assert (cmp.cells.both, cmp.cells.only_old, cmp.cells.only_new, cmp.cells.neither) == (2, 2, 1, 1)
    assert cmp.changed == 3  # b, d, e differ; f is 2 vs 2
    assert cmp.old.unparsed == 1 and cmp.new.unparsed == 1
    # wrong: g -> old wrong, new right: only_new; h -> old right, new wrong: only_old
    cmp = compare(old, new, policy="wrong")
    assert (cmp.cells.both, cmp.cells.only_old, cmp.cells.only_new, cmp.cells.neither) == (2, 3, 2, 1)
    assert cmp.changed == 5  # b, d, e, g, h
    assert cmp.change_rate == 5 / 8


def test_pair_counts_match_a_plain_loop():
    rng = np.random.default_rng(7)
    n, r = 500, 5
    gold = rng.integers(0, 4, n)
    keys = [f"q{i}" for i in range(n)]
    runs = [_run(f"r{k}", keys, gold, rng.integers(-1, 4, n)) for k in range(r)]
    aligned = align(runs)
    for policy in ("intersect", "wrong"):
        pc = pair_counts(aligned, policy=policy)
        for i in range(r):
            for j in range(r):
                a, b = runs[i].labels, runs[j].labels
                keep = (a >= 0) & (b >= 0) if policy == "intersect" else np.ones(n, bool)
                ca, cb = (a == gold) & keep, (b == gold) & keep
                assert pc.both[i, j] == np.sum(ca & cb)
                assert pc.only_old[i, j] == np.sum(ca & ~cb & keep)
                assert pc.only_new[i, j] == np.sum(~ca & cb & keep)
                assert pc.neither[i, j] == np.sum(~ca & ~cb & keep)
                assert pc.changed[i, j] == np.sum((a != b) & keep)


def test_align_intersects_and_reports_dropped_items():
    a = _run("a", ["x", "y", "z"], [1, 2, 3], [1, 2, 3])
    b = _run("b", ["z", "y", "w"], [3, 2, 0], [3, 0, 0])
    al = align([a, b])
    assert al.keys.tolist() == ["y", "z"]
    assert al.labels.tolist() == [[2, 3], [0, 3]]
    assert al.dropped == (1, 1)
    assert not al.labels.flags.writeable


def test_align_refuses_disagreeing_gold_naming_the_item():
    a = _run("a", ["q1\x1fd1", "q2\x1fd2"], [1, 2], [1, 2])
    b = _run("b", ["q1\x1fd1", "q2\x1fd2"], [1, 3], [1, 2])
    with pytest.raises(BadInput, match=r"item q2 / d2: a says 2, b says 3"):
        align([a, b])


def test_align_refuses_duplicate_names():
    a = _run("a", ["x"], [1], [1])
    with pytest.raises(UsageError, match="repeated: a"):
        align([a, a])


def test_chain_gives_adjacent_edges():
    keys = ["a", "b", "c"]
    runs = [_run(f"v{i}", keys, [1, 1, 1], lab) for i, lab in enumerate([[1, 1, 0], [1, 0, 0], [0, 0, 1]])]
    edges = chain(runs)
    assert [(e.old.name, e.new.name) for e in edges] == [("v0", "v1"), ("v1", "v2")]
    assert edges[0].cells == FourCell(1, 1, 0, 1)
    assert edges[1].cells == FourCell(0, 1, 1, 1)
    assert math.isclose(edges[1].change_rate, 2 / 3)  # a and c differ, b is 0 vs 0
