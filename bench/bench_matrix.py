"""Benchmark: the all-pairs matrix vs the straightforward per-pair Python loop, on the same data.

A realistic release: 22 runs x 20,646 items (DL 2019 + DL 2020 query-passage
pairs), 462 ordered pairs. Labels come from a seeded model of correlated
judges: each item has a latent difficulty, judges of one family share part of
their errors, and about 1% of outputs are unparsed. Everything is built in
memory (no files), so the timings are "after loading".

- straightforward: a dict per run (key -> label), and for each ordered pair a
  loop over the items counting the four cells and the changed labels;
- ours: :func:`replicate.judge.matrix.matrix` (alignment, ``pair_counts``,
  figure matrices, baselines, sanity flags) plus the 462 compare objects.

The cells and changed counts of every pair must be identical. Also timed: a
floor over three repeats of 20,646 items.

    python bench/bench_matrix.py [--small] [--seed N]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from replicate.judge.floor import floor
from replicate.judge.matrix import matrix
from replicate.judge.model import KEY_SEP, LabelledRun, readonly

FULL = (22, 20_646)
SMALL = (5, 2_000)


def make_runs(n_runs: int, n_items: int, *, seed: int = 0, families: int = 4) -> list[LabelledRun]:
    """Seeded correlated judges over one item set (labels 0-3, -1 = unparsed)."""
    rng = np.random.default_rng(seed)
    keys = np.array([f"{19000 + i // 200}{KEY_SEP}{1_000_000 + i}" for i in range(n_items)], dtype=object)
    gold = rng.choice(4, n_items, p=[0.45, 0.25, 0.18, 0.12]).astype(np.int16)
    difficulty = rng.normal(0, 1, n_items)
    family_noise = rng.normal(0, 1, (families, n_items))
    family_shift = rng.choice([-1, 1], (families, n_items))
    runs = []
    for j in range(n_runs):
        fam = j % families
        skill = rng.normal(0.2, 0.3)
        score = skill - difficulty + 0.8 * family_noise[fam] + 0.6 * rng.normal(0, 1, n_items)
        right = score > 0
        wrong_label = np.where(rng.random(n_items) < 0.7, gold + family_shift[fam], rng.integers(0, 4, n_items))
        wrong_label = np.where((wrong_label < 0) | (wrong_label > 3) | (wrong_label == gold), (gold + 1) % 4, wrong_label)
        labels = np.where(right, gold, wrong_label).astype(np.int8)
        labels[rng.random(n_items) < rng.uniform(0.002, 0.02)] = -1
        runs.append(LabelledRun(f"judge-{j:02d}", readonly(keys), readonly(gold), readonly(labels), "bench@1"))
    return runs


def straightforward(runs: list[LabelledRun]) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    """Per-pair loop over items with a dict per run (intersect policy)."""
    label = [dict(zip(r.keys.tolist(), r.labels.tolist())) for r in runs]
    gold = dict(zip(runs[0].keys.tolist(), runs[0].gold.tolist()))
    out = {}
    for i, old in enumerate(runs):
        for j, new in enumerate(runs):
            if i == j:
                continue
            a, b = label[i], label[j]
            both = only_old = only_new = neither = changed = 0
            for key, x in a.items():
                y = b.get(key)
                if y is None or x < 0 or y < 0:
                    continue
                g = gold[key]
                if x == g:
                    if y == g:
                        both += 1
                    else:
                        only_old += 1
                elif y == g:
                    only_new += 1
                else:
                    neither += 1
                if x != y:
                    changed += 1
            out[old.name, new.name] = (both, only_old, only_new, neither, changed)
    return out


def ours(runs: list[LabelledRun]) -> tuple[dict[tuple[str, str], tuple[int, int, int, int, int]], object]:
    m = matrix(runs)
    out = {
        (c.old.name, c.new.name): (c.cells.both, c.cells.only_old, c.cells.only_new, c.cells.neither, c.changed)
        for c in m.comparisons()
    }
    return out, m


def run(n_runs: int, n_items: int, *, seed: int = 0) -> dict:
    """Build the data, time both approaches and the floor; raise if they disagree."""
    runs = make_runs(n_runs, n_items, seed=seed)
    t0 = time.perf_counter()
    ref = straightforward(runs)
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    got, m = ours(runs)
    t_ours = time.perf_counter() - t0
    if got != ref:
        bad = next(k for k in ref if ref[k] != got.get(k))
        raise AssertionError(f"matrix and loop disagree on {bad}: {got.get(bad)} vs {ref[bad]}")
    # the figure matrices agree with the loop's cells too
    for (a, b), (_both, only_old, _, _, _) in ref.items():
        i, j = m.names.index(a), m.names.index(b)
        n = sum(ref[a, b][:4])
        if m.figures["regression_rate"][i, j] != only_old / n:
            raise AssertionError(f"regression rate of {a} -> {b} differs")
    t0 = time.perf_counter()
    fl = floor(runs[:3])
    t_floor = time.perf_counter() - t0
    return {
        "runs": n_runs,
        "items": n_items,
        "pairs": len(ref),
        "loop_s": t_loop,
        "ours_s": t_ours,
        "ratio": t_loop / t_ours if t_ours > 0 else float("inf"),
        "floor_s": t_floor,
        "floor_regression": (fl.regression_span.min, fl.regression_span.max),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help=f"{SMALL[0]} runs x {SMALL[1]} items instead of {FULL[0]} x {FULL[1]}")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    n_runs, n_items = SMALL if args.small else FULL
    r = run(n_runs, n_items, seed=args.seed)
    print(f"data: {r['runs']} runs x {r['items']} items, {r['pairs']} ordered pairs (seed {args.seed})")
    print(f"straightforward per-pair loop: {r['loop_s']:.3f} s")
    print(f"matrix (align + pair_counts + figures + baselines + compare objects): {r['ours_s']:.3f} s")
    print(f"identical cells and changed counts for every pair; ratio {r['ratio']:.0f}x")
    lo, hi = r["floor_regression"]
    print(f"floor over 3 repeats x {r['items']} items: {r['floor_s'] * 1000:.1f} ms (regression {100 * lo:.2f}%-{100 * hi:.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
