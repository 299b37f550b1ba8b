"""The 2 x 2 table of a paired class share, crossed from the release-by-fresh table of classes (by hand)."""

from __future__ import annotations

from replicate.stats.classify import EQUIVALENT, IMPROVED, INCONCLUSIVE, REGRESSED
from replicate.trials.fresh import Agreement

#: rows: release class, columns: fresh class (improved, regressed, equivalent, inconclusive)
TABLE = ((5, 1, 0, 2), (0, 3, 1, 1), (1, 0, 7, 2), (2, 1, 0, 4))


def test_crossed_counts_each_item_by_whether_either_side_puts_it_in_the_classes():
    a = Agreement("s", "t", None, TABLE, 30)
    # improved: both 5; release only 1 + 0 + 2 = 3; fresh only 0 + 1 + 2 = 3; neither the other 19
    assert a.crossed({IMPROVED}) == (5, 3, 3, 19)
    # changed (improved or regressed): both 5 + 1 + 0 + 3 = 9; release only 0 + 2 + 1 + 1 = 4; fresh only 1 + 0 + 2 + 1 = 4
    assert a.crossed({IMPROVED, REGRESSED}) == (9, 4, 4, 13)
    assert a.crossed({EQUIVALENT, INCONCLUSIVE}) == (13, 4, 4, 9)
    assert sum(a.crossed({INCONCLUSIVE})) == 30
