"""A fresh collection of the worked trials study (fixtures/trials-study) from the simulated endpoint, over
real HTTP on a free port, made with the commands docs/verify-trials.md shows (run in a work directory
where ``fixtures`` points at the repository's)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.simserver import load_sim_config, start_sim_server
from support.paths import ROOT

FIX = ROOT / "fixtures" / "trials-study"
KEY = "sk-test-verify-trials-doc"

#: The commands of docs/verify-trials.md that make the fresh collection (after starting the sim server).
COMMANDS = (
    "mkdir -p fresh",
    "replicate collect fixtures/trials-study/collect.toml --items fixtures/trials-study/items.jsonl "
    "--archive fresh/archive.jsonl",
    "replicate score fresh/archive.jsonl --items fixtures/trials-study/items.jsonl --out fresh/trials.jsonl",
)


def collect_fresh(work: Path) -> Path:
    """Run COMMANDS in ``work`` against an in-process sim server; returns ``work``."""
    (work / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    runner = CliRunner()
    old = Path.cwd()
    saved = os.environ.get("SIM_API_KEY")
    os.environ["SIM_API_KEY"] = KEY
    os.chdir(work)
    try:
        with start_sim_server(load_sim_config(FIX / "sim.toml"), api_key=KEY) as srv:
            for cmd in COMMANDS:
                words = shlex.split(cmd)
                if words[0] == "mkdir":
                    Path(words[-1]).mkdir(parents=True, exist_ok=True)
                    continue
                extra = ["--base-url", srv.url, "--concurrency", "16", "--no-progress"] if words[1] == "collect" else []
                r = runner.invoke(app, words[1:] + extra)
                assert r.exit_code == 0, r.output
    finally:
        os.chdir(old)
        if saved is None:
            os.environ.pop("SIM_API_KEY", None)
        else:
            os.environ["SIM_API_KEY"] = saved
    return work
