"""Hostile user text in a verification note: escaped once (replicate.output.md_text / md_code), kept on its line.

Checked with a real CommonMark renderer (markdown-it-py, tables and strikethrough on, as GitHub has them):
what a renderer shows is the text as written, and no tag, link, image, heading, code block or table cell
comes out of it. Ordinary text is unchanged (the golden notes stay byte-identical: tests/golden)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.output import md_cell, md_code, md_text, one_line

ROOT = Path(__file__).resolve().parents[2]
MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")

HOSTILE = [
    "Section 4.2\n# Injected heading",
    "line\r\nbreak\rand\u2028more",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[a [b] c](javascript:alert(1)) and ![x][y] and [r]: javascript:alert(1)",
    "![img](http://example.invalid/x.png)",
    "a | b | c",
    "pipe after backslash \\| here",
    "```sh\nrm -rf /\n```",
    "`code` and ``double``",
    "*bold* _em_ ~~gone~~ __strong__",
    "&lt;script&gt; &#60; &amp;",
    "> quote\n- item\n1. item\n---",
    "<https://example.invalid>",
    "esc \x1b[31mred\x1b[0m nul \x00",
    "back\\slash\\",
]
ORDINARY = ["Section 4.2", "Table 1", "gpt-4o-mini_annotations.jsonl", "alpha-2025-01-repeat", "t1-em-2024-05",
            "results/alpha-2024-05_annotations.jsonl", "umbrela-fallback@1", "Q&A: 47.1%", "snake_case_name"]


def _shown(text: str) -> str:
    """What a reader sees of ``text`` (one line, control bytes replaced), as a renderer writes it in HTML."""
    return html.escape(one_line(text), quote=False).replace('"', "&quot;")


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_written_in_a_paragraph(text):
    out = MD.render("x " + md_text(text) + " y").strip()
    assert out == f"<p>x {_shown(text)} y</p>", out
    assert "\n" not in md_text(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_stays_in_its_table_cell(text):
    md = f"| a | b |\n|---|---|\n| {md_cell(md_text(text))} | end |\n"
    tokens = MD.parse(md)
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 2
    inline = [t for t in tokens if t.type == "inline"]
    assert inline[-1].content == "end"
    assert MD.renderInline(inline[-2].content) == _shown(text).strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_code_span_shows_the_text_and_stays_closed(text):
    out = MD.render("x " + md_code(text) + " y").strip()
    assert out == f"<p>x <code>{_shown(text)}</code> y</p>", out
    md = f"| a | b |\n|---|---|\n| {md_cell(md_code(text))} | end |\n"
    assert sum(t.type == "td_open" for t in MD.parse(md)) == 2


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged(text):
    assert md_text(text) == text
    assert md_code(text) == f"`{text}`"


def _count_cells(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_a_hostile_claims_file_gives_a_note_with_no_injected_structure(tmp_path):
    """Title, reference, claim id / where / text, a run name and a file name, all hostile, through `verify --out`."""
    root = tmp_path / "release"
    shutil.copytree(ROOT / "fixtures" / "example" / "results", root / "results")
    weird_dir = root / "we|rd `x` <b>"
    weird_dir.mkdir()
    weird = weird_dir / "a\n# file.jsonl"
    shutil.copy(root / "results" / "alpha-2024-05_annotations.jsonl", weird)
    run = "run <script>alert(1)</script> | x"
    title = "Study\n# Owned\n<img src=x onerror=alert(1)>"
    claims = {
        "study": {"title": title, "reference": "[ref](javascript:alert(1))"},
        "runs": {run: [str(weird.relative_to(root))]},
        "claims": [{"id": "id`` | <script>", "where": "Table 1\n\n## Fake section", "text": "```\nfenced\n```",
                    "metric": "em", "run": run, "value": "47.1", "unit": "percent", "parser": "umbrela-fallback@1"}],
    }
    path = tmp_path / "claims.toml"
    path.write_text(_toml(claims), encoding="utf-8")
    note = tmp_path / "note.md"
    r = CliRunner().invoke(app, ["verify", str(path), "--root", str(root), "--date", "2026-01-01", "--out", str(note)])
    assert r.exit_code in (0, 1), r.output
    text = note.read_text(encoding="utf-8")
    rendered = MD.render(text)
    assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered
    assert 'href="javascript' not in rendered
    assert re.findall(r"<h1>", rendered) == ["<h1>"]  # only the note's own title
    heads = re.findall(r"<h2>(.*?)</h2>", rendered)
    assert "Owned" not in " ".join(heads) and "Fake section" not in " ".join(heads)
    assert set(heads) <= {"Summary", "Claims", "Edges", "Rerun floors", "Runs", "Flags", "Figures", "Sources",
                          "Reproduce"}, heads
    # one fenced block (Reproduce), and every table row has as many cells as its header
    assert len(re.findall(r"<pre><code", rendered)) == 1
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.startswith("|")]
        if lines:
            assert len({_count_cells(ln) for ln in lines}) == 1, block
    # the hostile text is shown, as written (on one line)
    assert html.escape("<script>alert(1)</script>", quote=False) in rendered
    assert "Study # Owned" in rendered
    assert json.dumps(title)  # (the JSON output keeps the raw text; only the note escapes)


def _toml(data: dict) -> str:
    """A small TOML writer (strings, lists, tables, arrays of tables) with JSON-escaped strings."""
    out = []

    def value(v):
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    for key, v in data.items():
        if isinstance(v, list):
            for item in v:
                out.append(f"[[{key}]]")
                out += [f"{json.dumps(k)} = {value(x)}" for k, x in item.items()]
        else:
            out.append(f"[{key}]")
            out += [f"{json.dumps(k)} = {value(x)}" for k, x in v.items()]
    return "\n".join(out) + "\n"
