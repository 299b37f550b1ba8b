"""Smoke test: the collector benchmark's core runs on its small size and its approaches agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_collect_small(capsys):
    spec = importlib.util.spec_from_file_location("bench_collect", ROOT / "bench" / "bench_collect.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(["--small"])  # asserts internally that every approach got 200 valid completions
    assert res["requests"] == 200
    assert "all four got one valid completion per request: ok" in capsys.readouterr().out
