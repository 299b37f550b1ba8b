"""The parse shares' counts per cluster (judge.parsed.share_rows) against rows of items counted one by one."""

from __future__ import annotations

import numpy as np

from replicate.judge.parsed import share_rows
from replicate.parsing import UNPARSED
from replicate.stats.shares import share_counts


def test_share_rows_are_the_counts_of_rows_of_items():
    rng = np.random.default_rng(3)
    values = rng.choice([UNPARSED, 0, 1, 3], 500).astype(np.int8)
    codes = rng.integers(0, 12, 500)
    labels = [0, 1, 2, 3, 7]  # 2 and 7 never read (a gold-only label): no hit, every parsed item a miss
    parsed = values != UNPARSED
    hits = np.array([~parsed, parsed, *(values == k for k in labels)])
    over = np.array([np.ones(500, bool), np.ones(500, bool), *([parsed] * len(labels))])
    want = share_counts(hits, over, codes, 12)
    assert np.array_equal(share_rows(values, labels, codes, 12), want)
    assert np.array_equal(share_rows(values, labels, None, 1), want.sum(axis=0, keepdims=True))
    assert np.array_equal(share_rows(np.empty(0, np.int8), [1], None, 1), np.zeros((1, 3, 2), np.int64))
