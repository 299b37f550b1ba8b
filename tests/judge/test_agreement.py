"""Agreement rows of aligned runs: items without gold, categorical labels, the report's lookup (pure, no files)."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.errors import UsageError
from replicate.judge.agreement import GOLD, agreement_report, agreement_rows
from replicate.judge.align import align
from replicate.judge.model import KEY_SEP, NO_GOLD, LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.labels import LabelSet
from replicate.stats.agreement import agreement

KEYS = np.array([f"q{i % 3}{KEY_SEP}d{i}" for i in range(9)], dtype=object)


def _run(name, labels, gold, label_set=LabelSet.ordinal(0, 3)):
    return LabelledRun(name, KEYS, np.array(gold, np.int16), np.array(labels, np.int8), "p@1", label_set=label_set)


def test_items_without_gold_leave_the_gold_rows_only():
    gold = [0, 1, 2, 3, NO_GOLD, 1, 2, 0, 3]
    a = _run("a", [0, 1, 2, 2, 1, 1, 3, 0, 3], gold)
    b = _run("b", [0, 2, 2, 3, 3, 1, 2, 1, 3], gold)
    rows = agreement_rows(align([a, b]), [(0, GOLD), (0, 1)], thresholds=(2,))
    vs_gold, pair = rows[0], rows[2]
    assert (vs_gold.items, pair.items) == (8, 9)
    keep = np.array(gold) != NO_GOLD
    ref = agreement(np.array(a.labels, float)[keep], np.array(gold, float)[keep], weights="quadratic", domain=[0, 1, 2, 3])
    assert vs_gold.value("cohen_kappa_quadratic") == pytest.approx(ref, abs=1e-12)
    ref = agreement(a.labels.astype(float), b.labels.astype(float), figure="krippendorff_alpha", level="ordinal",
                    domain=[0, 1, 2, 3])
    assert pair.value("krippendorff_alpha_ordinal") == pytest.approx(ref, abs=1e-12)
    assert rows[1].binarize == 2 and rows[1].value("cohen_kappa") == pytest.approx(
        agreement(np.array(a.labels, float)[keep], np.array(gold, float)[keep], binarize=2), abs=1e-12)


def test_the_report_is_a_lookup_by_canonical_names():
    gold = [0, 1, 2, 3, 2, 1, 2, 0, 3]
    runs = [_run("a", [0, 1, 2, 2, 1, 1, 3, 0, 3], gold), _run("b", [0, 2, 2, 3, 3, 1, 2, 1, 3], gold)]
    report = agreement_report(align(runs), pairs=True, thresholds=(1, 3),
                              settings=Uncertainty(replicates=30, seed=4, min_items=5))
    assert report.value("spearman", "b", "a") == report.value("spearman", "a", "b")  # either order
    assert report.value("cohen_kappa", "a", binarize=3) == pytest.approx(
        agreement(np.array(runs[0].labels, float), np.array(gold, float), binarize=3), abs=1e-12)
    row = report.row("a", "gold", 1)
    assert row.intervals is not None and row.intervals["scott_pi"].seed == 4 and row.small is None
    with pytest.raises(KeyError):
        report.row("a", "gold", 2)


def test_categorical_labels_give_nominal_figures_only_and_refuse_binarizing():
    cats = LabelSet.categorical("A", "B", "tie")
    gold = [0, 1, 2, 0, 1, 2, 0, 1, 2]
    runs = [_run("x", [0, 1, 2, 0, 0, 2, 1, 1, 2], gold, cats)]
    (row,) = agreement_rows(align(runs), [(0, GOLD)])
    assert row.value("cohen_kappa") is not None and row.value("krippendorff_alpha_nominal") is not None
    assert row.value("cohen_kappa_linear") is None and row.absent["spearman"] == "categorical labels have no order"
    with pytest.raises(UsageError, match="--binarize needs ordered labels"):
        agreement_rows(align(runs), [(0, GOLD)], thresholds=(1,))
