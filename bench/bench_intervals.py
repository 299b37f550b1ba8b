"""Benchmark: bootstrap intervals for every ordered pair of a 22-run matrix, a plain per-pair loop vs ours.

Data: the seeded correlated judges of ``bench_matrix.make_runs`` (22 runs x
20,646 items, 200 items per query id, so 104 query clusters), 462 ordered
pairs, 1,000 replicates, clusters = the query id.

- straightforward: for each pair and each replicate, draw the clusters,
  gather their items and count the cells with numpy (the loop a user would
  write); timed on a few pairs and extrapolated to all 462;
- ours: :func:`replicate.judge.uncertainty.edge_uncertainty` for all 462
  pairs at once (cluster bootstrap, clustered McNemar, difficulty baseline
  with its intervals, the Interval objects), as ``matrix`` runs it.

The difficulty baseline's intervals refit the baseline in every replicate;
they are checked apart: the straightforward refit (each replicate's counts
fitted from scratch by the full-sample fit, ``independence.fit_difficulty``,
one replicate at a time, every edge its own fit) against ours
(:func:`replicate.stats.independence_boot.cluster_difficulty_replicates`: all
replicates at once, each refit from the full-sample fit moved by one chord
step, chord steps near the maximum, a reverse edge read off its partner's),
on the replicates a matrix refits; they agree to 1e-9.

The two agree exactly on the pairs the loop ran (same seed -> same clusters
drawn). Then the share intervals add to ``matrix`` itself: in memory
(``matrix()`` with and without intervals), and, unless ``--no-process``, as
whole ``replicate matrix -f json`` processes over a generated 22-run release
with ``--replicates 0`` (which still computes what needs no resampling: the
clustered McNemar test, the difficulty baseline's point values, the
small-sample flags) and the default 1,000, in two cache states (cold:
``--no-cache``; warm: run and label caches kept).

The whole-process share is a small difference of two noisy times on a shared
machine, so it is measured as pairs: each round runs both variants back to
back (in alternating order), the round's share is (with - without) / without,
and the figure is the median share over the rounds, printed with its
interquartile range and min-max. A round both of whose processes a busy
neighbour slowed moves the times but hardly the share.

    python bench/bench_intervals.py [--small] [--loop-pairs N] [--no-process] [--rounds N]
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_matrix import FULL, SMALL, make_runs  # noqa: E402

from replicate.judge.align import align  # noqa: E402
from replicate.judge.matrix import matrix  # noqa: E402
from replicate.judge.model import KEY_SEP  # noqa: E402
from replicate.judge.uncertainty import (  # noqa: E402
    Uncertainty,
    difficulty_replicates,  # noqa: E402
    edge_uncertainty,
)
from replicate.stats.bootstrap import Clusters, cluster_weights, interval_figures  # noqa: E402
from replicate.stats.independence import DifficultyCounts, difficulty_counts, fit_difficulty  # noqa: E402
from replicate.stats.independence_boot import cluster_difficulty_replicates  # noqa: E402

FIGURES = interval_figures()  # every edge figure of the one table (replicate.stats.fourcell)

REPLICATES = 1000


def straightforward(labels: np.ndarray, gold: np.ndarray, codes: np.ndarray, n_clusters: int, pairs, *, seed: int):
    """Per pair, per replicate: resample clusters, gather items, count; the regression rate's printed 95% interval."""
    members = [np.flatnonzero(codes == c) for c in range(n_clusters)]
    correct = labels == gold[None, :]
    valid = labels >= 0
    rng = np.random.default_rng(seed)
    draws = [rng.integers(n_clusters, size=n_clusters) for _ in range(REPLICATES)]  # shared by every pair, as ours
    out = []
    for a, b in pairs:
        rates = []
        for drawn in draws:
            items = np.concatenate([members[c] for c in drawn])
            ok = valid[a, items] & valid[b, items]
            n = int(ok.sum())
            only_old = int((ok & correct[a, items] & ~correct[b, items]).sum())
            rates.append(only_old / n)
        lo, hi = np.quantile(rates, [0.025, 0.975])
        # the printed interval: arms stretched for G clusters (t, G/(G-1)), at least the Wilson interval, within [0, 1]
        ok = valid[a] & valid[b]
        k, n = int((ok & correct[a] & ~correct[b]).sum()), int(ok.sum())
        point, G = k / n, n_clusters
        c = math.sqrt(G / (G - 1)) * stats.t.ppf(0.975, G - 1) / stats.norm.ppf(0.975)
        wilson = stats.binomtest(k, n).proportion_ci(method="wilson")
        lo, hi = min(lo, point - c * (point - lo), wilson.low), max(hi, point + c * (hi - point), wilson.high)
        out.append((max(lo, 0.0), min(hi, 1.0)))
    return out


