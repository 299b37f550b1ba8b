"""The topic bootstrap of ``replicate rankings``: ours against the straightforward loop, same draws.

For S systems over T topics under two qrels, each of R replicates draws T topics with replacement,
takes each system's mean over the drawn topics per qrels and compares the two orderings. The
straightforward loop (``replicate.stats.ranking_reference.bootstrap_loop``) does this replicate by
replicate with ``scipy.stats.kendalltau``, ``scipy.stats.spearmanr`` and tau_AP as printed; ours
(``replicate.stats.ranking.bootstrap_rankings``) draws the same topics and computes all replicates
at once. Per-topic scores are SYNTHETIC (seeded; continuous, so no ties). Prints both times and the
ratio; exits 1 when any replicate's statistics differ by more than 1e-12.
Usage: ``python bench/bench_rankings.py [--small]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replicate.stats.ranking import bootstrap_rankings  # noqa: E402
from replicate.stats.ranking_reference import bootstrap_loop  # noqa: E402


def data(n_systems: int, n_topics: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.2, 0.8, n_systems)[:, None]
    ref = np.clip(quality + 0.25 * rng.standard_normal((n_systems, n_topics)), 0, 1)
    est = np.clip(0.8 * ref + 0.1 + 0.1 * rng.standard_normal((n_systems, n_topics)), 0, 1)
    judged_ref = np.ones(n_topics, bool)
    judged_est = np.ones(n_topics, bool)
    judged_est[-1] = False  # one topic the estimate qrels does not judge
    return ref, judged_ref, est, judged_est


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="12 systems, 25 topics, 200 replicates (CI)")
    args = ap.parse_args()
    S, T, R = (12, 25, 200) if args.small else (60, 50, 1000)
    ref, jr, est, je = data(S, T)
    t0 = time.perf_counter()
    loop = bootstrap_loop(ref, jr, est, je, n_resamples=R, rng=np.random.default_rng(1))
    t1 = time.perf_counter()
    ours = bootstrap_rankings(ref, jr, est, je, n_resamples=R, rng=np.random.default_rng(1))
    t2 = time.perf_counter()
    worst = max(float(np.nanmax(np.abs(ours.values[k] - loop[k]))) for k in loop)
    same_nan = all(np.array_equal(np.isnan(ours.values[k]), np.isnan(loop[k])) for k in loop)
    print(f"topic bootstrap: {S} systems x {T} topics, {R} replicates")
    print(f"  straightforward loop (scipy per replicate, tau_AP as printed): {t1 - t0:.3f} s")
    print(f"  ours (all replicates at once):                                 {t2 - t1:.3f} s")
    print(f"  ratio: {(t1 - t0) / (t2 - t1):.1f}x; largest difference {worst:.2e}")
    if worst > 1e-12 or not same_nan:
        print("DISAGREE: the two bootstraps differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
