"""The worked examples of `replicate costs` in docs/items.md are what it prints: on the demo flow of
docs/collect.md (sim server, collect, score, run in-process against a sim on a free port) with the demo
prices, and on the released table of fixtures/trials-study (no usage)."""

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
    collect_demo(tmp_path, monkeypatch)
    runner = CliRunner()
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")  # the doc's relative paths
    for command, err, shown in ((demo, demo_err, demo_out), (release, release_err, release_out)):
        r = runner.invoke(app, command)
        assert r.exit_code == 0, r.stderr
        # which trial got which outcome depends on timing (the bytes vary); the per-item counts do not
        assert SHA.sub("sha256 <hash>", r.stdout) == SHA.sub("sha256 <hash>", shown)
        assert r.stderr == err
