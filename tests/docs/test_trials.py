"""The worked example in docs/items.md is what `replicate items` prints on the demo flow of
docs/collect.md (sim server with fixtures/collect/sim.toml, collect with fixtures/collect/config.toml,
score), run in-process against a sim on a free port."""

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


def worked_example() -> tuple[list[str], str]:
    """The command (without ``replicate``) and the output shown under '### Worked example'."""
    m = re.search(r"### Worked example\n.*?\n```\n\$ (replicate [^\n]*)\n(.*?)```", DOC, re.S)
    assert m, "no '$ replicate ...' block under '### Worked example' in docs/items.md"
    return shlex.split(m[1])[1:], m[2]


def test_worked_example_is_what_items_prints_on_the_collect_demo(tmp_path, monkeypatch):
    command, shown = worked_example()
    assert command[:2] == ["items", "demo.trials.jsonl"]
    monkeypatch.setenv("SIM_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)  # the demo's relative file names land here
    runner = CliRunner()
    with start_sim_server(load_sim_config(FIX / "sim.toml"), api_key=KEY) as srv:
        config = (FIX / "config.toml").read_text()
        assert "http://127.0.0.1:8765/v1" in config
        (tmp_path / "config.toml").write_text(config.replace("http://127.0.0.1:8765/v1", srv.url))
        r = runner.invoke(app, ["collect", "config.toml", "--items", str(FIX / "items.jsonl"),
                                "--archive", "demo.archive.jsonl", "--no-progress"])
        assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ["score", "demo.archive.jsonl", "--items", str(FIX / "items.jsonl"),
                            "--out", "demo.trials.jsonl"])
    assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, command)
    assert r.exit_code == 0, r.stderr
    # Which trial got which outcome depends on timing, so the file's bytes (and sha256) vary from run
    # to run; the per-item counts, and so every figure, do not.
    assert len(SHA.findall(shown)) == 1
    assert SHA.sub("sha256 <hash>", r.stdout) == SHA.sub("sha256 <hash>", shown)
    assert "1 with only API errors on a side [items-excluded]" in r.stderr
