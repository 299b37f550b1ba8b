"""Shared by the rankings tests: tau_AP written out as printed, and a small seeded scenario of runs and qrels."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from replicate.examples.trec_runs import synthetic_runs, write_runs
from replicate.stats.ranking_reference import tau_ap_printed as tau_ap_paper


def tau_ap_tie_breaks(reference, estimate):
    """The mean of the printed formula over every way of breaking the ties of both vectors (equal weight)."""
    def breaks(v):
        groups = {}
        for i, value in enumerate(v):
            groups.setdefault(value, []).append(i)
        per_group = [list(itertools.permutations(members)) for _, members in sorted(groups.items())]
        for choice in itertools.product(*per_group):
            out = [0.0] * len(v)
            rank = 0
            for perm in choice:  # ascending values; within a group, later in perm = higher score
                for i in perm:
                    out[i] = rank
                    rank += 1
            yield out
    values = [tau_ap_paper(x, y) for x in breaks(reference) for y in breaks(estimate)]
    return sum(values) / len(values)


def qrels_lines(judgments: dict[str, dict[str, int]]) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, docs in judgments.items() for d, g in docs.items())


def scenario(tmp: Path, *, n_systems: int = 6, seed: int = 0) -> tuple[list[Path], Path, Path]:
    """Run files, a reference qrels (topics t1-t6) and an estimate qrels (t2-t7: t1 only in the reference,
    t7 only in the estimate; grades perturbed); the last run retrieves nothing for t3."""
    rng = np.random.default_rng(seed)
    ref = {f"t{k}": {f"d{k}-{i}": int(rng.integers(0, 4)) for i in range(12)} for k in range(1, 7)}
    est = {q: {d: int(min(3, max(0, g + rng.integers(-1, 2)))) for d, g in docs.items()}
           for q, docs in ref.items() if q != "t1"}
    est["t7"] = {f"d7-{i}": int(rng.integers(0, 4)) for i in range(12)}
    both = {**ref, "t7": est["t7"]}
    runs = synthetic_runs(both, n_systems=n_systems, depth=8, extra=3, seed=seed)
    last = sorted(runs)[-1]
    runs[last] = [line for line in runs[last] if not line.startswith("t3 ")]
    (tmp / "ref.qrels").write_text(qrels_lines(ref), encoding="utf-8")
    (tmp / "est.qrels").write_text(qrels_lines(est), encoding="utf-8")
    paths = write_runs(runs, tmp / "runs")
    return paths, tmp / "ref.qrels", tmp / "est.qrels"
