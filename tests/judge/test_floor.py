"""Rerun floors against hand-computed cells, Jaccard overlaps and verdict boundaries."""

from __future__ import annotations

import statistics
from fractions import Fraction

import numpy as np
import pytest

from replicate.errors import BadInput, UsageError
from replicate.judge.floor import FAR_BEYOND_RULE, Span, floor, place
from replicate.judge.model import LabelledRun
from replicate.stats.fourcell import FourCell


def _run(name, labels, keys="abcdef", gold=(0, 1, 2, 3, 1, 2)):
    return LabelledRun(
        name,
        np.array(list(keys), dtype=object),
        np.array(gold, dtype=np.int16),
        np.array(labels, dtype=np.int8),
        "toy@1",
    )


# item:          a  b  c  d  e   f        gold 0 1 2 3 1 2
R1 = _run("R1", [0, 1, 2, 3, 0, -1])
R2 = _run("R2", [0, 1, 0, 3, 1, 2])
R3 = _run("R3", [1, 1, 2, 0, 1, 2])


def _pairs(fl):
    return {(p.old, p.new): p for p in fl.pairs}


def test_floor_cells_by_hand_intersect():
    fl = floor([R1, R2, R3])
    pairs = _pairs(fl)
    assert list(pairs) == [("R1", "R2"), ("R1", "R3"), ("R2", "R1"), ("R2", "R3"), ("R3", "R1"), ("R3", "R2")]
    # R1 -> R2 over a..e (f unparsed in R1): both a,b,d; only_old c; only_new e
    assert pairs["R1", "R2"].cells == FourCell(3, 1, 1, 0)
    assert pairs["R1", "R2"].changed == 2
    assert pairs["R2", "R1"].cells == FourCell(3, 1, 1, 0)
    # R1 -> R3: both b,c; only_old a,d; only_new e; changed a,d,e
    assert pairs["R1", "R3"].cells == FourCell(2, 2, 1, 0)
    assert pairs["R1", "R3"].changed == 3
    # R2 -> R3 over all six: both b,e,f; only_old a,d; only_new c
    assert pairs["R2", "R3"].cells == FourCell(3, 2, 1, 0)
    assert pairs["R3", "R2"].cells == FourCell(3, 1, 2, 0)
    assert pairs["R2", "R3"].regression_rate == 2 / 6
    assert pairs["R2", "R3"].change_rate == 3 / 6
    # ranges over the six ordered pairs
    assert fl.regression_span == Span(Fraction(1, 6), Fraction(2, 5))
    assert fl.change_span == Span(Fraction(2, 5), Fraction(3, 5))
    js = fl.to_json()
    assert js["regression_rate"] == {"min": 1 / 6, "max": 2 / 5, "width": float(Fraction(2, 5) - Fraction(1, 6))}
    assert js["change_rate"]["min"] == 0.4 and js["change_rate"]["max"] == 0.6
    assert js["pairs"][0] == {
        "old": "R1",
        "new": "R2",
        "n": 5,
        "cells": {"both": 3, "only_old": 1, "only_new": 1, "neither": 0},
        "regression_rate": 0.2,
        "change_rate": 0.4,
        "changed": 2,
    }


def test_floor_cells_under_wrong_policy():
    pairs = _pairs(floor([R1, R2, R3], policy="wrong"))
    # f: R1 unparsed counts wrong, R2 right -> only_new; and a changed label
    assert pairs["R1", "R2"].cells == FourCell(3, 1, 2, 0)
    assert pairs["R1", "R2"].changed == 3


def test_em_mean_and_sample_sd():
    fl = floor([R1, R2, R3])
    ems = [r.em for r in fl.repeats]
    assert ems == [4 / 5, 5 / 6, 4 / 6]
    assert fl.em_mean == pytest.approx(statistics.mean(ems), abs=1e-15)
    assert fl.em_sd == pytest.approx(statistics.stdev(ems), abs=1e-15)  # ddof=1
    assert fl.to_json()["em"]["sd_ddof"] == 1


def test_jaccard_of_regression_sets_by_hand():
    fl = floor([R1, R2, R3])
    # regression sets: R1>R2 {c}, R1>R3 {a,d}, R2>R1 {e}, R2>R3 {a,d}, R3>R1 {e}, R3>R2 {c}
    got = {(o.first, o.second): (o.intersection, o.union) for o in fl.overlaps}
    assert got == {
        (("R1", "R2"), ("R1", "R3")): (0, 3),
        (("R1", "R2"), ("R3", "R2")): (1, 1),
        (("R1", "R3"), ("R2", "R3")): (2, 2),
        (("R2", "R1"), ("R2", "R3")): (0, 3),
        (("R2", "R1"), ("R3", "R1")): (1, 1),
        (("R3", "R1"), ("R3", "R2")): (0, 2),
    }
    # structurally disjoint pairs (old of one = new of the other) are left out
    assert all(o.first[0] != o.second[1] and o.first[1] != o.second[0] for o in fl.overlaps)
    assert fl.jaccard_span == (0.0, 0.5, 1.0)


def test_jaccard_matches_python_sets_on_random_repeats():
    rng = np.random.default_rng(3)
    n = 300
    gold = rng.integers(0, 4, n)
    keys = [f"k{i}" for i in range(n)]
    runs = [_run(f"r{k}", np.where(rng.random(n) < 0.7, gold, rng.integers(-1, 4, n)), keys, gold) for k in range(4)]
    fl = floor(runs)
    lab = {r.name: r.labels for r in runs}

    def regset(a, b):
        return {i for i in range(n) if lab[a][i] == gold[i] and lab[b][i] >= 0 and lab[b][i] != gold[i]}

    ordered = [(a, b) for a in lab for b in lab if a != b]
    expected = [(p, q) for k, p in enumerate(ordered) for q in ordered[k + 1 :] if p[0] != q[1] and p[1] != q[0]]
    assert [(o.first, o.second) for o in fl.overlaps] == expected
    for o in fl.overlaps:
        s, t = regset(*o.first), regset(*o.second)
        assert (o.intersection, o.union) == (len(s & t), len(s | t))