def straightforward_difficulty(counts, weights: np.ndarray) -> np.ndarray:
    """Each replicate's expected regression rate, fitted from scratch one replicate at a time."""
    G = counts.cells.shape[0]
    cells = counts.cells.astype(np.float64).reshape(G, -1)
    out = []
    for w in weights.astype(np.float64):
        drawn = (w @ cells).reshape((1,) + counts.cells.shape[1:])
        fit = fit_difficulty(DifficultyCounts(counts.pairs, drawn, counts.other_runs), counts.pairs, counts.other_runs + 2)
        out.append(fit.expected)
    return np.array(out)


def difficulty_check(aligned, pairs, clusters) -> tuple[float, float, int, float]:
    """(straightforward s, ours s, replicates, largest relative difference) of the difficulty refits."""
    counts = difficulty_counts(aligned.labels, aligned.gold, pairs, codes=clusters.codes, n_clusters=clusters.count)
    base = fit_difficulty(counts, pairs, aligned.labels.shape[0])
    B = difficulty_replicates(len(pairs), REPLICATES, aligned.labels.shape[0] - 1)
    weights = cluster_weights(np.random.default_rng(0), clusters.count, B)
    t_ours = best_of(lambda: cluster_difficulty_replicates(counts, base, weights))
    ours, _ = cluster_difficulty_replicates(counts, base, weights)
    t0 = time.perf_counter()
    plain = straightforward_difficulty(counts, weights)
    t_plain = time.perf_counter() - t0
    worst = float(np.nanmax(np.abs(ours - plain) / np.maximum(plain, 1e-3)))  # relative, or absolute below 0.1%
    if not worst <= 1e-9:
        raise AssertionError(f"difficulty refits disagree: largest relative difference {worst:.3g}")
    return t_plain, t_ours, B, worst


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@dataclass
class Shares:
    """Per-round whole-process times without and with intervals, and the share intervals add."""

    off: list[float]
    on: list[float]

    @property
    def shares(self) -> list[float]:
        return [(b - a) / a for a, b in zip(self.off, self.on)]

    def line(self) -> str:
        import statistics

        s = sorted(self.shares)
        q1, med, q3 = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else (s[0],) * 3
        return (f"{statistics.median(self.off):.2f} s with --replicates 0, {statistics.median(self.on):.2f} s with 1,000 "
                f"(medians); intervals add {100 * med:+.0f}% (median of {len(s)} paired rounds; "
                f"interquartile {100 * q1:+.0f}% to {100 * q3:+.0f}%, range {100 * s[0]:+.0f}% to {100 * s[-1]:+.0f}%; "
                "target <= +20%)")


