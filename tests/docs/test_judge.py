"""docs/audit.md, concepts.md, floors-and-matrices.md, items.md and worked-audit.md show real output: every
`$ replicate ...` console block is re-run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.parsing import PARSERS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "docs" / name for name in ("audit.md", "concepts.md", "floors-and-matrices.md", "items.md",
                                           "worked-audit.md")]
BLOCK = re.compile(r"```console\n\$ (replicate [^\n]*)\n(.*?)```", re.S)


def console_blocks(path: Path) -> list[tuple[str, str]]:
    """(command, shown output) for each console block whose first line is `$ replicate ...`."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(path.read_text(encoding="utf-8"))]


def run_shown(command: str) -> str:
    """The stdout of a shown command, applying a trailing `| tail -N` if present."""
    tail = None
    if "|" in command:
        command, pipe = (part.strip() for part in command.split("|", 1))
        m = re.fullmatch(r"tail -(\d+)", pipe)
        assert m, f"unsupported pipe in docs: {pipe}"
        tail = int(m.group(1))
    args = shlex.split(command)[1:]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    out = res.stdout
    if tail is not None:
        out = "".join(out.splitlines(keepends=True)[-tail:])
    return out


CASES = [(p.name, cmd, shown) for p in DOCS if p.exists() for cmd, shown in console_blocks(p)]


@pytest.mark.skipif("umbrela-strict@1" not in PARSERS, reason="built-in parsers not installed")
@pytest.mark.parametrize("doc, command, shown", CASES, ids=[f"{d}:{c[:60]}" for d, c, _ in CASES])
def test_doc_output_is_real(monkeypatch, doc, command, shown):
    if "../shared/" in command and not (ROOT.parent / "shared" / "data").is_dir():
        pytest.skip("shared data absent (../shared/data beside the repository)")
    monkeypatch.chdir(ROOT)
    assert run_shown(command) == shown


def test_docs_have_checked_blocks():
    assert len(console_blocks(ROOT / "docs" / "audit.md")) >= 6
