"""Baselines for the independence ratio that allow for item difficulty (pure, vectorised).

The classic baseline ``EM_old * (1 - EM_new)`` is the regression rate of two
judges whose errors are independent *and* whose items are all equally hard.
Items are not: a hard item is often wrong under both versions, so two judges
whose errors are independent *given the item* already regress less than the
classic baseline, and their ratio is below 1 (0.5-0.8 at EM 50%, depending on
how difficulty is spread). Two baselines that do not assume equal items:

- **given item difficulty** (:func:`difficulty_baseline`, needs at least two
  runs besides the edge's two): the runs are taken to be right independently
  given the item, run j with probability ``expit(a_j - d_item)`` (the Rasch
  model). Given each item's total (how many runs, the edge's two included,
  are right on it) the pattern it shows does not depend on its difficulty, so
  the fit (:mod:`replicate.stats.rasch`, conditional maximum likelihood)
  estimates the two sides' ability difference and the weights of the other
  runs' counts without estimating any item's difficulty; the baseline is the
  regression count expected given the items' totals, over the edge's items.
  The other runs enter only through how many of them are right (their errors
  may be shared among themselves). Limits: the runs must judge the same items
  on the same scale, and the model gives every judge the same slope on
  difficulty (judges that separate easy from hard items more sharply than
  others do are not Rasch judges).
- **the rerun floor** (in ``floor``): where repeats of one judge exist, the
  regression rate between two repeats is what two draws of the *same* judge
  give; an edge's regression over that rate says how far beyond rerun noise it is.

An earlier definition estimated each item's difficulty from the other runs'
smoothed share right and gave each side a logistic shift of it (slope 1):
with few other runs that estimate is noise (pure noise when items are equally
hard) and the ratio of independent judges came out 0.83-1.27 instead of 1;
``bench/calibration_difficulty.py`` measures both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from replicate.stats import rasch
from replicate.stats.policy import Policy

UNPARSED = -1
DIFFICULTY_METHOD = (
    "errors independent given the item (Rasch: one ability per run); conditional maximum likelihood given each "
    "item's total, the other runs entering by their count right"
)
MIN_OTHER_RUNS = 2


def has_difficulty(n_runs: int) -> bool:
    """Whether ``n_runs`` aligned runs leave each edge enough other runs (:data:`MIN_OTHER_RUNS`) to fit difficulty."""
    return n_runs - 2 >= MIN_OTHER_RUNS


_COLUMNS = 128
_CLUSTER_CHUNK = 32  # clusters whose Gram products are held at once, at most
#: Bytes of one chunk's Gram products and cells at most (fewer clusters a chunk as runs grow): a cluster's Gram
#: products ``(R + 1, 2R, 2R)`` float32 are 16 R^2 (R + 1) bytes whatever the pairs, its cells ``(4, K, P)``
#: 16 K P bytes (11 MB each at 88 runs and every ordered pair), and the reader of a chunk makes copies of them
_CHUNK_BYTES = 1 << 25


@dataclass(frozen=True)
class DifficultyBaseline:
    """Per edge, the regression rate expected from errors independent given the item.

    ``expected[p]`` is NaN where undefined (no item, or fewer than
    :data:`MIN_OTHER_RUNS` other runs). ``other_runs`` is how many runs
    besides the edge's two the fit reads.
    """

    pairs: tuple[tuple[int, int], ...]
    expected: np.ndarray
    other_runs: int
    #: per edge, the fitted parameters ``(alpha, lambda_0..lambda_m)`` of :mod:`replicate.stats.rasch`
    #: ``(P, m + 2)``, the start of each bootstrap replicate's refit (None when not fitted)
    theta: np.ndarray | None = None
    #: per edge, its regressions over the expected count (NaN where undefined; None when not fitted)
    ratio: np.ndarray | None = None

    def value(self, p: int) -> float | None:
        x = float(self.expected[p])
        return None if np.isnan(x) else x

    def to_json(self, p: int, regression_rate: float | None) -> dict:
        exp = self.value(p)
        ratio = None if exp is None or exp == 0 or regression_rate is None else regression_rate / exp
        return {
            "expected_regression_rate": exp,
            "ratio": ratio,
            "method": DIFFICULTY_METHOD,
            "other_runs": self.other_runs,
        }


@dataclass(frozen=True)
class DifficultyCounts:
    """What the difficulty fit reads, per cluster and edge: all of it counts, so a bootstrap sums them.

    ``cells[c, 2 * x + y, k, p]`` counts the items of cluster c valid on both
    sides of edge p on which k of the other runs are right, the old side is
    right (x = 1) or wrong (x = 0) and the new side right (y = 1) or wrong
    (float32, exact integers; edges last).
    """

    pairs: tuple[tuple[int, int], ...]
    cells: np.ndarray  # (G, 4, K, P)
    other_runs: int


def difficulty_counts(
    labels: np.ndarray,
    gold: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    *,
    codes: np.ndarray | None = None,
    n_clusters: int = 1,
    policy: Policy = "intersect",
) -> DifficultyCounts | None:
    """The counts :func:`difficulty_baseline` fits, per cluster (``codes`` None: one cluster); None with too few runs.

    The chunks of :func:`difficulty_count_chunks`, side by side (a bootstrap that sums them as they come
    holds one chunk at a time instead: :func:`replicate.stats.independence_boot.cluster_difficulty`).
    """
    chunks = difficulty_count_chunks(labels, gold, pairs, codes=codes, n_clusters=n_clusters, policy=policy)
    if chunks is None:
        return None
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    cells = np.concatenate(list(chunks), axis=0)
    cells.setflags(write=False)
    return DifficultyCounts(pairs, cells, np.asarray(labels).shape[0] - 2)


def difficulty_count_chunks(
    labels: np.ndarray,
    gold: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    *,
    codes: np.ndarray | None = None,
    n_clusters: int = 1,
    policy: Policy = "intersect",
) -> Iterator[np.ndarray] | None:
    """:attr:`DifficultyCounts.cells` of up to :data:`_CLUSTER_CHUNK` clusters at a time (fewer when their
    Gram products and cells would pass :data:`_CHUNK_BYTES`), in cluster order: ``(chunk, 4, K, P)`` float32 each; None with too
    few runs. The counts are exact integers whatever the chunks.

    Items are grouped by (cluster, right runs in all); within a group one Gram
    product of the runs' valid-and-wrong / valid-and-right rows counts, for
    every pair of runs, the items each side has wrong or right.
    """
    labels = np.asarray(labels)
    gold = np.asarray(gold)
    R, N = labels.shape
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    if not has_difficulty(R) or not pairs:
        return None
    codes = np.zeros(N, np.int64) if codes is None else np.asarray(codes, dtype=np.int64)
    return _chunks(labels, gold, pairs, codes, n_clusters, policy)


def _chunks(
    labels: np.ndarray, gold: np.ndarray, pairs: tuple[tuple[int, int], ...], codes: np.ndarray, n_clusters: int,
    policy: Policy,
) -> Iterator[np.ndarray]:
    R, N = labels.shape
    K = R - 1
    correct = (labels == gold[None, :]) & (labels != UNPARSED)
    valid = labels != UNPARSED if policy == "intersect" else np.ones_like(correct)
    total = correct.sum(axis=0)  # right runs per item, the edge's own two included
    group = codes * (R + 1) + total
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(n_clusters * (R + 1) + 1))
    rows = np.concatenate([valid & ~correct, correct & valid])[:, order].astype(np.float32)  # row x * R + r
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    sizes = np.diff(bounds)
    step = max(1, min(_CLUSTER_CHUNK, _CHUNK_BYTES // (16 * R * R * (R + 1) + 16 * K * len(pairs))))
    for c0 in range(0, n_clusters, step):
        c1 = min(c0 + step, n_clusters)
        g0 = c0 * (R + 1)
        # per (cluster, total) group, its Gram matrix: float32 sums of 0/1 products, exact below 2**24 items
        grams = np.zeros(((c1 - c0) * (R + 1), 2 * R, 2 * R), dtype=np.float32)
        for g in np.flatnonzero(sizes[g0 : c1 * (R + 1)]).tolist():
            start, stop = int(bounds[g0 + g]), int(bounds[g0 + g + 1])
            # small column blocks: products of this size run on one thread, which a busy
            # machine serves far faster than a threaded product of the whole group
            for lo in range(start, stop, _COLUMNS):
                block = rows[:, lo : min(lo + _COLUMNS, stop)]
                grams[g] += block @ block.T
        flat = grams.reshape(len(grams), 4 * R * R)
        cells = np.empty((c1 - c0, 4, K, len(pairs)), dtype=np.float32)
        for x in (0, 1):
            for y in (0, 1):
                # (chunk, R + 1, P): items with total t on which a is right (x) and b right (y)
                cnt = np.take(flat, (x * R + a) * 2 * R + y * R + b, axis=1).reshape(c1 - c0, R + 1, len(pairs))
                cells[:, 2 * x + y] = cnt[:, x + y : x + y + K]  # the other runs' count is t - x - y
        yield cells


def difficulty_baseline(
    labels: np.ndarray, gold: np.ndarray, pairs: Sequence[tuple[int, int]], *, policy: Policy = "intersect"
) -> DifficultyBaseline:
    """Expected regression rate of each edge under errors independent given item difficulty.

    ``labels`` is (runs x items), -1 = unparsed; items of an edge are those
    valid for both of its runs under ``policy`` (as for its four cells). An
    unparsed label of another run counts as not right when estimating difficulty.
    """
    return fit_difficulty(difficulty_counts(labels, gold, pairs, policy=policy), pairs, np.asarray(labels).shape[0])


def fit_difficulty(counts: DifficultyCounts | None, pairs: Sequence[tuple[int, int]], n_runs: int) -> DifficultyBaseline:
    """:func:`difficulty_baseline` from its counts (summed over clusters), with each edge's fitted parameters."""
    pairs = tuple((int(a), int(b)) for a, b in pairs)
    if counts is None:
        return DifficultyBaseline(pairs, np.full(len(pairs), np.nan), max(n_runs - 2, 0))
    return fit_totals(counts.cells.sum(axis=0, dtype=np.float64), pairs, counts.other_runs)


def fit_totals(totals: np.ndarray, pairs: tuple[tuple[int, int], ...], other_runs: int) -> DifficultyBaseline:
    """:func:`fit_difficulty` from the cells summed over clusters, float64 ``(4, K, P)``."""
    s = rasch.strata(totals.transpose(2, 0, 1))  # rows: edges
    theta, _ = rasch.fit(s)
    reg, _ = rasch.expected(theta, s)
    n = s.items
    expected = np.divide(reg, n, out=np.full(len(pairs), np.nan), where=n > 0)
    ratio = np.divide(s.regressed, reg, out=np.full(len(pairs), np.nan), where=reg > 0)
    expected.setflags(write=False)
    return DifficultyBaseline(pairs, expected, other_runs, theta, ratio)
