"""The `replicate draw` example of docs/collect.md is what it prints (run where the doc's relative paths hold),
and the sample it writes is the drawn items' lines of the source."""

from __future__ import annotations

import re
import shlex

from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

DOC = (ROOT / "docs" / "collect.md").read_text()


def test_draw_example_is_what_draw_prints(tmp_path, monkeypatch):
    m = re.search(r"## Drawing the item sample.*?```\n\$ (replicate draw [^\n]*)\n(.*?)```", DOC, re.S)
    assert m, "no '$ replicate draw ...' block under '## Drawing the item sample' in docs/collect.md"
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, shlex.split(m[1])[1:])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == m[2]
    source = (ROOT / "fixtures" / "collect" / "items.jsonl").read_bytes().splitlines(keepends=True)
    assert set((tmp_path / "sample.jsonl").read_bytes().splitlines(keepends=True)) <= set(source)
