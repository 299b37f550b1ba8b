"""Bad inputs across commands: one ``Error: ...`` line naming the file or option, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example" / "results" / "alpha-2024-05_annotations.jsonl"
ITEMS = ROOT / "fixtures" / "collect" / "items.jsonl"
CONFIG = ROOT / "fixtures" / "collect" / "config.toml"

runner = CliRunner()


def _run(args: list[str]):
    res = runner.invoke(app, [str(a) for a in args], env={"SIM_API_KEY": "x"})
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _one_error(res, *fragments: str) -> None:
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("Error: ")]
    assert len(errors) == 1, res.output
    assert "Traceback" not in res.output
    for frag in fragments:
        assert frag in errors[0], errors[0]


def _archive(directory: Path) -> Path:
    """The smallest archive `score` accepts: a header and no trials, so the items file is what gets read."""
    archive = directory / "a.archive.jsonl"
    archive.write_text('{"type": "header", "format": 1}\n', encoding="utf-8")
    return archive


@pytest.fixture
def bad(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "a-directory.jsonl"
    d.mkdir()
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(128, 256)) * 2)
    return {"missing": tmp_path / "missing.jsonl", "dir": d, "empty": empty, "binary": binary}


@pytest.mark.parametrize(
    "make_args",
    [
        lambda f: ["parse", f, "-p", "umbrela-fallback@1"],
        lambda f: ["compare", EXAMPLE, f, "-p", "umbrela-fallback@1"],
        lambda f: ["parsers", "audit", "-p", "umbrela-strict@1", "-p", "umbrela-fallback@1", f],
        lambda f: ["items", f, "--edge", "a:b", "--null", "0"],
        lambda f: ["screen", f],
        lambda f: ["score", f, "--items", ITEMS, "--out", f.parent / "t.jsonl"],
        lambda f: ["score", _archive(f.parent), "--items", f, "--out", f.parent / "t.jsonl"],
        lambda f: ["collect", CONFIG, "--items", f, "--archive", f.parent / "x.archive.jsonl"],
    ],
    ids=["parse", "compare", "parsers-audit", "items", "screen", "score-archive", "score-items", "collect-items"],
)
@pytest.mark.parametrize("kind", ["missing", "dir", "empty", "binary"])
def test_bad_input_files_are_one_error_line_naming_the_file(bad, make_args, kind):
    path = bad[kind]
    args = make_args(path)
    res = _run(args)
    _one_error(res, str(path))


def test_score_items_directory_names_the_items_file(tmp_path, bad):
    res = _run(["score", _archive(tmp_path), "--items", bad["dir"], "--out", tmp_path / "t.jsonl"])
    _one_error(res, str(bad["dir"]), "items file is a directory")


def test_archive_directory(bad, tmp_path):
    res = _run(["score", bad["dir"], "--items", ITEMS, "--out", tmp_path / "t.jsonl"])
    _one_error(res, str(bad["dir"]), "archive is a directory, not a file")


def test_fetch_check_on_a_file(bad):
    res = _run(["fetch", "--check", bad["empty"]])
    _one_error(res, str(bad["empty"]), "not a directory")


def test_verify_out_is_a_directory(bad):
    claims = ROOT / "fixtures" / "example" / "claims.toml"
    res = _run(["verify", claims, "--root", ROOT / "fixtures" / "example", "--out", bad["dir"]])
    _one_error(res, str(bad["dir"]), "cannot write --out note: is a directory")


def test_verify_out_in_a_missing_directory(tmp_path):
    claims = ROOT / "fixtures" / "example" / "claims.toml"
    note = tmp_path / "no-such-dir" / "note.md"
    res = _run(["verify", claims, "--root", ROOT / "fixtures" / "example", "--out", note])
    _one_error(res, str(note), "its directory does not exist")


def test_windows_line_ends_read_like_unix_ones(tmp_path):
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(EXAMPLE.read_bytes().replace(b"\n", b"\r\n"))
    a = _run(["parse", EXAMPLE, "-p", "umbrela-fallback@1"])
    b = _run(["parse", crlf, "-p", "umbrela-fallback@1"])
    assert a.exit_code == b.exit_code == 0
    assert b.stdout.replace("crlf: read", "alpha-2024-05: read") == a.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["parse", EXAMPLE, "-p", "nosuch@1"], "unknown parser 'nosuch@1'; registered parsers: "),
        (["parsers", "show", "nosuch"], "unknown parser 'nosuch'"),
        (["cells", "1", "2", "3", "4", "--format", "xml"], "'xml' is not one of 'table', 'markdown', 'json'"),
        (["path", EXAMPLE], "Missing argument 'OLD:MIDDLE:NEW'"),
        (["score", EXAMPLE], "Missing option '--items'"),
        (["parsers", "audit", EXAMPLE], "Missing option '--parser'"),
        (["cells", "1", "2", "3"], "Missing argument 'NEITHER'"),
    ],
    ids=["parser", "parser-show", "format", "path-models", "score-items", "audit-parser", "cells-arg"],
)
def test_usage_errors(args, fragment):
    _one_error(_run(args), fragment)
