"""Pair counting over aligned runs (alignment, cells of every pair) against hand-computed cells."""

from __future__ import annotations

import math

import numpy as np
import pytest

from replicate.errors import BadInput, UsageError
from replicate.judge.align import align
from replicate.judge.compare import chain, compare
from replicate.judge.model import LabelledRun
from replicate.judge.pairs import pair_counts
from replicate.stats.fourcell import FourCell


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
    edges = chain(runs, uncertainty=None)
    assert [(e.old.name, e.new.name) for e in edges] == [("v0", "v1"), ("v1", "v2")]
    assert edges[0].cells == FourCell(1, 1, 0, 1)
    assert edges[1].cells == FourCell(0, 1, 1, 1)
    assert math.isclose(edges[1].change_rate, 2 / 3)  # a and c differ, b is 0 vs 0


def test_label_values_are_numpy_unique_of_int8_labels():
    from replicate.judge.pairs import label_values

    rng = np.random.default_rng(3)
    for _ in range(300):
        shape = (int(rng.integers(1, 4)), int(rng.integers(0, 40)))
        wide = rng.integers(-128, 128, size=shape).astype(np.int8)
        usual = rng.choice(np.array([-1, 0, 1, 2, 3], dtype=np.int8), size=shape)
        for a in (wide, usual):
            got = label_values(a)
            assert got.dtype == np.int8 and np.array_equal(got, np.unique(a))
    assert np.array_equal(label_values(np.array([5, 1, 5], dtype=np.int64)), [1, 5])  # other dtypes: np.unique
