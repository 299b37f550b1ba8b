"""The planning example in docs/items.md is what `replicate plan` prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app

DOC = (Path(__file__).resolve().parents[2] / "docs" / "items.md").read_text()


def test_planning_example_is_what_plan_prints():
    m = re.search(r"### Planning example\n.*?\n```\n\$ (replicate plan [^\n]*)\n(.*?)```", DOC, re.S)
    assert m, "no '$ replicate plan ...' block under '### Planning example' in docs/items.md"
    r = CliRunner().invoke(app, shlex.split(m[1])[1:])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == m[2]
