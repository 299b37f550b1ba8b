"""Labels outside the scale under keep, drop and clip (replicate.judge.outofscale), by hand."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.judge.model import LabelledRun, Origins
from replicate.judge.outofscale import apply_out_of_scale, departure_lines
from replicate.labels import LabelSet
from replicate.parsing import UNPARSED


def _run(labels, label_set=LabelSet.ordinal(0, 3)):
    n = len(labels)
    return LabelledRun("r", np.array([f"k{i}" for i in range(n)], dtype=object), np.arange(n, dtype=np.int16) % 4,
                       np.array(labels, dtype=np.int8), "p@1", origins=Origins(np.zeros(n, np.int16),
                                                                               np.arange(1, n + 1, dtype=np.int32)),
                       label_set=label_set)


LABELS = [0, 10, 3, UNPARSED, 5, 2, 10]


def test_keep_leaves_the_run_and_counts_each_stray_value():
    run = _run(LABELS)
    out, o = apply_out_of_scale(run, "keep")
    assert out is run and o.outside == ((5, 1), (10, 2)) and o.count == 3
    assert o.words() == "r: 3 labels outside the scale 0-3 (5 x1, 10 x2), kept as a category of its own"


def test_clip_moves_strays_to_the_nearest_bound_and_leaves_unparsed():
    out, o = apply_out_of_scale(_run(LABELS), "clip")
    assert out.labels.tolist() == [0, 3, 3, UNPARSED, 3, 2, 3] and not out.labels.flags.writeable
    assert o.words().endswith("clipped to 0-3")


def test_drop_removes_the_items_with_their_keys_gold_and_lines():
    out, o = apply_out_of_scale(_run(LABELS), "drop")
    assert out.keys.tolist() == ["k0", "k2", "k3", "k5"] and out.labels.tolist() == [0, 3, UNPARSED, 2]
    assert out.gold.tolist() == [0, 2, 3, 1] and out.origins.line.tolist() == [1, 3, 4, 6]
    assert o.count == 3 and "dropped from the run with their items" in o.words()


def test_a_run_inside_its_scale_or_without_one_is_left_alone():
    for run in (_run([0, 1, 2, 3]), _run([0, 1, 2], LabelSet.categorical("A", "B", "tie")), _run([7], None)):
        for policy in ("keep", "drop", "clip"):
            out, o = apply_out_of_scale(run, policy)
            assert out is run and o.count == 0


def test_a_bad_policy_names_the_choices():
    with pytest.raises(ValueError, match="keep, drop, clip"):
        apply_out_of_scale(_run([0]), "round")


def test_only_departures_head_a_table():
    _, o = apply_out_of_scale(_run(LABELS), "clip")
    assert departure_lines("keep", [o]) == []
    assert departure_lines("clip", [o])[1] == "  " + o.words()
    _, none = apply_out_of_scale(_run([0, 1]), "drop")
    assert departure_lines("drop", [none])[0].endswith("; no label lay outside")
