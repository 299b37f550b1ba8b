"""The swap null of a paired class share: does a fresh collection classify the same items as the release did?

Under "the same truth" (the same models asked the same items again), each
item's trial counts on the release side and on the fresh side are
exchangeable. An item's own test (its Fisher p-value, whether its difference
reaches ε, whether its interval lies inside (-ε, ε)) moves with its counts;
what ties the items of one side together is the Benjamini-Hochberg step,
which decides every item's significance from the whole side's p-values. A
McNemar test on the items that changed class treats them as independent,
and so rejects too often (a side whose p-values run low lets many items
through BH together).

The swap null keeps that coupling: in each replicate every shared item's two
readings trade sides with probability 1/2, BH is redone on each side over all
its items (items only one side has keep their place), the items are
classified again, and the share difference (fresh - release, over the shared
items) is recorded. The two-sided p-value is the share of replicates whose
difference is at least as far from 0 as the observed one (the observed
counted in, so it is never 0). Seeded; pure.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from replicate.stats.classify import EQUIVALENT, IMPROVED, INCONCLUSIVE, REGRESSED
from replicate.stats.itemtests import bh

SWAP_TEST = "swap null: each shared item's two readings exchanged at random, BH and classes redone on each side"


@dataclass(frozen=True)
class Side:
    """One side's items, shared ones first (``shared`` of them, in the same order on both sides).

    ``p``: Fisher p-values; ``up``/``down``: the difference reaches ``+ε``/``-ε``; ``inside``: the
    item's interval lies inside (-ε, ε). Items past ``shared`` belong to this side only.
    """

    p: np.ndarray
    up: np.ndarray
    down: np.ndarray
    inside: np.ndarray
    shared: int


def _classes(arrays: tuple[np.ndarray, ...], alpha: float) -> np.ndarray:
    """Class codes from (p, up, down, inside), BH along the last axis."""
    p, up, down, inside = arrays
    sig = bh(p) <= alpha
    cls = np.where(inside, EQUIVALENT, INCONCLUSIVE).astype(np.int8)
    cls = np.where(sig & up, IMPROVED, cls)
    return np.where(sig & down, REGRESSED, cls)


def swap_null_p(released: Side, fresh: Side, classes: Collection[int], *, alpha: float,
                n_resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """(observed fresh - released share of ``classes`` over the shared items, the swap null's two-sided p)."""
    n = released.shared
    if n != fresh.shared or n == 0:
        raise ValueError("both sides need the same, non-zero number of shared items")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {n_resamples}")
    wanted = np.array(sorted(classes), dtype=np.int8)

    def share(cls: np.ndarray) -> np.ndarray:
        return np.isin(cls[..., :n], wanted).mean(axis=-1)

    arrays = ("p", "up", "down", "inside")
    observed = float(share(_classes(tuple(getattr(fresh, a) for a in arrays), alpha))
                     - share(_classes(tuple(getattr(released, a) for a in arrays), alpha)))
    swap = np.random.default_rng(seed).random((n_resamples, n)) < 0.5

    def side(me: Side, other: Side) -> np.ndarray:
        parts = []
        for a in arrays:
            mine, theirs = getattr(me, a), getattr(other, a)
            head = np.where(swap, theirs[:n], mine[:n])
            tail = np.broadcast_to(mine[n:], (n_resamples, mine.shape[0] - n))
            parts.append(np.concatenate([head, tail], axis=1))
        return _classes(tuple(parts), alpha)

    null = share(side(fresh, released)) - share(side(released, fresh))
    extreme = int((np.abs(null) >= abs(observed) - 1e-12).sum())
    return observed, (extreme + 1) / (n_resamples + 1)
