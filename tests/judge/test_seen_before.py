"""Items.seen_before: whether a new block's key hashes meet any read before, over many files."""

from __future__ import annotations

import numpy as np

from replicate.judge.load.items import Items


def test_seen_before_equals_membership_over_every_earlier_block() -> None:
    rng = np.random.default_rng(7)
    items = Items()
    earlier: list[np.ndarray] = []
    answers = []
    for f in range(300):
        block = rng.integers(-(2**62), 2**62, int(rng.integers(0, 40)))
        if f % 11 == 5 and block.size:  # a key of an earlier block comes again
            donor = next(b for b in reversed(earlier[: -int(rng.integers(1, 4))] or earlier) if b.size)
            block[int(rng.integers(block.size))] = donor[int(rng.integers(donor.size))]
        want = bool(earlier) and bool(np.isin(block, np.concatenate(earlier)).any())
        got = items.seen_before(block)
        assert got == want, f
        answers.append(got)
        # blocks arrive as arrays (bulk paths) or lists (items read one by one)
        items.key_hashes.append(block if f % 3 else [int(h) for h in block])
        earlier.append(block)
    assert sum(answers) >= 20  # the repeats were found, not only the absences


def test_hashes_added_one_by_one_after_a_check_are_seen() -> None:
    items = Items()
    items.key_hashes.append([1, 2, 3])
    assert not items.seen_before(np.array([4], dtype=np.int64))
    items.key_hashes.append([5])
    assert items.seen_before(np.array([9, 5], dtype=np.int64))
    assert items.seen_before(np.array([2], dtype=np.int64))
    assert not items.seen_before(np.array([], dtype=np.int64))
