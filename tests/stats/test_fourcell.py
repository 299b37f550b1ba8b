"""Four-cell figures against hand-computed cells and scipy."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from replicate.stats.fourcell import RATIOS, FourCell, figure_arrays
from replicate.stats.intervals import wilson_interval


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


def test_change_rate_needs_labels_and_changed_is_checked():
    assert FourCell(3, 2, 1, 4).change_rate is None  # typed in from a paper: no labels
    assert FourCell(3, 2, 1, 4, changed=5).exact("change_rate") == Fraction(5, 10)
    assert FourCell(3, 2, 1, 4, changed=5) == FourCell(3, 2, 1, 4)  # same table
    with pytest.raises(ValueError, match="changed must be at most n = 10"):
        FourCell(3, 2, 1, 4, changed=11)
    with pytest.raises(ValueError, match="figure must be one of"):
        FourCell(1, 1, 1, 1).exact("nope")


def test_float_view_is_the_rounded_exact_value():
    rng = np.random.default_rng(3)
    for both, only_old, only_new, neither in rng.integers(0, 40, (200, 4)):
        changed = int(rng.integers(0, 1 + only_old + only_new + neither))
        fc = FourCell(both, only_old, only_new, neither, changed=changed)
        for name in RATIOS:
            exact = fc.exact(name)
            assert fc.value(name) == (None if exact is None else float(exact)), name


def test_arrays_evaluate_the_same_definitions_elementwise():
    rng = np.random.default_rng(5)
    shape = (6, 7)
    cells = {k: rng.integers(0, 9, shape) for k in ("both", "only_old", "only_new", "neither")}
    n = cells["both"] + cells["only_old"] + cells["only_new"] + cells["neither"]
    cells["changed"] = np.minimum(cells["only_old"] + cells["only_new"] + 1, n)
    cells["both"][0, 0] = cells["only_old"][0, 0] = cells["only_new"][0, 0] = cells["neither"][0, 0] = 0
    cells["changed"][0, 0] = 0
    arrays = figure_arrays(SimpleNamespace(**cells), list(RATIOS))
    for i in range(shape[0]):
        for j in range(shape[1]):
            fc = FourCell(*(int(cells[k][i, j]) for k in ("both", "only_old", "only_new", "neither")),
                          changed=int(cells["changed"][i, j]))
            for name, arr in arrays.items():
                want = fc.value(name)
                assert (math.isnan(arr[i, j]) if want is None else arr[i, j] == want), (name, i, j)
    assert math.isnan(arrays["regression_rate"][0, 0])  # undefined, never 0


def test_figures_of_many_tables_are_each_tables_exact_figures():
    from replicate.stats.fourcell import edge_figures_json, figure_names
    from replicate.stats.paired import mcnemar_exact_p

    rng = np.random.default_rng(8)
    rows = rng.integers(0, 30, (300, 4))
    rows[:3] = [[0, 0, 0, 0], [5, 0, 0, 0], [0, 0, 4, 2]]  # no items; old always right; old never right
    n = rows.sum(axis=1)
    changed = np.array([int(rng.integers(0, k + 1)) for k in n])
    labelled = rng.random(len(rows)) < 0.7
    cells = SimpleNamespace(**dict(zip(("both", "only_old", "only_new", "neither"), rows.T)), changed=changed)
    got = edge_figures_json(cells, labelled)
    for t, row in enumerate(rows.tolist()):
        fc = FourCell(*row, changed=int(changed[t]) if labelled[t] else None)
        js = got[t]
        assert js["n"] == sum(row) and js["cells"] == dict(zip(("both", "only_old", "only_new", "neither"), row))
        for name in figure_names("edge"):
            exact = fc.exact(name)  # exact fraction, None where undefined or needing labels it lacks
            assert js[name] == (None if exact is None else float(exact)), (name, row, labelled[t])
        assert js["mcnemar_p"] == (None if sum(row) == 0 else mcnemar_exact_p(row[1], row[2]))
    assert got[0]["regression_rate"] is None and got[2]["regression_share_of_old_correct"] is None
    assert any(g["change_rate"] is None for g in got) and any(g["change_rate"] is not None for g in got)


def test_wilson_intervals_of_many_tables_are_each_tables_own():
    from replicate.stats.cimap import wilson_interval_maps
    from replicate.stats.fourcell import FIGURES, proportions

    rng = np.random.default_rng(9)
    rows = rng.integers(0, 50, (200, 4))
    rows[0] = 0
    cells = SimpleNamespace(**dict(zip(("both", "only_old", "only_new", "neither"), rows.T)), changed=rows[:, 1])
    got = wilson_interval_maps(cells, 0.9)
    for t, row in enumerate(rows.tolist()):
        fc = FourCell(*row)
        assert list(got[t]) == list(proportions())
        for name, iv in got[t].items():
            k, n = FIGURES[name].ratio(fc)
            want = wilson_interval(k, n, confidence_level=0.9)  # one count at a time (checked against scipy above)
            assert (iv.low, iv.high) == ((None, None) if want is None else want), (name, row)
            assert iv.clusters == fc.n and iv.confidence_level == 0.9
