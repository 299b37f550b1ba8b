"""Calibration suite: coverage of the intervals and error rates of the verdicts on simulated releases.

Designs (:mod:`calibration_designs`): query clusters 1, 5, 10, 20, 50 of 20
items; within-cluster correlation low and high; every item equally hard or
difficulty spread. In each of ``--releases`` seeded releases per design:

- **coverage**: ``compare``'s edge old -> new through the library path the
  command runs (:func:`replicate.judge.compare.edges` with the default
  :class:`~replicate.judge.uncertainty.Uncertainty`); for each figure, the
  share of releases whose interval holds the population value, and the share
  with no interval (too few clusters). ``matrix`` and ``floor`` print the same
  edge intervals (one bootstrap for all pairs);
- **floor verdicts**: :func:`replicate.judge.floor.floor` of two reruns of the
  new model, with (null) a third rerun -> the new model as the edge (its
  regression rate truly is the floor's) and (power) old -> new (which truly
  regresses more than reruns do); the share of each verdict.

Every share is printed with its Monte Carlo standard error
``sqrt(p (1 - p) / releases)``. ``--methods`` compares candidate interval
methods on the same bootstrap replicates (percentile, t-expanded percentile,
BCa, t-expanded BCa) instead. Targets (exit 1 when missed by more than three
Monte Carlo standard errors): coverage >= 93% from 10 clusters up for every
interval; wrong "above" <= 5%.

    python bench/bench_calibration.py [--small] [--releases N] [--methods] [--json PATH] [--jobs N] [--clusters 10,20]

``--json bench/calibration.json`` records the table that ``python tools/docgen.py``
writes into docs/concepts.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_designs import RATIOS, Design, designs, release, shifts, truth_counts  # noqa: E402

from replicate.judge.align import align  # noqa: E402
from replicate.judge.compare import edges  # noqa: E402
from replicate.judge.floor import floor  # noqa: E402
from replicate.judge.uncertainty import Uncertainty  # noqa: E402
from replicate.stats.bootstrap import figures_from_counts, interval_figures  # noqa: E402

FIGURES = interval_figures()  # every edge figure of the one table (replicate.stats.fourcell)

SEED = 20261204
COVERAGE_TARGET = 0.93
WRONG_ABOVE_TARGET = 0.05
MIN_CLUSTERS_TARGET = 10  # the coverage target holds from this many clusters up


def mc_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / n) if n else float("nan")


def truths(design: Design) -> dict[str, dict[str, float]]:
    t = truth_counts(design)
    return {k: {f: float(v[()]) for f, v in figures_from_counts(c).items()} for k, c in t.items()}


def _tally(design: Design, first: int, stop: int, replicates: int) -> tuple:
    """The counts of :func:`run_design` over releases ``first .. stop - 1`` (each seeded by its own number)."""
    truth = truths(design)
    covered: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    above: Counter[str] = Counter()  # the interval lies wholly above the truth (a miss on the low side of it)
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    by_range: dict[str, Counter[str]] = defaultdict(Counter)  # the widened-range rule on the same releases
    worse_by = shifts(design)
    for r in range(first, stop):
        rng = np.random.default_rng([SEED, design.clusters, int(10 * design.cluster_sd), int(design.difficulty_sd), r])
        rel = release(rng, design, reruns=3, worse_by=worse_by)
        st = Uncertainty(replicates=replicates, seed=r)
        runs = rel.runs
        edge = edges(align([runs["old"], runs["new"]]), [(0, 1)], uncertainty=st)[0]
        assert edge.uncertainty is not None
        for f in FIGURES:
            iv = edge.uncertainty.interval[f]
            if iv.low is None or iv.high is None:
                missing[f] += 1
            elif iv.low <= truth["edge"][f] <= iv.high:
                covered[f] += 1
            elif iv.low > truth["edge"][f]:
                above[f] += 1
        repeats = [runs["new#1"], runs["new#2"]]
        kinds = [("null", (runs["new#3"], runs["new"])), ("power", (runs["old"], runs["new"]))]
        kinds += [(f"x{ratio:g}", (runs["new#3"], runs[f"worse{ratio}"])) for ratio in RATIOS]
        for kind, pair in kinds:
            fl = floor(repeats, edge=pair, uncertainty=st)
            assert fl.edge is not None
            verdicts[kind][str(fl.edge.verdict)] += 1
            insufficient = fl.edge.insufficient is not None
            by_range[kind]["insufficient_data" if insufficient else str(fl.edge.range_verdict)] += 1
    return covered, missing, above, verdicts, by_range


def run_design(design: Design, releases: int, replicates: int, jobs: int = 1) -> dict:
    """Coverage of every edge figure and the floor's verdicts over ``releases`` releases of one design.

    ``jobs`` > 1 splits the releases over that many processes; every release is seeded by its own
    number, so the counts do not depend on ``jobs``.
    """
    truth = truths(design)
    worse_by = shifts(design)
    cuts = np.linspace(0, releases, max(1, min(jobs, releases)) + 1).astype(int)
    spans = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
    if len(spans) == 1:
        parts = [_tally(design, 0, releases, replicates)]
    else:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(len(spans)) as pool:
            parts = pool.starmap(_tally, [(design, a, b, replicates) for a, b in spans])
    covered, missing, above = (sum((p[k] for p in parts), Counter()) for k in range(3))
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    by_range: dict[str, Counter[str]] = defaultdict(Counter)
    for p in parts:
        for into, got in ((verdicts, p[3]), (by_range, p[4])):
            for kind, c in got.items():
                into[kind].update(c)
    return {
        "design": design.to_json(),
        "name": design.name,
        "releases": releases,
        "truth": {"regression_rate": truth["edge"]["regression_rate"], "floor_mean": truth["rerun"]["regression_rate"]},
        "coverage": {f: {"covered": covered[f] / releases, "no_interval": missing[f] / releases,
                         "interval_above_truth": above[f] / releases,
                         "interval_below_truth": (releases - covered[f] - missing[f] - above[f]) / releases,
                         "mc_se": mc_se(covered[f] / releases, releases)} for f in FIGURES},
        "floor": {k: {v: n / releases for v, n in c.items()} for k, c in verdicts.items()},
        "floor_range_rule": {k: {v: n / releases for v, n in c.items()} for k, c in by_range.items()},
        "worse_shift": {f"x{k:g}": v for k, v in worse_by.items()},
    }


def check(results: list[dict]) -> list[str]:
    """Targets missed by more than three Monte Carlo standard errors."""
    misses = []
    for res in results:
        n = res["releases"]
        if res["design"]["clusters"] >= MIN_CLUSTERS_TARGET:
            for f, c in res["coverage"].items():
                se = max(mc_se(COVERAGE_TARGET, n), 1e-9)
                if c["covered"] < COVERAGE_TARGET - 3 * se:
                    misses.append(f"{res['name']}: {f} coverage {c['covered']:.1%} < {COVERAGE_TARGET:.0%}")
        null = res["floor"].get("null", {})
        wrong = null.get("above", 0.0) + null.get("below", 0.0)
        if wrong > WRONG_ABOVE_TARGET + 3 * mc_se(WRONG_ABOVE_TARGET, n):
            misses.append(f"{res['name']}: wrong 'above' or 'below' on null edges {wrong:.1%} > {WRONG_ABOVE_TARGET:.0%}")
    return misses


def print_results(results: list[dict]) -> None:
    for res in results:
        print(f"\n{res['name']} ({res['releases']} releases)")
        for f, c in res["coverage"].items():
            print(f"  {f:34s} coverage {c['covered']:6.1%} ± {c['mc_se']:.1%}  no interval {c['no_interval']:6.1%}"
                  f"  misses: interval above truth {c['interval_above_truth']:5.1%}, below {c['interval_below_truth']:5.1%}")
        for kind, shares in res["floor"].items():
            print(f"  floor, {kind:5s} edge: " + ", ".join(f"{v} {s:.1%}" for v, s in sorted(shares.items())))
            old = res["floor_range_rule"][kind]
            print("         widened-range rule: " + ", ".join(f"{v} {s:.1%}" for v, s in sorted(old.items())))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="fewer designs and releases (CI)")
    ap.add_argument("--releases", type=int, default=None)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--methods", action="store_true", help="compare candidate interval methods instead")
    ap.add_argument("--json", type=Path, default=None, help="write the results here (bench/calibration.json)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (the releases are split; same results)")
    ap.add_argument("--clusters", type=str, default=None, help="only designs of these cluster counts, e.g. 10,20")
    args = ap.parse_args(argv)
    releases = args.releases or (40 if args.small else 400)
    chosen = designs(args.small)
    if args.clusters:
        keep = {int(x) for x in args.clusters.split(",")}
        chosen = [d for d in chosen if d.clusters in keep]
    if args.methods:
        from calibration_methods import compare_methods

        return compare_methods(chosen, releases, args.replicates)
    t0 = time.perf_counter()
    results = [run_design(d, releases, args.replicates, args.jobs) for d in chosen]
    print_results(results)
    print(f"\n{len(chosen)} designs x {releases} releases, {args.replicates} replicates, seed {SEED}: "
          f"{time.perf_counter() - t0:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps({"seed": SEED, "replicates": args.replicates, "results": results}, indent=1) + "\n")
    misses = check(results)
    for m in misses:
        print("TARGET MISSED:", m)
    return 1 if misses and not args.small else 0


if __name__ == "__main__":
    sys.exit(main())
