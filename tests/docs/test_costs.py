"""The worked examples of `replicate costs` in docs/items.md are what it prints: on the demo flow of
docs/collect.md (sim server, collect, score, run in-process against a sim on a free port) with the demo
prices, and on the released table of fixtures/trials-study (no usage)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
DOC = (ROOT / "docs" / "items.md").read_text()
KEY = "any-secret"
SHA = re.compile(r"sha256 [0-9a-f]{64}")


def examples() -> list[tuple[list[str], str, str]]:
    """Each '$ replicate costs ...' block under '### Worked example: costs on the demo': command, stderr, stdout."""
    part = DOC.split("### Worked example: costs on the demo", 1)[1].split("### JSON fields", 1)[0]
    out = []
    for m in re.finditer(r"```\n\$ (replicate costs [^\n]*)\n(.*?)```", part, re.S):
        lines = m[2].splitlines(keepends=True)
        warned = "".join(x for x in lines if x.startswith("warning: "))
        out.append((shlex.split(m[1])[1:], warned, "".join(x for x in lines if not x.startswith("warning: "))))
    assert len(out) == 2, "expected the demo and the no-usage example"
    return out


def test_worked_examples_are_what_costs_prints(tmp_path, monkeypatch):
    (demo, demo_err, demo_out), (release, release_err, release_out) = examples()
    assert demo[:2] == ["costs", "demo.trials.jsonl"] and "fixtures/collect/prices.toml" in demo
    monkeypatch.setenv("SIM_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    with start_sim_server(load_sim_config(FIX / "sim.toml"), api_key=KEY) as srv:
        config = (FIX / "config.toml").read_text()
        (tmp_path / "config.toml").write_text(config.replace("http://127.0.0.1:8765/v1", srv.url))
        r = runner.invoke(app, ["collect", "config.toml", "--items", str(FIX / "items.jsonl"),
                                "--archive", "demo.archive.jsonl", "--no-progress"])
        assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ["score", "demo.archive.jsonl", "--items", str(FIX / "items.jsonl"),
                            "--out", "demo.trials.jsonl"])
    assert r.exit_code == 0, r.stderr
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")  # the doc's relative paths
    for command, err, shown in ((demo, demo_err, demo_out), (release, release_err, release_out)):
        r = runner.invoke(app, command)
        assert r.exit_code == 0, r.stderr
        # which trial got which outcome depends on timing (the bytes vary); the per-item counts do not
        assert SHA.sub("sha256 <hash>", r.stdout) == SHA.sub("sha256 <hash>", shown)
        assert r.stderr == err
