"""Fisher p-value tables and BH against scipy, entry by entry."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control, fisher_exact

from replicate.stats.fisher import PValueTables, fisher_table
from replicate.stats.itemtests import bh


@pytest.mark.parametrize(
    "n1,n2",
    [(1, 1), (1, 7), (3, 2), (10, 10), (17, 23), (50, 50), (49, 50), (50, 47), (40, 5)],
)
def test_every_table_entry_equals_scipy_fisher_exact(n1, n2):
    table = fisher_table(n1, n2)
    assert table.shape == (n1 + 1, n2 + 1)
    for a in range(n1 + 1):
        for b in range(n2 + 1):
            expected = fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue
            assert table[a, b] == expected, (a, b)  # bit-for-bit, tie tolerance included


def test_table_includes_scipy_tie_cases():
    # Symmetric tables are where scipy's relative tolerance decides; p == 1 exactly.
    t = fisher_table(50, 50)
    assert t[25, 25] == 1.0
    assert t[0, 50] == fisher_exact([[0, 50], [50, 0]]).pvalue
    # Zero row sums give p = 1 (scipy's early return).
    assert fisher_table(0, 5).tolist() == [[1.0] * 6]


def test_table_is_read_only_and_rejects_negative_sizes():
    t = fisher_table(3, 3)
    with pytest.raises(ValueError, match="read-only"):
        t[0, 0] = 0.5
    with pytest.raises(ValueError, match="n1 and n2 must be >= 0"):
        fisher_table(-1, 3)


def test_lookup_mixes_sizes_in_one_array():
    rng = np.random.default_rng(7)
    n1 = rng.integers(1, 30, size=200)
    n2 = rng.integers(1, 30, size=200)
    a = rng.integers(0, n1 + 1)
    b = rng.integers(0, n2 + 1)
    tables = PValueTables()
    got = tables.lookup(a, n1, b, n2)
    want = [fisher_exact([[x, m - x], [y, k - y]]).pvalue for x, m, y, k in zip(a, n1, b, n2)]
    assert got.tolist() == want
    assert tables.n_tables == len(set(zip(n1.tolist(), n2.tolist())))


def test_bh_equals_scipy_including_ties_and_rows():
    rng = np.random.default_rng(3)
    p = np.round(rng.random(500), 2)  # many ties
    assert bh(p).tolist() == false_discovery_control(p, method="bh").tolist()
    rows = rng.random((6, 40))
    want = np.stack([false_discovery_control(r, method="bh") for r in rows])
    assert bh(rows).tolist() == want.tolist()
    assert bh(np.array([0.03])).tolist() == [0.03]
    assert bh(np.zeros(0)).shape == (0,)
