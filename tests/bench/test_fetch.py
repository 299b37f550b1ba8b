"""Smoke test of bench/bench_fetch.py's core on a tiny repository, so the benchmark cannot rot."""

from __future__ import annotations

import importlib.util

from support.paths import ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("bench_fetch", ROOT / "bench" / "bench_fetch.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_bench_core_agrees_and_stores_less(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE_DIR", str(tmp_path / "unused"))
    bench = _bench()
    r = bench.run(tmp_path, n_big=2, big_size=64 << 10, commits=2, n_small=2)  # raises if results differ
    assert r["files"] == 2
    # The partial clone holds no large blob; both clones hold at least the last commit's.
    assert r["bytes_ours"] < 64 << 10 < r["bytes_shallow"] < r["bytes_plain"]


def test_http_bench_core_agrees(tmp_path):
    bench = _bench()
    r = bench.run_http(tmp_path, n_files=3, delay=0.0)  # raises if the approaches wrote different bytes
    assert r["files"] == 3