def test_place_boundaries_are_inside():
    span = Span(Fraction(1, 6), Fraction(2, 5))
    assert place(Fraction(1, 6), span).verdict == "inside"
    assert place(Fraction(2, 5), span).verdict == "inside"
    assert place(Fraction(2, 5), span).margin == 0.0
    below = place(Fraction(1, 10), span)
    assert below.verdict == "below" and below.margin == pytest.approx(1 / 6 - 1 / 10)
    assert below.to_min < 0 and below.to_max < 0
    above = place(Fraction(1, 2), span)
    assert above.verdict == "above" and above.margin == pytest.approx(0.1)
    mid = place(Fraction(1, 4), span)
    assert mid.verdict == "inside" and mid.margin == pytest.approx(1 / 4 - 1 / 6)


def test_edge_at_floor_max_is_inside_and_above_is_above():
    old = _run("v1", [1, 1, 1, 1, 1], keys="vwxyz", gold=(1, 1, 1, 1, 1))
    new_at_max = _run("v2", [1, 1, 1, 0, 0], keys="vwxyz", gold=(1, 1, 1, 1, 1))  # 2/5 = floor max
    fl = floor([R1, R2, R3], edge=(old, new_at_max))
    assert fl.edge.verdict == "inside"
    assert fl.edge.regression.margin == 0.0
    js = fl.to_json()["edge"]
    assert js["verdict"] == "inside" and js["regression_rate"] == 0.4 and js["old"]["name"] == "v1"
    new_above = _run("v2", [1, 1, 0, 0, 0], keys="vwxyz", gold=(1, 1, 1, 1, 1))  # 3/5
    edge = floor([R1, R2, R3], edge=(old, new_above)).edge
    assert edge.verdict == "above"
    assert edge.regression.margin == pytest.approx(0.2)
    assert edge.change.verdict == "inside"  # 3/5 is the change-rate max


def _ten(name, flips):
    gold = [1] * 10
    labels = [0 if i in flips else 1 for i in range(10)]
    return _run(name, labels, keys="abcdefghij", gold=gold)


def test_main_far_beyond_rule_and_its_boundary():
    reps = [_ten("rep1", {0}), _ten("rep2", {0, 1})]  # change range [1/10, 1/10]
    close = floor(reps, main=_ten("main", {0, 1, 2})).main  # vs rep1: b,c = 2/10; vs rep2: c = 1/10
    assert [c.change_rate for c in close.against] == [0.2, 0.1]
    assert close.verdict == "inside"  # judged by the closest repeat
    main = _ten("main", {0, 5, 6, 7})  # vs rep1: 3/10, vs rep2: 4/10
    check = floor(reps, main=main).main
    assert check.verdict == "far_beyond" and check.far_beyond
    js = check.to_json()
    assert js["far_beyond"] is True and "rule" not in js
    # the numbers the rule compares: closest 3/10 against 2 x the largest repeat change 1/10
    assert js["far_beyond_rule"] == {"closest_change_rate": 0.3, "factor": 2,
                                     "largest_repeat_change_rate": 0.1, "threshold": 0.2}
    assert "more than twice" in FAR_BEYOND_RULE  # the definition the docs quote
    near = floor(reps, main=_ten("main", {0, 5})).main  # vs rep1: f = 1/10; vs rep2: b,f
    assert near.closest.rate == 0.1 and near.verdict == "inside"
    two = floor(reps, main=_ten("main", {2, 3})).main  # vs rep1: a,c,d = 3/10; vs rep2: a,b,c,d
    assert two.closest.rate == 0.3 and two.verdict == "far_beyond"
    just_twice = floor(reps, main=_ten("main", {1, 2})).main  # vs rep1: a,b,c = 3/10; vs rep2: a,c = 2/10
    assert just_twice.closest.rate == 0.2
    assert just_twice.verdict == "above"  # exactly 2 x max is not "far beyond" (strictly greater is)
    assert just_twice.to_json()["far_beyond"] is False
    assert just_twice.to_json()["far_beyond_rule"]["threshold"] == 0.2


def test_fewer_than_two_repeats_is_a_usage_error():
    with pytest.raises(UsageError, match="a floor needs at least two repeats of one model; got 1"):
        floor([R1])


def test_main_that_is_a_repeat_is_refused():
    with pytest.raises(UsageError, match="main 'R1' is also one of the repeats"):
        floor([R1, R2], main=R1)


def test_repeats_with_different_items_use_shared_items_and_report_it():
    short = _run("R4", [0, 1, 2, 3], keys="abcd", gold=(0, 1, 2, 3))
    fl = floor([R2, short])
    assert fl.shared_items == 4
    assert [(r.name, r.items, r.dropped) for r in fl.repeats] == [("R2", 6, 2), ("R4", 4, 0)]
    assert fl.items_differ and fl.to_json()["items_differ"] is True


def test_disagreeing_gold_names_the_item():
    other = _run("X", [0, 1, 2, 3, 1, 2], gold=(0, 1, 2, 3, 1, 3))
    with pytest.raises(BadInput, match="item f: R1 says 2, X says 3"):
        floor([R1, other])
