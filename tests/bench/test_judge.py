"""Smoke test of bench/bench_judge.py at a tiny size, and start-up without scipy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.parsing import PARSERS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")
def test_bench_core_runs_and_both_approaches_agree(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_judge", ROOT / "bench" / "bench_judge.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # run_bench raises SystemExit on any pair whose cells differ between the two approaches
    res = bench.run_bench(tmp_path, versions=3, repeats=1, scale=0.02, repeat=1, verbose=False)
    assert res["runs"] == 4 and res["pairs"] == 12
    assert res["warnings"] == 0


def test_cli_start_up_imports_no_scipy():
    code = "import sys, replicate.cli.app; print(sorted(m for m in ('scipy', 'scipy.stats', 'git', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
