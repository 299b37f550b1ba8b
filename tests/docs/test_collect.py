"""The demo in docs/collect.md, run as written (against an in-process sim on a free port)."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
DOC = (ROOT / "docs" / "collect.md").read_text()


def doc_block(after: str) -> str:
    """The first fenced block following the line that contains ``after``."""
    m = re.search(re.escape(after) + r".*?\n```[a-z]*\n(.*?)```", DOC, re.S)
    assert m, after
    return m[1]


def test_demo_commands_and_outputs_match_the_docs(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_API_KEY", "any-secret")
    monkeypatch.chdir(ROOT)
    commands = [ln.split("#")[0].strip() for ln in doc_block("## A demo on your machine").replace("\\\n", " ")
                .splitlines()]
    assert [c.split()[:2] for c in commands if c.startswith("replicate")] == [
        ["replicate", "sim-server"], ["replicate", "collect"], ["replicate", "collect"], ["replicate", "score"],
        ["replicate", "items"]]
    sim = load_sim_config(FIX / "sim.toml")
    with start_sim_server(sim, api_key="any-secret") as srv:
        cfg = tmp_path / "config.toml"
        cfg.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", srv.url))
        runner = CliRunner()
        results = []
        for c in commands:
            if not c.startswith(("replicate collect", "replicate score", "replicate items")):
                continue
            args = [a.replace("fixtures/collect/config.toml", str(cfg)) for a in c.split()[1:]]
            args = [str(tmp_path / a) if a.startswith("demo.") else a for a in args]
            r = runner.invoke(app, args + (["--no-progress"] if args[0] == "collect" else []))
            assert r.exit_code == 0, (c, r.stderr)
            results.append(r)
    dry, run, score, items = results
    assert dry.stdout == doc_block("The dry run prints the plan")
    summary = doc_block("a summary on stdout")
    # the retry counts may differ between runs; everything else is as documented
    def strip(t):
        return re.sub(r"requests sent: .*\n|wall time: .*\n", "", t)
    assert strip(run.stdout).replace(str(tmp_path / "demo."), "demo.") == strip(summary)
    assert score.stdout.replace(str(tmp_path / "demo."), "demo.") == doc_block("The score report")
    assert "sim-a -> sim-b" in items.stdout
