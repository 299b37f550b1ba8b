"""Running the real command in a fresh interpreter against a chosen cache folder (the run and label cache tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT

#: The matrix over the bundled example's four runs, as JSON.
MATRIX = ["matrix", "--runs", "runs.toml", "-p", "umbrela-fallback@1", "-f", "json"]


def env_for(cache: Path) -> dict[str, str]:
    return {**os.environ, "REPLICATE_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}


def replicate(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m replicate ARGS`` in ``cwd`` with ``cache`` as the cache folder."""
    return subprocess.run(
        [sys.executable, "-m", "replicate", *args], cwd=cwd, env=env_for(cache), capture_output=True, text=True
    )


def at_once(cwd: Path, cache: Path, *args: str, n: int = 2) -> list[tuple[int, str, str]]:
    """``n`` processes of ``python -m replicate ARGS`` started together: (exit code, stdout, stderr) of each."""
    procs = [
        subprocess.Popen([sys.executable, "-m", "replicate", *args], cwd=cwd, env=env_for(cache),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    outs = [p.communicate() for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs)]
