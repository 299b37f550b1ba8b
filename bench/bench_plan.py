"""Benchmark: ``flag_power`` vs simulating whole cells, on the same question.

The question: at K = 50 per side in a cell of 300 items, one in ten of the other
items moving the same way and the rest staying put, how likely is an item moving
0.4 -> 0.6 flagged improved? ``flag_power`` sums the item's own outcomes exactly
and simulates only the other items (1,000 draws). The straightforward approach
simulates whole cells: draw every item's counts, ``scipy.stats.fisher_exact`` per
item, ``scipy.stats.false_discovery_control`` per cell, count how often the item
is flagged. It runs on a slice and is extrapolated to the number of cells that
reaches the same Monte Carlo standard error. A vectorised whole-cell simulation
(the engine's own tests on many cells at once) checks that the two agree.

    python bench/bench_plan.py [--small]
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

import numpy as np

from replicate.stats.fisher import PValueTables
from replicate.stats.itemtests import Rule, cell_tests
from replicate.stats.power import flag_power

P, Q, MOVING = 0.4, 0.6, 0.1


def rates(n: int) -> list[tuple[float, float]]:
    n_mov = round(MOVING * (n - 1))
    return [(P, Q)] * (1 + n_mov) + [(P, P)] * (n - 1 - n_mov)


def straightforward(k: int, n: int, sims: int, seed: int) -> tuple[float, float]:
    """Flag frequency of item 0 over ``sims`` whole cells, and seconds per cell."""
    from scipy.stats import false_discovery_control, fisher_exact

    rng = np.random.default_rng(seed)
    rs = rates(n)
    hits = 0
    t0 = time.perf_counter()
    for _ in range(sims):
        counts = [(int(rng.binomial(k, s)), int(rng.binomial(k, t))) for s, t in rs]
        ps = [fisher_exact([[a, k - a], [b, k - b]]).pvalue for a, b in counts]
        q0 = false_discovery_control(ps)[0]
        a, b = counts[0]
        hits += bool(q0 <= 0.05 and Fraction(b, k) - Fraction(a, k) >= Fraction(1, 5))
    return hits / sims, (time.perf_counter() - t0) / sims


def vectorised_cells(k: int, n: int, sims: int, seed: int) -> float:
    """The same whole-cell simulation with the engine's tests, many cells at once (a check)."""
    rng = np.random.default_rng(seed)
    rs = np.array(rates(n))
    rule = Rule(PValueTables(), 0.05, (Fraction(1, 5),))
    hits = 0
    for start in range(0, sims, 2000):
        r = min(2000, sims - start)
        a = rng.binomial(k, rs[:, 0], size=(r, n))
        b = rng.binomial(k, rs[:, 1], size=(r, n))
        kk = np.full((r, n), k)
        t = cell_tests(a, kk, b, kk, rule)
        hits += int((t.significant[:, 0] & t.up[0][:, 0]).sum())
    return hits / sims


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a quick run: 60 items, K = 20, 200 draws")
    args = ap.parse_args(argv)
    k, n, draws, slice_cells, check_cells = (20, 60, 200, 5, 20_000) if args.small else (50, 300, 1000, 10, 100_000)

    t0 = time.perf_counter()
    ours = flag_power(P, Q, k=k, n_items=n, moving=MOVING, n_resamples=draws, seed=1)
    t_ours = time.perf_counter() - t0
    freq, per_cell = straightforward(k, n, slice_cells, seed=2)
    var = ours.power * (1 - ours.power)
    se = ours.mc_se if ours.mc_se else 1e-6
    cells_needed = int(np.ceil(var / se**2))
    t_naive = per_cell * cells_needed
    t1 = time.perf_counter()
    check = vectorised_cells(k, n, check_cells, seed=3)
    t_check = time.perf_counter() - t1
    check_se = np.sqrt(check * (1 - check) / check_cells)
    agree = abs(check - ours.power) < 4 * np.hypot(check_se, se)

    print(f"question: K = {k} per side, {n} items, {ours.moving_items} other items moving {P} -> {Q}, "
          f"the rest staying at {P}")
    print(f"flag_power: power {ours.power:.4f} (MC s.e. {se:.5f}, {draws} draws of the other items), "
          f"bounds [{ours.bounds[0]:.4f}, {ours.bounds[1]:.4f}], {t_ours:.2f} s")
    print(f"straightforward whole cells: {per_cell * 1000:.1f} ms per cell on a slice of {slice_cells}; "
          f"{cells_needed:,} cells for the same s.e. -> {t_naive:.0f} s extrapolated")
    print(f"ratio: {t_naive / t_ours:.0f}x")
    print(f"check: vectorised whole cells ({check_cells:,}, the engine's tests, {t_check:.1f} s): "
          f"{check:.4f} +- {check_se:.4f}; agrees within 4 s.e.: {bool(agree)}")
    t_vec = t_check / check_cells * cells_needed
    print(f"vectorised whole cells for the same s.e.: {t_vec:.0f} s extrapolated; ratio {t_vec / t_ours:.0f}x")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
