"""docs/study-analyses.md: every analysis of the two studies has a command, each a command of `replicate`
whose options exist, and every page it links to exists (anchors included)."""

from __future__ import annotations

import re
import shlex

import typer

from replicate.cli.app import app
from support.paths import ROOT

PAGE = ROOT / "docs" / "study-analyses.md"
ROW = re.compile(r"^\| (?!analysis |---)(.+?) \| (.+?) \| (.+) \|$", re.M)


def rows() -> list[tuple[str, str, str]]:
    return [(m[1], m[2], m[3]) for m in ROW.finditer(PAGE.read_text(encoding="utf-8"))]


def _anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_row_has_a_command_that_exists():
    group = typer.main.get_command(app)
    found = rows()
    assert len(found) >= 30
    for analysis, _, cell in found:
        commands = re.findall(r"`(replicate [^`]+)`", cell)
        assert commands, f"no command for {analysis!r}"
        for text in commands:
            words = shlex.split(text.replace("\\|", "|"))[1:]
            cmd = group.commands.get(words[0])
            assert cmd is not None, f"{analysis!r}: no command {words[0]!r}"
            if hasattr(cmd, "commands"):
                cmd = cmd.commands[words[1]]
            opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
            for w in words:
                if w.startswith("--"):
                    assert w in opts, f"{analysis!r}: {words[0]} has no option {w}"


def test_links_point_at_pages_and_headings_that_exist():
    for page, anchor in re.findall(r"\]\(([\w\-./]+\.md)(?:#([\w\-]+))?\)", PAGE.read_text(encoding="utf-8")):
        target = PAGE.parent / page
        assert target.is_file(), page
        if anchor:
            heads = {_anchor(h) for h in re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)}
            assert anchor in heads, f"{page}#{anchor}"
