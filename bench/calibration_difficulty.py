"""Calibration: does the difficulty-aware independence ratio of independent judges cover 1? Before and after.

Judges that are independent given the item should give a ratio near 1 with an
interval covering 1. The simulation (``tests/support/difficulty_sim.py``):
2,000 items in 50 queries, ``m + 2`` runs right with probability
``expit(a_j - d_i)`` independently given the item, difficulty equal or spread
(sd 2); edge 0 -> 1; a cluster bootstrap over queries of 400 replicates that
refits the baseline on every run's drawn items. Before: the earlier
definition (smoothed share of the other runs right, a logistic shift of it per
side); after: conditional maximum likelihood of the Rasch model given each
item's total (:mod:`replicate.stats.rasch`).

Per design: the mean ratio (and its Monte Carlo standard error), the share of
releases whose 95% interval covers 1 (with its binomial standard error) and
the share wholly below 1 (a false "errors shared beyond item difficulty");
with ``--shared`` the same for an edge whose new side copies the old side's
right/wrong on 15% of items (there the share wholly below 1 is the power).

Exits 1 when the new definition misses its target in a null design: coverage
of 1 below 95% by more than two standard errors, or a mean ratio off 1 by
more than 0.02 and two standard errors.

    python bench/calibration_difficulty.py [--small] [--releases N] [--seed S] [--shared] [--other-runs 2,3,...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.difficulty_sim import HEADER, ITEMS, OTHER_RUNS, QUERIES, REPLICATES, SHARED, SPREAD, misses, simulate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="60 releases per design")
    ap.add_argument("--releases", type=int, default=None, help="releases per design (default 1,000; 60 with --small)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shared", action="store_true", help=f"also an edge sharing {SHARED:.0%} of errors (power)")
    ap.add_argument("--other-runs", default=",".join(map(str, OTHER_RUNS)), help="numbers of other runs, comma-separated")
    args = ap.parse_args(argv)
    releases = args.releases or (60 if args.small else 1000)
    print(f"{ITEMS} items in {QUERIES} queries; {releases} releases per design; cluster bootstrap of "
          f"{REPLICATES} replicates; seed {args.seed}")
    print(HEADER)
    failed = []
    t0 = time.perf_counter()
    for m in (int(x) for x in args.other_runs.split(",")):
        for spread in (0.0, SPREAD):
            row = simulate(m, spread, releases, seed=args.seed)
            print(row.line(), flush=True)
            failed += [f"{m} others, spread {spread:g}: {x}" for x in misses(row)]
            if args.shared:
                print(simulate(m, spread, releases, seed=args.seed, shared=SHARED).line(), flush=True)
    print(f"({time.perf_counter() - t0:.0f} s; ± is one Monte Carlo standard error)")
    for f in failed:
        print(f"MISSED: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
