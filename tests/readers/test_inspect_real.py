"""inspect-log@1 on logs inspect_ai wrote itself (data/inspect/real, README there: repository, path, commit, MIT).

Hand counts from the README (each sample member read by hand): popularity, match scorer, 10 samples,
I on ids 3 and 7; log_streaming: id 1 I then C, id 2 C and C over epochs 1 and 2.
"""

from __future__ import annotations

import json
import zipfile

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.reading.contract import ReadOptions
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data" / "inspect" / "real"
POP = DATA / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
STREAM = DATA / "log_streaming.eval"
V3 = DATA / "log_message_deduplication.eval"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_the_files_are_what_the_readme_says():
    z = zipfile.ZipFile(POP)
    scores = {json.loads(z.read(n))["id"]: json.loads(z.read(n))["scores"]["match"]["value"]
              for n in z.namelist() if n.startswith("samples/")}
    assert scores == {i: ("I" if i in (3, 7) else "C") for i in range(1, 11)}
    assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}


def test_a_real_log_reads_the_hand_count_chosen_by_content():
    res = _run("parse", POP, "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    (run,) = json.loads(res.stdout)["runs"]
    assert (run["run"], run["records"], run["labels"], run["unparsed"]) == ("openai/gpt-4o-mini", 10, {"0": 2, "1": 8}, 0)
    assert run["files"][0]["about"] == {"model": "openai/gpt-4o-mini", "task": "popularity"}
    assert "reader: inspect-log@1 (chosen by content" in res.stderr


def test_epochs_of_a_real_log_one_at_a_time_and_as_trials(tmp_path):
    for epoch, want in ((1, {"1": 0, "2": 1}), (2, {"1": 1, "2": 1})):
        run = load_run("r", STREAM, diagnostics=Diagnostics(), options=ReadOptions(extra={"epoch": epoch}))
        assert dict(zip(run.keys.tolist(), run.labels.tolist())) == want
    out = tmp_path / "t.jsonl"
    res = _run("import", STREAM, "--out", out, "-f", "json")
    assert res.exit_code == 0, res.output
    rows = {(r["item"], r["trial"]): r["category"] for r in map(json.loads, out.read_text().splitlines())}
    assert rows == {("1", 1): "wrong", ("1", 2): "correct", ("2", 1): "correct", ("2", 2): "correct"}


def test_an_unreleased_log_version_is_refused_saying_what_to_do():
    with pytest.raises(BadInput, match=r"inspect log format version 3 is not known to inspect-log@1 \(known: 1, 2\)"):
        load_run("r", V3, diagnostics=Diagnostics())
