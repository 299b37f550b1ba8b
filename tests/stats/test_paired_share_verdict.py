"""The verdict on a paired share: Newcombe's interval, and the exact McNemar test for "does not replicate"."""

from __future__ import annotations

from scipy.stats import binomtest

from replicate.stats.paired import mcnemar_exact_p
from replicate.stats.replication import (
    DOES_NOT_REPLICATE,
    REPLICATES,
    UNDERPOWERED,
    paired_share_difference,
    paired_share_verdict,
    verdict,
)


def _paired(both: int, only_r: int, only_f: int, neither: int):
    from dataclasses import replace

    return replace(paired_share_difference(both, only_r, only_f, neither), p_value=mcnemar_exact_p(only_r, only_f))


def test_five_against_none_of_200_excludes_0_by_the_interval_but_not_by_the_exact_test():
    c = _paired(0, 5, 0, 195)
    assert c.high < 0 and verdict(c.low, c.high, 0.05) == DOES_NOT_REPLICATE  # the interval alone
    assert c.p_value == binomtest(0, 5, 0.5).pvalue == 0.0625
    assert paired_share_verdict(c, 0.05) == UNDERPOWERED
    assert paired_share_verdict(c, 0.06) == REPLICATES  # the interval lies inside +-6 points


def test_ten_against_none_does_not_replicate_and_agreement_replicates():
    c = _paired(0, 10, 0, 190)
    assert binomtest(0, 10, 0.5).pvalue < 0.05 and paired_share_verdict(c, 0.05) == DOES_NOT_REPLICATE
    same = _paired(30, 0, 0, 170)
    assert same.difference == 0 and same.p_value == 1.0 and paired_share_verdict(same, 0.05) == REPLICATES
