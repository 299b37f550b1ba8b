"""End to end: fetch a tiny judge release, then compare / verify / items name what they read.

The issue asks that commands reading files from a fetched DIR carry its
provenance (source, commit, per-file sha256) into their JSON and markdown
output, and that notes say when reuse of the data is not licensed. Expected
values come from the repository itself (gitpython's commit id, hashlib over the
bytes committed), never from replicate's own output.

Each assertion message names exactly what is missing.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.fetch import HttpSettings, fetch
from support.repos import commit_files, init_repo
from support.server import FakeGitHub
from support.synth.trials import synthetic_rows

runner = CliRunner()
NO_LICENCE = "no licence: reuse of the data is not licensed"
UNKNOWN = "unknown (plain git; root licence file: none)"


def _judge_lines(grades: list[tuple[int, int]]) -> bytes:
    """Flat judge JSONL: one line per (qrel, judged grade), umbrela-style output."""
    return b"".join(
        json.dumps({"query_id": "q1", "corpus_id": f"d{i}", "original_qrel_score": float(qrel),
                    "model_output": f"##final score: {out}"}).encode() + b"\n"
        for i, (qrel, out) in enumerate(grades))


# Exact match by hand: A agrees on items 0, 1, 2, 3, 5, 7 and B on 0, 2, 3, 4, 5, 6: 6 of 8 = 75.0%.
A = _judge_lines([(0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (1, 1), (2, 0), (3, 3)])
B = _judge_lines([(0, 0), (1, 2), (2, 2), (3, 3), (0, 0), (1, 1), (2, 2), (3, 1)])
CLAIMS = """[study]
title = "tiny"
parser = "umbrela-fallback@1"
[runs]
"a" = ["results/a.jsonl"]
"b" = ["results/b.jsonl"]
[[claims]]
id = "em-a"
metric = "em"
run = "a"
value = "75.0"
unit = "percent"
[[claims]]
id = "em-b"
metric = "em"
run = "b"
value = "75.0"
unit = "percent"
"""


def _trials_bytes() -> bytes:
    p = np.linspace(0.2, 0.8, 6)
    rows = synthetic_rows({"old": p, "new": p[::-1].copy()}, k=4, seed=3, benchmark=["x"] * 6)
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A two-commit release: judge files, then a trials table. Returns (repo, files)."""
    path = tmp_path_factory.mktemp("tiny") / "study"
    repo = init_repo(path)
    files = {"results/a.jsonl": A, "results/b.jsonl": B, "trials.jsonl": _trials_bytes()}
    commit_files(repo, files, "release")
    return repo, files


@pytest.fixture(scope="module")
def fetched(tiny, tmp_path_factory):
    """The release fetched over file:// (plain git: licence unknown)."""
    repo, _ = tiny
    base = tmp_path_factory.mktemp("fetched")
    fetch(f"file://{repo.working_tree_dir}", dest=base / "dest", cache_dir=base / "cache")
    return base / "dest"


@pytest.fixture(scope="module")
def fetched_http(tiny, tmp_path_factory):
    """The same release from a GitHub-shaped host that says the repository has no licence."""
    repo, _ = tiny
    base = tmp_path_factory.mktemp("fetched_http")
    gh = FakeGitHub(repo).start()
    try:
        fetch("org/study", dest=base / "dest", cache_dir=base / "cache",
              http=HttpSettings(api_url=gh.api, raw_url=gh.raw, backoff=0), sleep=lambda s: None)
    finally:
        gh.stop()
    return base / "dest"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _compare(dest, fmt: str):
    r = runner.invoke(app, ["compare", str(dest / "results/a.jsonl"), str(dest / "results/b.jsonl"),
                            "-p", "umbrela-fallback@1", "-f", fmt])
    assert r.exit_code == 0, r.output
    return r.stdout


def _source_of(repo) -> str:
    from pathlib import Path

    return Path(repo.working_tree_dir).resolve().as_uri()


# -- compare -------------------------------------------------------------------


def test_compare_json_names_source_commit_and_sha256_per_file(tiny, fetched):
    repo, files = tiny
    out = json.loads(_compare(fetched, "json"))
    for side, rel in (("old", "results/a.jsonl"), ("new", "results/b.jsonl")):
        (f,) = out[side]["files"]
        assert f["sha256"] == _sha(files[rel])
        assert f["matches_manifest"] is True
        assert {k: f["release"][k] for k in ("source", "commit", "repo_path", "licence", "licence_words")} == {
            "source": _source_of(repo), "commit": repo.head.commit.hexsha, "repo_path": rel,
            "licence": "unknown", "licence_words": UNKNOWN}


