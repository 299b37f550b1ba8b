"""Smoke test: the intervals benchmark's plain loop and ours give the same regression-rate intervals on a tiny release."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_intervals", ROOT / "bench" / "bench_intervals.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_plain_loop_and_ours_agree_on_a_tiny_release(monkeypatch):
    bench = _bench()
    monkeypatch.setattr(bench, "REPLICATES", 50)
    from replicate.judge.align import align
    from replicate.judge.model import KEY_SEP
    from replicate.judge.uncertainty import Uncertainty, edge_uncertainty
    from replicate.stats.bootstrap import Clusters

    runs = bench.make_runs(3, 600, seed=1)
    al = align(runs)
    pairs = [(0, 1), (2, 0)]
    cl = Clusters.from_keys(al.keys, field=0, name="query_id", sep=KEY_SEP)
    ref = bench.straightforward(al.labels, al.gold, cl.codes, cl.count, pairs, seed=0)
    ours = edge_uncertainty(al, pairs, Uncertainty(replicates=50, seed=0))
    for (lo, hi), err in zip(ref, ours):
        iv = err.interval["regression_rate"]
        assert abs(iv.low - lo) < 1e-12 and abs(iv.high - hi) < 1e-12
