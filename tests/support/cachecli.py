"""Running the command against a chosen cache folder (the run and label cache tests).

:func:`replicate` starts a fresh interpreter (``python -m replicate``), as a user
does; :func:`invoke` runs the same Typer application in this interpreter, about
a second cheaper a call (no interpreter start-up, no imports). The run and label
caches live on disk, so ``invoke`` exercises them as a process does; each
behaviour keeps at least one test through a real process.
"""

from __future__ import annotations

import contextlib
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


def invoke(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``replicate ARGS`` run in this interpreter in ``cwd`` with ``cache`` as the cache folder .

    The same fields as :func:`replicate`'s answer: exit code, stdout and stderr
    apart; an unexpected exception is appended to stderr as its traceback.
    """
    import traceback

    from typer.testing import CliRunner

    from replicate.cli.app import app

    with contextlib.chdir(cwd):
        r = CliRunner().invoke(app, list(args), env={"REPLICATE_CACHE_DIR": str(cache)})
    err = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit) and r.exc_info is not None:
        err += "".join(traceback.format_exception(*r.exc_info))
    return subprocess.CompletedProcess(["replicate", *args], r.exit_code, r.stdout, err)


def at_once(cwd: Path, cache: Path, *args: str, n: int = 2) -> list[tuple[int, str, str]]:
    """``n`` processes of ``python -m replicate ARGS`` started together: (exit code, stdout, stderr) of each."""
    procs = [
        subprocess.Popen([sys.executable, "-m", "replicate", *args], cwd=cwd, env=env_for(cache),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    outs = [p.communicate() for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs)]


#: Modules whose import costs start-up time, watched by the start-up tests.
HEAVY = ("scipy", "scipy.special", "scipy.stats", "numpy", "typer", "tabulate", "requests", "git", "matplotlib", "pydantic")

_WATCH = """
import atexit, os, runpy, sys
def _report():
    os.write(2, ("\\nLOADED=" + ",".join(m for m in {heavy!r} if m in sys.modules) + "\\n").encode())
atexit.register(_report)
sys.argv = ["replicate", *sys.argv[1:]]
runpy.run_module("replicate", run_name="__main__", alter_sys=True)
"""


def loaded_modules(cwd: Path, cache: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``replicate ARGS`` as the console script runs it, and which of :data:`HEAVY` it had imported at exit."""
    p = subprocess.run(
        [sys.executable, "-c", _WATCH.format(heavy=HEAVY), *args], cwd=cwd, env=env_for(cache),
        capture_output=True, text=True,
    )
    line = p.stderr.rsplit("\nLOADED=", 1)[-1].strip()
    return p, set(line.split(",")) - {""}
