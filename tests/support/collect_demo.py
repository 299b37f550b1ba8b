"""The demo flow of docs/collect.md (sim server with fixtures/collect/sim.toml, collect with
fixtures/collect/config.toml, score), run in-process against a sim on a free port: what the worked
examples of docs/items.md (`items`, `costs`) are printed on."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.simserver import load_sim_config, start_sim_server
from support.paths import ROOT

FIX = ROOT / "fixtures" / "collect"
KEY = "any-secret"


def collect_demo(work: Path, monkeypatch) -> Path:
    """``demo.archive.jsonl`` and ``demo.trials.jsonl`` written in ``work`` (made the working directory)."""
    monkeypatch.setenv("SIM_API_KEY", KEY)
    monkeypatch.chdir(work)  # the demo's relative file names land here
    runner = CliRunner()
    with start_sim_server(load_sim_config(FIX / "sim.toml"), api_key=KEY) as srv:
        config = (FIX / "config.toml").read_text()
        assert "http://127.0.0.1:8765/v1" in config
        (work / "config.toml").write_text(config.replace("http://127.0.0.1:8765/v1", srv.url))
        r = runner.invoke(app, ["collect", "config.toml", "--items", str(FIX / "items.jsonl"),
                                "--archive", "demo.archive.jsonl", "--no-progress"])
        assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ["score", "demo.archive.jsonl", "--items", str(FIX / "items.jsonl"),
                            "--out", "demo.trials.jsonl"])
    assert r.exit_code == 0, r.stderr
    return work / "demo.trials.jsonl"
