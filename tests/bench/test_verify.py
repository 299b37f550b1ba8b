"""Smoke test: the verify benchmark's core runs on a tiny release and both approaches agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_verify.py"


def test_bench_verify_small():
    spec = importlib.util.spec_from_file_location("bench_verify", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    slow, fast, n = mod.run(small=True)  # asserts that every value agrees
    assert n == 73 * 3
