"""Smoke test of bench/bench_plan.py at its small size: flag_power and whole-cell simulation agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_plan_small_runs_and_agrees(capsys):
    spec = importlib.util.spec_from_file_location("bench_plan", ROOT / "bench" / "bench_plan.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--small"]) == 0
    assert "agrees within 4 s.e.: True" in capsys.readouterr().out
