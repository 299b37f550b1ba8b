"""The worked example in docs/items.md is what `replicate items` prints on the demo flow of
docs/collect.md (sim server with fixtures/collect/sim.toml, collect with fixtures/collect/config.toml,
score), run in-process against a sim on a free port."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from support.collect_demo import collect_demo

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "items.md").read_text()
SHA = re.compile(r"sha256 [0-9a-f]{64}")


def worked_example() -> tuple[list[str], str]:
    """The command (without ``replicate``) and the output shown under '### Worked example'."""
    m = re.search(r"### Worked example\n.*?\n```\n\$ (replicate [^\n]*)\n(.*?)```", DOC, re.S)
    assert m, "no '$ replicate ...' block under '### Worked example' in docs/items.md"
    return shlex.split(m[1])[1:], m[2]


def test_worked_example_is_what_items_prints_on_the_collect_demo(tmp_path, monkeypatch):
    command, shown = worked_example()
    assert command[:2] == ["items", "demo.trials.jsonl"]
    collect_demo(tmp_path, monkeypatch)
    runner = CliRunner()
    r = runner.invoke(app, command)
    assert r.exit_code == 0, r.stderr
    # Which trial got which outcome depends on timing, so the file's bytes (and sha256) vary from run
    # to run; the per-item counts, and so every figure, do not.
    assert len(SHA.findall(shown)) == 1
    assert SHA.sub("sha256 <hash>", r.stdout) == SHA.sub("sha256 <hash>", shown)
    assert "1 with only API errors on a side [items-excluded]" in r.stderr
