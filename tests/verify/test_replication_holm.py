"""Holm's correction over the claims replicated against one fresh collection (issue 28: wrong "does not
replicate" on correct claims at most 5%, for a paper's claims together)."""

from __future__ import annotations

import numpy as np
import pytest

from replicate.stats.replication import (
    DOES_NOT_REPLICATE,
    PAIRED_T_TEST,
    REPLICATES,
    UNDERPOWERED,
    Comparison,
    holm,
)
from replicate.verify.matching import Computed
from replicate.verify.replication import NOT_AFTER_HOLM, Replicated, family_corrected


def step_down(p: list[float], alpha: float) -> set[int]:
    """Holm's procedure as written: sorted ascending, reject while p_(j) <= alpha / (m - j), then stop."""
    order = sorted(range(len(p)), key=lambda k: p[k])
    out: set[int] = set()
    for j, k in enumerate(order):
        if p[k] > alpha / (len(p) - j):
            break
        out.add(k)
    return out


def test_holm_by_hand():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06 (never below an earlier one)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([]) == []
    assert holm([0.7]) == [0.7]
    assert holm([0.6, 0.9]) == [1.0, 1.0]  # capped at 1


@pytest.mark.parametrize("seed", range(5))
def test_holm_rejects_what_the_step_down_procedure_rejects(seed):
    rng = np.random.default_rng(seed)
    p = list(np.concatenate([rng.uniform(0, 0.02, 4), rng.uniform(0, 1, 16)]))
    adjusted = holm(p)
    assert all(a >= q for a, q in zip(adjusted, p))
    for alpha in (0.01, 0.05, 0.1):
        assert {k for k, a in enumerate(adjusted) if a <= alpha} == step_down(p, alpha)


def rep(low: float, high: float, p: float | None, verdict: str, tolerance: float = 0.05) -> Replicated:
    d = (low + high) / 2
    return Replicated(Computed(0.5, n=100), verdict, PAIRED_T_TEST, tolerance, Comparison(d, low, high, PAIRED_T_TEST, p))


def test_a_verdict_that_holm_does_not_keep_is_withheld_with_its_reason():
    reps = [
        rep(0.01, 0.09, 0.02, DOES_NOT_REPLICATE),  # alone p 0.02; third smallest of 6: 4 x 0.02 = 0.08 -> not kept
        rep(0.005, 0.02, 0.011, DOES_NOT_REPLICATE),  # 5 x 0.011 = 0.055; inside the tolerance -> replicates
        rep(0.2, 0.3, 1e-6, DOES_NOT_REPLICATE),  # 6e-6: kept
        rep(-0.03, 0.03, 0.5, REPLICATES),
        rep(-0.2, 0.2, 0.9, UNDERPOWERED),
        rep(-0.03, 0.04, 0.6, REPLICATES),
        rep(-0.2, -0.1, None, DOES_NOT_REPLICATE),  # no test: not in the family, keeps its verdict
    ]
    got = family_corrected(reps)
    assert [g.verdict for g in got] == [UNDERPOWERED, REPLICATES, DOES_NOT_REPLICATE, REPLICATES, UNDERPOWERED,
                                        REPLICATES, DOES_NOT_REPLICATE]
    assert got[0].why == got[1].why == NOT_AFTER_HOLM
    assert got[1].p_adjusted == pytest.approx(0.055) and got[2].p_adjusted == pytest.approx(6e-6)
    assert got[2].why is None and got[6].why is None
    assert [g.family for g in got] == [6] * 6 + [0]
    assert got[0].p_adjusted == pytest.approx(0.08)
    assert got[6].p_adjusted is None
    js = got[0].to_json()
    assert js["p_value"] == 0.02 and js["p_holm"] == pytest.approx(0.08) and js["holm_family"] == 6


def test_one_tested_claim_is_its_own_family():
    got = family_corrected([rep(0.01, 0.09, 0.02, DOES_NOT_REPLICATE)])
    assert got[0].verdict == DOES_NOT_REPLICATE and got[0].p_adjusted == 0.02 and got[0].family == 1
