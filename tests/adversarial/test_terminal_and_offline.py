"""Issue 30, items 18 and 20: `fetch --offline` skips what the online fetch skipped for size, and control
characters from file names and contents reach the terminal escaped."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.output import printable, printable_json
from support.repos import commit_files, init_repo

RED = "red\x1b[31m\x07.txt"


def _fetch(tmp_path, *args):
    return CliRunner().invoke(app, ["fetch", *map(str, args)], env={"REPLICATE_CACHE_DIR": str(tmp_path / "cache")})


def _repo(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_files(repo, {"a.txt": b"a\n", "big.bin": bytes(range(256)) * 20})
    return (tmp_path / "repo").as_uri()


def test_offline_reproduces_the_online_selection_with_max_size(tmp_path):
    url = _repo(tmp_path)
    online = _fetch(tmp_path, url, "-d", tmp_path / "on", "--max-size", "1000", "-f", "json")
    assert online.exit_code == 0, online.output
    offline = _fetch(tmp_path, url, "-d", tmp_path / "off", "--max-size", "1000", "--offline", "-f", "json")
    assert offline.exit_code == 0, offline.output
    on, off = json.loads(online.stdout), json.loads(offline.stdout)
    assert [s["path"] for s in on["skipped"]] == ["big.bin"]
    assert off["skipped"] == on["skipped"]  # the same file, for the same reason (its size, the limit)
    assert [f["path"] for f in off["files"]] == [f["path"] for f in on["files"]] == ["a.txt"]
    assert (tmp_path / "off" / "a.txt").read_bytes() == b"a\n" and not (tmp_path / "off" / "big.bin").exists()
    # what the cache never held is still refused offline, naming the way out
    more = _fetch(tmp_path, url, "-d", tmp_path / "more", "--allow-large", "--offline")
    assert more.exit_code == 2 and "big.bin" in more.stderr and "fetch once online" in more.stderr


def test_control_characters_in_a_file_name_are_shown_escaped(tmp_path):
    repo = init_repo(tmp_path / "repo")
    commit_files(repo, {"a.txt": b"a\n"})
    commit_files(repo, {RED: b"x\n"})
    for fmt in ("table", "markdown", "json"):
        res = _fetch(tmp_path, (tmp_path / "repo").as_uri(), "-d", tmp_path / f"d-{fmt}", "-f", fmt)
        assert res.exit_code == 0, res.output
        assert "\x1b" not in res.output and "\x07" not in res.output
        if fmt == "json":
            out = json.loads(res.stdout)  # the same name, JSON-escaped (written, or skipped with its reason)
            assert RED in [f["path"] for f in out["files"] + out["skipped"]]
        else:
            assert "red\\x1b[31m\\x07.txt" in res.stdout


def test_a_parse_error_shows_control_bytes_escaped(tmp_path):
    bad = tmp_path / "dup.txt"
    bad.write_bytes(b"q\x1b[31m\x00 0 d 1\nq\x1b[31m\x00 0 d 2\n")
    res = CliRunner().invoke(app, ["parse", str(bad), "--reader", "trec-qrels@1"])
    assert res.exit_code == 2
    assert "\x1b" not in res.stderr and "\x00" not in res.stderr
    assert "duplicate item q\\x1b[31m\\x00 / d" in res.stderr


def test_the_escapes():
    assert printable("a\tb\nc\rd\x7fe\x85f\u202eg é ✓") == "a\tb\nc\\x0dd\\x7fe\\x85f\\u202eg é ✓"
    assert json.loads(printable_json(json.dumps("\x7f\u202e\x85", ensure_ascii=False))) == "\x7f\u202e\x85"