def process_times(n_runs: int, small: bool, repeats: int) -> dict[str, Shares]:
    """Whole ``replicate matrix -f json`` processes without and with intervals, paired per round, per cache state.

    Two cache states: ``cold`` (``--no-cache``: every file read and every
    output parsed) and ``warm`` (runs and labels from a cache filled first; the
    matrix computed each time). For each, ``repeats`` rounds, each running both variants back to
    back in alternating order (off-on, on-off, ...).
    """
    import os

    from bench_judge import compiled, generate

    print(compiled())

    versions, scale = (n_runs - 2, 0.1 if small else 1.0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = generate(root, versions=versions, repeats=2, scale=scale)
        toml = root / "bench_runs.toml"
        lines = ["[runs]"] + [f'"{n}" = [{", ".join(repr(str(p.relative_to(root))).replace(chr(39), chr(34)) for p in ps)}]' for n, ps in runs.items()]
        toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cache = root / "cache"
        env = {**os.environ, "REPLICATE_CACHE_DIR": str(cache)}
        base = [sys.executable, "-m", "replicate"]
        args = ["matrix", "--runs", str(toml), "-p", "umbrela-fallback@1", "-f", "json"]

        def run(extra: list[str], root_opts: list[str]) -> float:
            t0 = time.perf_counter()
            subprocess.run(base + root_opts + args + extra, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            return time.perf_counter() - t0

        out = {}
        for state, root_opts in (("cold", ["--no-cache"]), ("warm", [])):
            run(["--replicates", "0"], root_opts)  # fills the run and label caches (warm) and the OS file cache
            got = Shares([], [])
            for k in range(repeats):
                order = [(got.off, ["--replicates", "0"]), (got.on, [])]
                for times, extra in order if k % 2 == 0 else order[::-1]:
                    times.append(run(extra, root_opts))
            out[state] = got
        return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help=f"{SMALL[0]} runs x {SMALL[1]} items")
    ap.add_argument("--loop-pairs", type=int, default=4, help="pairs the straightforward loop runs (then extrapolated)")
    ap.add_argument("--no-process", action="store_true", help="skip the whole-process timing of 'replicate matrix'")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds of the process timing (default 9; 2 with --small)")
    args = ap.parse_args(argv)
    n_runs, n_items = SMALL if args.small else FULL
    runs = make_runs(n_runs, n_items, seed=0)
    aligned = align(runs)
    pairs = [(i, j) for i in range(n_runs) for j in range(n_runs) if i != j]
    settings = Uncertainty(replicates=REPLICATES, seed=0)
    clusters = Clusters.from_keys(aligned.keys, field=0, name="query_id", sep=KEY_SEP)
    edge_uncertainty(aligned, pairs[:2], settings)  # warm up (BLAS, scipy imports)

    t_ours = best_of(lambda: edge_uncertainty(aligned, pairs, settings))
    errors = edge_uncertainty(aligned, pairs, settings)
    few = pairs[: args.loop_pairs]
    t0 = time.perf_counter()
    ref = straightforward(aligned.labels, aligned.gold, clusters.codes, clusters.count, few, seed=0)
    t_loop = (time.perf_counter() - t0) / len(few) * len(pairs)
    for (lo, hi), err in zip(ref, errors):
        iv = err.interval["regression_rate"]
        if abs(iv.low - lo) > 1e-12 or abs(iv.high - hi) > 1e-12:
            raise AssertionError(f"loop and ours disagree: {(lo, hi)} vs {(iv.low, iv.high)}")
    assert cluster_weights  # the loop draws the same cluster indices (see stats.bootstrap.cluster_weights)

    d_plain, d_ours, d_reps, d_worst = difficulty_check(aligned, pairs, clusters)
    t_matrix = best_of(lambda: matrix(runs))
    t_matrix_0 = best_of(lambda: matrix(runs, uncertainty=Uncertainty(replicates=0)))
    t_matrix_iv = best_of(lambda: matrix(runs, uncertainty=settings))
    print(f"data: {n_runs} runs x {n_items} items, {clusters.count} query clusters, {len(pairs)} ordered pairs, {REPLICATES} replicates")
    print(f"straightforward per-pair bootstrap loop: {t_loop:.1f} s (extrapolated from {len(few)} pairs)")
    print(f"ours (all pairs: intervals of {len(FIGURES)} figures, clustered McNemar, difficulty baseline): {t_ours:.3f} s")
    print(f"identical regression-rate intervals on the pairs the loop ran; ratio {t_loop / t_ours:.0f}x")
    print(
        f"difficulty baseline refit in {d_reps} replicates x {len(pairs)} pairs: straightforward {d_plain:.3f} s, "
        f"ours {d_ours:.3f} s (ratio {d_plain / d_ours:.1f}x; largest relative difference {d_worst:.1e})"
    )
    print(
        f"matrix() in memory: {t_matrix:.3f} s point figures only, {t_matrix_0:.3f} s with --replicates 0 (clustered "
        f"McNemar, difficulty baseline, flags), {t_matrix_iv:.3f} s with intervals (+{t_matrix_iv - t_matrix_0:.3f} s)"
    )
    if not args.no_process:
        rounds = args.rounds or (2 if args.small else 9)
        for state, got in process_times(n_runs, args.small, rounds).items():
            print(f"'replicate matrix -f json' whole process, {state} cache: {got.line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
