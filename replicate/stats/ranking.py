"""Agreement between two orderings of the same systems (pure): Kendall's tau-b, Spearman's rho, tau_AP.

Definitions: docs/design/design.md, "Definitions (system-ranking agreement)"; user guide: docs/rankings.md.

The inputs are two score vectors over the same systems (``reference[i]`` and
``estimate[i]`` score system ``i``; higher is better), e.g. each system's mean
nDCG@10 under human qrels and under an LLM judge's qrels.

- :func:`kendall_tau`: Kendall's tau-b (ties adjusted), ``scipy.stats.kendalltau``.
- :func:`spearman`: Spearman's rho (average ranks for ties), ``scipy.stats.spearmanr``.
- :func:`tau_ap`: the AP rank correlation of Yilmaz, Aslam and Robertson (SIGIR 2008), which
  weighs swaps near the top more. It is asymmetric: ``reference`` is the true ordering,
  ``estimate`` the one judged. With the systems sorted by ``estimate`` (best first) and
  ``C(i)`` the number of the ``i - 1`` systems above position ``i`` that ``reference`` also
  puts above the system at ``i``::

      tau_AP = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1)  -  1

  **Ties** (the formula assumes none): ``tau_ap`` is the expected value of that formula when
  every tie, in either vector, is broken uniformly at random (the two independently). In
  closed form: a pair tied in ``reference`` counts 1/2 toward ``C``; a system in a group of
  ``t`` systems tied in ``estimate`` from position ``p`` on takes each position ``p..p+t-1``
  with probability ``1/t``; two systems of one such group are concordant with probability 1/2.
  Without ties in ``reference`` this is Urbano and Marrero's tau_AP_a (ICTIR 2017, the
  "accuracy" scenario); without ties at all it is the formula above.

All three are undefined (NaN) for fewer than two systems; tau-b and rho are NaN when a
vector is constant (scipy's rule). :func:`bootstrap_rankings` computes them on topic
bootstrap replicates of per-topic scores, all replicates at once (:func:`kendall_tau_many`,
:func:`spearman_many`, :func:`tau_ap_many`; held to scipy and to the formula row by row in the tests).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: The statistics of two orderings this module computes, in output order.
STATISTICS: tuple[str, ...] = ("kendall_tau", "tau_ap", "spearman")


def _vectors(reference: np.ndarray, estimate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(estimate, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"reference and estimate must be vectors of one length; got shapes {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("reference and estimate must be finite")
    return x, y


def kendall_tau(reference: np.ndarray, estimate: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (``scipy.stats.kendalltau``, variant b); NaN when undefined."""
    x, y = _vectors(reference, estimate)
    if len(x) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant vector and returns NaN
        return float(stats.kendalltau(x, y, variant="b").statistic)


def spearman(reference: np.ndarray, estimate: np.ndarray) -> float:
    """Spearman's rho of two score vectors (``scipy.stats.spearmanr``); NaN when undefined."""
    x, y = _vectors(reference, estimate)
    if len(x) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.spearmanr(x, y).statistic)


def _harmonic(n: int) -> np.ndarray:
    """``H[m] = sum_{r=1..m} 1/r`` for m = 0..n (``H[0] = 0``)."""
    return np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))]) if n > 0 else np.zeros(1)


