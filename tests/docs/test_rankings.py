"""docs/rankings.md shows real output: its runs are generated as written and every `$ replicate` block re-run."""

from __future__ import annotations

import re
import shlex

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.examples.trec_runs import main as make_runs
from support.paths import LLMJUDGE, ROOT

DOC = ROOT / "docs" / "rankings.md"
BLOCK = re.compile(r"```console\n\$ ([^\n]*)\n(.*?)```", re.S)
VERSION = re.compile(r"ir-measures \d[^)\s]*")


def _blocks():
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


def test_the_doc_has_its_blocks():
    commands = [c for c, _ in _blocks()]
    assert commands[0].startswith("python -m replicate.examples.trec_runs ")
    assert sum(c.startswith("replicate rankings ") for c in commands) == 2


def test_doc_output_is_real(tmp_path, monkeypatch):
    (tmp_path / "llmjudge").symlink_to(LLMJUDGE, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    blocks = _blocks()
    gen, _ = blocks[0]
    assert make_runs(shlex.split(gen)[3:]) == 0
    for command, shown in blocks[1:]:
        command, _, pipe = command.partition("|")
        res = CliRunner().invoke(app, shlex.split(command)[1:])
        assert res.exit_code == 0, res.output
        out = res.stdout
        if pipe:
            n = int(re.fullmatch(r"\s*tail -(\d+)\s*", pipe).group(1))
            out = "".join(out.splitlines(keepends=True)[-n:])
        # the heading names the installed ir-measures version
        assert VERSION.sub("ir-measures X", out) == VERSION.sub("ir-measures X", shown), command
