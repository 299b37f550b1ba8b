"""Smoke test: the matrix benchmark's core runs on a tiny size and both approaches agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_matrix", ROOT / "bench" / "bench_matrix.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_matrix_core_agrees_on_a_tiny_release():
    bench = _bench()
    runs = bench.make_runs(4, 300, seed=1)
    assert bench.ours(runs)[0] == bench.straightforward(runs)
    result = bench.run(3, 200, seed=2)  # raises if the two approaches disagree
    assert result["pairs"] == 6 and result["items"] == 200


def test_bench_data_is_seeded():
    bench = _bench()
    a, b = bench.make_runs(2, 100, seed=5), bench.make_runs(2, 100, seed=5)
    assert all((x.labels == y.labels).all() for x, y in zip(a, b))
