"""Counting the four cells of every ordered pair of aligned runs (pure; alignment, not figures).

:func:`pair_counts` computes the cells and label changes of every ordered pair
at once with matrix products; :meth:`PairCounts.cells` hands one pair to
:class:`~replicate.stats.fourcell.FourCell`, and the matrix evaluates the same
figure definitions over the whole arrays (:func:`~replicate.stats.fourcell.figure_arrays`).
The unparsed policy decides which items a pair counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from replicate.judge.align import Aligned
from replicate.judge.model import readonly
from replicate.parsing import UNPARSED
from replicate.stats.fourcell import FourCell
from replicate.stats.policy import POLICIES, Policy, check_policy  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class PairCounts:
    """Four cells and label changes of every ordered pair (row = old, column = new)."""

    names: tuple[str, ...]
    policy: Policy
    n: np.ndarray
    both: np.ndarray
    only_old: np.ndarray
    only_new: np.ndarray
    neither: np.ndarray
    changed: np.ndarray
    unlabelled: tuple[bool, ...] = ()  # per run: True when it carries correctness verdicts only

    def has_labels(self, i: int, j: int) -> bool:
        """Whether both runs carry labels (so label changes mean something)."""
        return not (self.unlabelled and (self.unlabelled[i] or self.unlabelled[j]))

    def cells(self, i: int, j: int) -> FourCell:
        """The table of the pair old = run i, new = run j, with its label changes (None without labels)."""
        changed = self.changed[i, j] if self.has_labels(i, j) else None
        return FourCell(self.both[i, j], self.only_old[i, j], self.only_new[i, j], self.neither[i, j], changed=changed)


def _gram(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Counts of items where row i of ``a`` and row j of ``b`` are both set (exact)."""
    # Sums of 0/1 products are exact integers in float32 up to 2**24 items (and in
    # float64 far beyond); float32 halves the matrix product's cost.
    dtype: type[np.floating[Any]] = np.float32 if a.shape[1] < (1 << 24) else np.float64
    return np.rint(a.astype(dtype) @ b.astype(dtype).T).astype(np.int64)


def outcomes(aligned: Aligned, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(correct, counted), each (n_runs, n_items): the label equals gold; the item counts under ``policy``.

    ``intersect`` counts a run's parsed items only; ``wrong`` counts every
    item, an unparsed label being wrong (it never equals a gold grade).
    """
    labels = aligned.labels
    correct = labels == aligned.gold[None, :]
    counted = labels != UNPARSED if policy == "intersect" else np.ones_like(correct)
    return correct, counted


def label_values(labels: np.ndarray) -> np.ndarray:
    """The distinct values of an int8 label array, ascending (as ``np.unique``).

    Marked in a table of the 256 int8 values: ``np.unique`` of a plain array
    imports ``numpy.ma`` (about 50 ms of a command's start-up) to ask whether
    it is masked.
    """
    if labels.dtype != np.int8:
        return np.unique(labels)
    seen = np.zeros(256, dtype=bool)
    seen[labels.ravel().astype(np.int16) + 128] = True
    return (np.flatnonzero(seen) - 128).astype(np.int8)


def pair_counts(aligned: Aligned, *, policy: Policy = "intersect") -> PairCounts:
    """Cells and label changes for all ordered pairs of ``aligned`` runs.

    ``intersect`` drops, per pair, the items unparsed on either side;
    ``wrong`` keeps them and counts an unparsed output as wrong (and as a
    label of its own when counting changes).
    """
    check_policy(policy)
    labels = aligned.labels
    correct, valid = outcomes(aligned, policy)
    wrong = valid & ~correct
    n = _gram(valid, valid)
    only_old = _gram(correct, wrong)
    values = label_values(labels)
    if policy == "intersect":
        values = values[values != UNPARSED]
    agree = sum((_gram(labels == v, labels == v) for v in values), np.zeros_like(n))
    out = PairCounts(
        names=aligned.names,
        policy=policy,
        n=n,
        both=_gram(correct, correct),
        only_old=only_old,
        only_new=only_old.T.copy(),
        neither=_gram(wrong, wrong),
        changed=n - agree,
        unlabelled=tuple(getattr(r, "yields", "outputs") == "verdicts" for r in aligned.runs),
    )
    for arr in (out.n, out.both, out.only_old, out.only_new, out.neither, out.changed):
        readonly(arr)
    return out
