"""The straightforward transcriptions that :mod:`replicate.stats.ranking` is held to (pure).

Shared by the tests and ``bench/bench_rankings.py``; written for plainness, not speed.

- :func:`tau_ap_printed`: tau_AP as printed by Yilmaz, Aslam and Robertson (SIGIR 2008), for vectors
  without ties, O(N^2) loops.
- :func:`bootstrap_loop`: the topic bootstrap one replicate at a time: the same draws, each system's
  mean over the drawn judged topics, then ``scipy.stats.kendalltau``, ``scipy.stats.spearmanr`` and
  :func:`tau_ap_printed` (which is why it asks for scores without ties).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats


def tau_ap_printed(reference: Sequence[float], estimate: Sequence[float]) -> float:
    """Sort the systems by ``estimate``, best first; ``C(i)`` = how many of the ``i - 1`` systems above
    position ``i`` ``reference`` also puts above the one at ``i``; ``2/(N-1) * sum C(i)/(i-1) - 1``."""
    n = len(reference)
    order = sorted(range(n), key=lambda s: -estimate[s])
    total = 0.0
    for i in range(2, n + 1):
        at = order[i - 1]
        c = sum(1 for above in order[: i - 1] if reference[above] > reference[at])
        total += c / (i - 1)
    return 2 / (n - 1) * total - 1


def bootstrap_loop(
    per_topic_ref: np.ndarray, judged_ref: np.ndarray, per_topic_est: np.ndarray, judged_est: np.ndarray,
    *, n_resamples: int, rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """The statistics replicate by replicate (draws as ``rng.integers(T, size=(n_resamples, T))``)."""
    n_topics = per_topic_ref.shape[1]
    draws = rng.integers(n_topics, size=(n_resamples, n_topics))
    out = {name: np.full(n_resamples, np.nan) for name in ("kendall_tau", "tau_ap", "spearman")}
    for r in range(n_resamples):
        a_topics = [t for t in draws[r] if judged_ref[t]]
        b_topics = [t for t in draws[r] if judged_est[t]]
        if not a_topics or not b_topics:
            continue
        a = per_topic_ref[:, a_topics].mean(axis=1)
        b = per_topic_est[:, b_topics].mean(axis=1)
        out["kendall_tau"][r] = stats.kendalltau(a, b).statistic
        out["spearman"][r] = stats.spearmanr(a, b).statistic
        out["tau_ap"][r] = tau_ap_printed(a.tolist(), b.tolist())
    return out
