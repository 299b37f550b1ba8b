"""Floor sample flags count the n a verdict is shown with: items parsed on both sides, not the shared keys."""

from __future__ import annotations

import numpy as np

from replicate.judge.floor import floor
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import UNPARSED


def _runs(n: int = 120):
    keys = np.array([f"q{i // 10}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    gold = np.zeros(n, np.int16)
    base = np.zeros(n, np.int8)
    rep = base.copy()
    rep[::10] = 1
    mk = lambda name, lab: LabelledRun(name, keys, gold, lab, "toy@1")  # noqa: E731
    return mk, base, rep


def test_an_edge_sharing_enough_items_but_compared_on_too_few_is_flagged_small():
    mk, base, rep = _runs()
    new = base.copy()
    new[:25] = UNPARSED  # 120 shared items, 95 parsed on both sides under intersect
    new[30:40] = 1
    fl = floor([mk("R1", base), mk("R2", rep)], edge=(mk("old", base), mk("new", new)),
               uncertainty=Uncertainty(replicates=50, min_items=100))
    assert fl.edge is not None and fl.edge.comparison.cells.n == 95
    assert fl.sample_flags == ()  # the repeats are compared on all 120
    (flag,) = fl.edge.sample_flags
    assert flag.code == "small_sample" and "compared on only n = 95 items, fewer than --min-items 100" in flag.message
    assert fl.to_json()["edge"]["small_sample"] is True


def test_a_floor_whose_pairs_lose_items_to_unparsed_outputs_is_flagged_with_the_pairs_n():
    mk, base, rep = _runs()
    rep2 = rep.copy()
    rep2[-30:] = UNPARSED
    fl = floor([mk("R1", base), mk("R2", rep2)], uncertainty=Uncertainty(replicates=50, min_items=100))
    assert {p.cells.n for p in fl.pairs} == {90}
    (flag,) = fl.sample_flags
    assert flag.code == "small_sample"
    assert "the smallest repeat pair is compared on only n = 90 items, fewer than --min-items 100" in flag.message
    fine = floor([mk("R1", base), mk("R2", rep)], uncertainty=Uncertainty(replicates=50, min_items=100))
    assert fine.sample_flags == ()