def test_compare_json_says_when_reuse_is_not_licensed(tiny, fetched_http):
    out = json.loads(_compare(fetched_http, "json"))
    rel = out["old"]["files"][0]["release"]
    assert (rel["source"], rel["licence"], rel["licence_words"]) == ("org/study", None, NO_LICENCE)


def test_compare_markdown_names_source_commit_and_sha256(tiny, fetched):
    repo, files = tiny
    md = _compare(fetched, "markdown")
    missing = [what for what, text in (
        ("source", _source_of(repo)), ("commit", repo.head.commit.hexsha),
        ("sha256 of results/a.jsonl", _sha(files["results/a.jsonl"])),
        ("sha256 of results/b.jsonl", _sha(files["results/b.jsonl"])),
        ("licence words", UNKNOWN)) if text not in md]
    assert missing == [], f"compare -f markdown lacks: {', '.join(missing)}"


# -- verify --------------------------------------------------------------------


def _verify(dest, tmp_path, fmt: str) -> str:
    claims = tmp_path / "claims.toml"
    claims.write_text(CLAIMS)
    r = runner.invoke(app, ["verify", str(claims), "--root", str(dest), "-f", fmt, "--no-plots",
                            "--date", "2024-01-02"])
    assert r.exit_code == 0, r.output
    return r.stdout


def test_verify_markdown_names_release_licence_and_hashes(tiny, fetched, tmp_path):
    repo, files = tiny
    md = _verify(fetched, tmp_path, "markdown")
    assert f"| Data        | {_source_of(repo)} at commit `{repo.head.commit.hexsha}`" in md
    assert f"| Licence     | {UNKNOWN}" in md
    for rel in ("results/a.jsonl", "results/b.jsonl"):
        assert f"`{_sha(files[rel])}` | matches manifest" in md, f"verify note lacks the sha256 of {rel}"


def test_verify_note_says_reuse_is_not_licensed(tiny, fetched_http, tmp_path):
    repo, _ = tiny
    md = _verify(fetched_http, tmp_path, "markdown")
    assert f"org/study at commit `{repo.head.commit.hexsha}`" in md
    assert f"| Licence     | {NO_LICENCE}" in md
    out = json.loads(_verify(fetched_http, tmp_path, "json"))
    assert {s["release"]["licence_words"] for s in out["sources"]} == {NO_LICENCE}


def test_verify_json_sources_carry_sha256_source_and_commit(tiny, fetched, tmp_path):
    repo, files = tiny
    out = json.loads(_verify(fetched, tmp_path, "json"))
    got = {s["release"]["repo_path"]: (s["sha256"], s["release"]["source"], s["release"]["commit"])
           for s in out["sources"]}
    assert got == {rel: (_sha(files[rel]), _source_of(repo), repo.head.commit.hexsha)
                   for rel in ("results/a.jsonl", "results/b.jsonl")}


# -- items ---------------------------------------------------------------------


def _items(dest, fmt: str) -> str:
    r = runner.invoke(app, ["items", str(dest / "trials.jsonl"), "-e", "old:new", "--null", "0",
                            "-f", fmt])
    assert r.exit_code == 0, r.output
    return r.stdout


def test_items_json_names_source_commit_and_sha256(tiny, fetched):
    repo, files = tiny
    f = json.loads(_items(fetched, "json"))["input"]["file"]
    assert f["sha256"] == _sha(files["trials.jsonl"]) and f["matches_manifest"] is True
    assert (f["release"]["source"], f["release"]["commit"]) == (_source_of(repo), repo.head.commit.hexsha)


def test_items_markdown_names_source_commit_and_sha256(tiny, fetched):
    repo, files = tiny
    md = _items(fetched, "markdown")
    missing = [what for what, text in (
        ("source", _source_of(repo)), ("commit", repo.head.commit.hexsha),
        ("sha256 of trials.jsonl", _sha(files["trials.jsonl"]))) if text not in md]
    assert missing == [], f"items -f markdown lacks: {', '.join(missing)}"
