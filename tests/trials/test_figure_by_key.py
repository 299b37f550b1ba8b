"""A cell's and a screen row's figure read by its JSON key, exact, with why it is undefined (CellResult.figure,
ScreenRow.figure: what verify's trial claims read), checked by hand on a tiny table."""

from __future__ import annotations

from fractions import Fraction

import pytest

from replicate.trials.engine import analyse_items
from replicate.trials.load import read_trials
from replicate.trials.screen import ScreenRow
from support.synth.trials import write_jsonl


def _row(model: str, item: str, trial: int, category: str) -> dict:
    return {"model": model, "benchmark": "b", "item": item, "trial": trial, "category": category}


@pytest.fixture
def cell(tmp_path):
    """Three items, ten trials each: i1 goes from 0/10 to 10/10 (reliably improved), i2 stays 5/10, i3 from
    10/10 to 0/10 (reliably regressed)."""
    rows = []
    for item, (a, b) in {"i1": (0, 10), "i2": (5, 5), "i3": (10, 0)}.items():
        for t in range(10):
            rows.append(_row("a", item, t, "correct" if t < a else "wrong"))
            rows.append(_row("b", item, t, "correct" if t < b else "wrong"))
    write_jsonl(rows, tmp_path / "t.jsonl")
    (c,) = analyse_items(read_trials(tmp_path / "t.jsonl"), [("a", "b")], n_null=0).cells
    return c


def test_a_cell_figure_by_key(cell):
    assert cell.figure("n") == (3, None)
    assert cell.figure("improved") == (Fraction(1, 3), None)
    assert cell.figure("improved", count=True) == (1, None)
    assert cell.figure("p_chg", count=True) == (2, None)
    assert cell.figure("delta") == (Fraction(0), None)  # (0 + 1/2 + 1) / 3 on both sides
    assert cell.figure("delta_r") == (None, "no item has a loose reading on both sides")
    assert cell.figure("null_p95.p_plus") == (None, "the permutation null was not run")  # n_null=0
    assert cell.figure("null_p95.p_up") == (None, "the null has no 'p_up'; keys: p_plus, p_minus, p_chg")
    with pytest.raises(KeyError):
        cell.figure("mean")


def test_a_screen_row_figure_by_key():
    row = ScreenRow("b", n_items=8, informative=2, excluded_items=0, per_model={}, passes=False)
    assert row.figure("n_items") == (8, None)
    assert row.figure("share") == row.figure("share", count=True) == (Fraction(1, 4), None)  # a share, never a count
    assert row.figure("informative_items") == (Fraction(1, 4), None)
    assert row.figure("informative_items", count=True) == (2, None)
    assert row.figure("passes") == (False, None)
    empty = ScreenRow("b", n_items=0, informative=0, excluded_items=3, per_model={}, passes=False)
    assert empty.figure("n_items") == (0, None)
    assert empty.figure("share") == (None, "no item has a non-error trial")
