"""docs/verify-trials.md shows what the commands print: the recomputed check, the commands of the fresh
collection (run in-process against the sim server, support/trials_study.py) and the replicated check."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from support.trials_study import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "verify-trials.md").read_text()
runner = CliRunner()


def shown() -> list[tuple[str, str]]:
    """Each ``$ replicate ...`` block of the page: (command, output shown)."""
    return re.findall(r"```\n\$ (replicate [^\n]*)\n(.*?)```", DOC, re.S)


def test_the_page_shows_the_collection_commands_the_test_runs():
    m = re.search(r"```sh\n(export SIM_API_KEY=.*?)```", DOC, re.S)
    assert m, "no collection block"
    lines = m[1].strip().splitlines()
    assert lines[1] == "replicate sim-server --config fixtures/trials-study/sim.toml --port 8765 &"
    assert tuple(lines[2:]) == COMMANDS
    assert 'base_url = "http://127.0.0.1:8765/v1"' in (ROOT / "fixtures/trials-study/collect.toml").read_text()


def test_every_shown_output_is_what_the_command_prints(fresh_trials_study, monkeypatch):
    blocks = shown()
    assert len(blocks) == 2
    monkeypatch.chdir(fresh_trials_study)
    for command, output in blocks:
        r = runner.invoke(app, shlex.split(command)[1:])
        assert r.exit_code == 1, r.output  # both checks fail: planted figures
        assert r.stdout == output, command
    note = (fresh_trials_study / "note.md").read_text()
    excerpt = re.search(r"provenance and, per cell, the item-level agreement, e.g.:\n\n```\n(.*?)```", DOC, re.S)
    assert excerpt and excerpt[1] in note
