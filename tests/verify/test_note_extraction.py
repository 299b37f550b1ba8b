"""lm-eval extraction failures ([invalid]) in the verification note: a Runs column, a flag, and the JSON.

The fixtures are the hand-written lm-eval samples of tests/readers/data/lm_eval: under strict-match the
filter found no answer in docs 2, 3, 5 of A and 1, 3, 5 of B (three each, counted by hand)."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data" / "lm_eval"
A = DATA / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl"
B = DATA / "samples_gsm8k_2024-11-20T09-30-00.000000.jsonl"

CLAIMS = """
[study]
title = "lm-eval extraction"

[runs]
a = { files = ["a.jsonl"], reader = "lm-eval-samples@1", filter = "strict-match", correct_field = "exact_match" }
b = { files = ["b.jsonl"], reader = "lm-eval-samples@1", filter = "strict-match", correct_field = "exact_match" }

[[claims]]
id = "em-a"
metric = "em"
run = "a"
unparsed = "intersect"
value = "100"
unit = "percent"

[[claims]]
id = "em-b-wrong"
metric = "em"
run = "b"
value = "50"
unit = "percent"
"""


def test_extraction_failures_reach_the_runs_table_the_flags_and_the_json(tmp_path):
    shutil.copy(A, tmp_path / "a.jsonl")
    shutil.copy(B, tmp_path / "b.jsonl")
    (tmp_path / "claims.toml").write_text(CLAIMS, encoding="utf-8")
    args = ["verify", str(tmp_path / "claims.toml"), "--root", str(tmp_path), "--date", "2026-01-01"]
    r = CliRunner().invoke(app, [*args, "-f", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    # intersect (pinned: a departure from lm-eval's rule) drops the 3 [invalid] docs of A (docs 0, 1, 4 remain,
    # all right); lm-eval's rule, the default, counts B's as wrong
    assert {c["id"]: c["verdict"] for c in out["claims"]} == {"em-a": {"lm-eval-metric": "match"},
                                                              "em-b-wrong": {"lm-eval-metric": "match"}}
    assert out["extraction_failures"] == {"a": 3, "b": 3}
    assert [f["kind"] for f in out["flags"]].count("extraction") == 2
    assert [f["message"][:62] for f in out["flags"] if f["kind"] == "departure"] == [
        "claim 'em-a' pins unparsed = 'intersect', a departure from the"]
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "note.md"), "--no-plots"])
    assert r.exit_code == 0, r.output
    note = (tmp_path / "note.md").read_text(encoding="utf-8")
    runs = note.split("## Runs")[1].split("\n\n")[1]  # the first table of the section
    header = next(line for line in runs.splitlines() if line.startswith("| run"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert "extraction failures" in cells
    col = cells.index("extraction failures")
    rows = {c[0]: c for line in runs.splitlines() if line.startswith("| ") and not line.startswith("| run")
            for c in [[x.strip() for x in line.strip("|").split("|")]]}
    assert rows["a"][col] == "3" and rows["b"][col] == "3"
    message = "a: 3 documents had no answer extracted ([invalid]); dropped under intersect, wrong under wrong"
    assert {"kind": "extraction", "message": message} in out["flags"]
    # in the note as written (no markdown to escape in it), wrapped at 100 columns
    assert "- extraction: " + message in " ".join(note.split("## Flags")[1].split())


def test_no_column_when_no_reader_tells_extraction_failures_apart():
    golden = (ROOT / "tests" / "golden" / "note_example.md").read_text(encoding="utf-8")
    assert "extraction failures" not in golden and "extraction:" not in golden