def tau_ap_many(reference: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """:func:`tau_ap` of each row of two ``(R, N)`` score arrays at once (the module docstring's ties rule)."""
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(estimate, dtype=np.float64)
    if x.ndim != 2 or x.shape != y.shape:
        raise ValueError(f"reference and estimate must be arrays of one shape (R, N); got {x.shape} and {y.shape}")
    R, n = x.shape
    if n < 2:
        return np.full(R, np.nan)
    # above[r, j, i]: system j strictly above system i in the estimate
    above = y[:, :, None] > y[:, None, :]
    tied = y[:, :, None] == y[:, None, :]
    p = 1 + above.sum(axis=1)  # first position of i's tie group (1-based)
    t = tied.sum(axis=1)  # size of i's tie group
    # concordance of (j above i): reference puts j above i (1), ties it (1/2)
    conc = (x[:, :, None] > x[:, None, :]) + 0.5 * (x[:, :, None] == x[:, None, :])
    c = (above * conc).sum(axis=1)
    H = _harmonic(n)
    # E[1 / (position - 1)] with the position uniform on p..p+t-1; c is 0 in the top group (p = 1)
    weight = np.where(p > 1, (H[np.maximum(p + t - 2, 0)] - H[np.maximum(p - 2, 0)]) / t, 0.0)
    term_above = (c * weight).sum(axis=1)
    # within a tie group, position p+k has k group mates above it, each concordant with probability 1/2:
    # sum_{k=1..t-1} k / (2 (p + k - 1)) per group, spread over its t members
    within = ((t - 1) - (p - 1) * (H[p + t - 2] - H[p - 1])) / (2 * t)
    return 2.0 / (n - 1) * (term_above + within.sum(axis=1)) - 1.0


def tau_ap(reference: np.ndarray, estimate: np.ndarray) -> float:
    """tau_AP (Yilmaz et al. 2008) of ``estimate`` against ``reference``, ties as in the module docstring."""
    x, y = _vectors(reference, estimate)
    return float(tau_ap_many(x[None, :], y[None, :])[0])


def correlations(reference: np.ndarray, estimate: np.ndarray) -> dict[str, float]:
    """Every statistic of :data:`STATISTICS` of two score vectors."""
    return {"kendall_tau": kendall_tau(reference, estimate), "tau_ap": tau_ap(reference, estimate),
            "spearman": spearman(reference, estimate)}


def swapped_pairs(reference: np.ndarray, estimate: np.ndarray) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` that ``reference`` orders ``i`` above ``j`` and ``estimate`` ``j`` above ``i``.

    Pairs tied in either vector are not swaps. Sorted by ``i``'s then ``j``'s position in ``reference``.
    """
    x, y = _vectors(reference, estimate)
    order = np.argsort(-x, kind="stable")
    return [(int(i), int(j)) for a, i in enumerate(order) for j in order[a + 1:]
            if x[i] > x[j] and y[j] > y[i]]


@dataclass(frozen=True)
class RankingReplicates:
    """The statistics of :data:`STATISTICS` on each topic bootstrap replicate (NaN where undefined)."""

    values: dict[str, np.ndarray]  # statistic -> (n_resamples,)
    empty: int  # replicates that drew no topic of one of the two qrels (left out: NaN)


def replicate_means(weights: np.ndarray, per_topic: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Each system's mean per-topic score in each replicate: ``(R, S)``, NaN where no judged topic was drawn.

    ``weights`` ``(R, T)``: how often each topic is drawn; ``per_topic`` ``(S, T)`` (any value where not
    judged); ``judged`` ``(T,)`` bool: the topics this qrels scores (the mean runs over them only).
    """
    w = weights * judged[None, :]
    totals = w.sum(axis=1, keepdims=True).astype(np.float64)
    sums = w.astype(np.float64) @ np.where(judged[None, :], per_topic, 0.0).T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, sums / totals, np.nan)


def kendall_tau_many(reference: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of two ``(R, N)`` arrays; NaN where a row is constant (as scipy).

    ``(C - D) / sqrt((P - T_x)(P - T_y))`` over the ``P = N(N-1)/2`` pairs, ``T`` the pairs tied in one vector:
    scipy's tau-b, counted here on all rows at once (the tests hold it to ``scipy.stats.kendalltau`` row by row).
    """
    x = np.asarray(reference, dtype=np.float64)
    y = np.asarray(estimate, dtype=np.float64)
    sx = (x[:, :, None] > x[:, None, :]).astype(np.int8) - (x[:, :, None] < x[:, None, :])
    sy = (y[:, :, None] > y[:, None, :]).astype(np.int8) - (y[:, :, None] < y[:, None, :])
    s = np.einsum("rij,rij->r", sx, sy, dtype=np.int64)  # ordered pairs: 2 (C - D)
    nx = np.count_nonzero(sx, axis=(1, 2)).astype(np.float64)  # 2 (P - T_x)
    ny = np.count_nonzero(sy, axis=(1, 2)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((nx > 0) & (ny > 0), s / np.sqrt(nx * ny), np.nan)


def spearman_many(reference: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of two ``(R, N)`` arrays: Pearson's r of scipy's average ranks, row by row;
    NaN where a row is constant."""
    rx = stats.rankdata(np.asarray(reference, dtype=np.float64), axis=1)
    ry = stats.rankdata(np.asarray(estimate, dtype=np.float64), axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=1) / den, np.nan)


def _block(n_systems: int) -> int:
    """Replicates per block in :func:`bootstrap_rankings`: a block's pairwise arrays stay near 8 MB."""
    return max(1, (1 << 20) // max(1, n_systems * n_systems))


def bootstrap_rankings(
    per_topic_ref: np.ndarray, judged_ref: np.ndarray, per_topic_est: np.ndarray, judged_est: np.ndarray,
    *, n_resamples: int, rng: np.random.Generator,
) -> RankingReplicates:
    """The statistics on topic bootstrap replicates.

    Topics ``T`` are the union of the two qrels' topics (columns of the ``(S, T)`` per-topic arrays). A
    replicate draws ``T`` topics uniformly with replacement (``rng.integers(T, size=(n_resamples, T))``,
    as :func:`replicate.stats.bootstrap.cluster_weights`); each system's score under a qrels is its mean
    over the drawn topics that qrels judges, counted as often as drawn (the sample itself gives the
    means of the point estimate). All replicates are computed together, in blocks
    (:func:`kendall_tau_many`, :func:`tau_ap_many`, :func:`spearman_many`); a replicate that drew no
    topic of one qrels is left out (NaN) and counted.
    """
    from replicate.stats.bootstrap import cluster_weights

    n_topics = per_topic_ref.shape[1]
    weights = cluster_weights(rng, n_topics, n_resamples)
    ref = replicate_means(weights, per_topic_ref, judged_ref)
    est = replicate_means(weights, per_topic_est, judged_est)
    ok = ~(np.isnan(ref).any(axis=1) | np.isnan(est).any(axis=1))
    values = {name: np.full(n_resamples, np.nan) for name in STATISTICS}
    rows = np.flatnonzero(ok)
    many = {"kendall_tau": kendall_tau_many, "tau_ap": tau_ap_many, "spearman": spearman_many}
    step = _block(ref.shape[1])
    for start in range(0, rows.size, step):
        block = rows[start:start + step]
        for name, f in many.items():
            values[name][block] = f(ref[block], est[block])
    for v in values.values():
        v.setflags(write=False)
    return RankingReplicates(values, int(n_resamples - rows.size))
