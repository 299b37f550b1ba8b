"""`replicate import`: benchmark logs (inspect epochs, lm-eval samples) into the trials table of `replicate items`.

The fixtures are the readers' own (tests/readers/data): inspect logs written by
tools/make_inspect_logs.py and six gsm8k-shaped lm-eval samples per file. Every
expected figure below is counted by hand from the values written there.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT
from support.synth import inspect_logs as il
from support.synth.inspect_logs import Sample

INSPECT = ROOT / "tests" / "readers" / "data" / "inspect"
LM_EVAL = ROOT / "tests" / "readers" / "data" / "lm_eval"
OLD, EPOCHS = INSPECT / "old.eval", INSPECT / "epochs.eval"
A = LM_EVAL / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl"
B = LM_EVAL / "samples_gsm8k_2024-11-20T09-30-00.000000.jsonl"

# inspect, scorer "match", per sample id 1..6 (il.OLD_MATCH, il.NEW_MATCH, il.EPOCH2_MATCH):
#   old.eval     epoch 1  C C I I C I
#   epochs.eval  epoch 1  C I C I C C
#                epoch 2  C C C C C C
# lm-eval strict-match exact_match per doc 0..5:  A 1 1 0 0 1 0   B 1 0 1 0 1 0


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _items_json(table, edge):
    res = _run("items", table, "--edge", edge, "--null", "0", "-f", "json")
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def test_every_epoch_of_an_inspect_log_is_a_trial(tmp_path):
    out = tmp_path / "t.jsonl"
    res = _run("import", EPOCHS, "--out", out, "--reader", "inspect-log@1")
    assert res.exit_code == 0, res.stderr
    rows = _rows(out)
    assert len(rows) == 12
    got = {(r["item"], r["trial"]): r["category"] for r in rows}
    want = {}
    for epoch, letters in ((1, "CICICC"), (2, "CCCCCC")):
        for i, c in enumerate(letters, 1):
            want[(str(i), epoch)] = "correct" if c == "C" else "wrong"
    assert got == want
    assert {r["model"] for r in rows} == {il.NEW_MODEL}  # eval.model of the log
    assert {r["benchmark"] for r in rows} == {"arith"}  # eval.task
    assert {r["reader"] for r in rows} == {"inspect-log@1"}
    assert "12 rows (1 model(s), 6 item(s))" in res.stdout and "unscored: none" in res.stdout


def test_items_on_the_imported_table_matches_the_hand_count(tmp_path):
    out = tmp_path / "t.jsonl"
    res = _run("import", OLD, EPOCHS, "--out", out, "--inspect-scorer", "match", "-f", "json")
    assert res.exit_code == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["rows"] == 6 + 12 and rep["items"] == 6
    assert [(c["model"], c["trials_per_item"]) for c in rep["cells"]] == [
        (il.OLD_MODEL, {"min": 1, "max": 1}), (il.NEW_MODEL, {"min": 2, "max": 2})]
    j = _items_json(out, f"{il.OLD_MODEL}:{il.NEW_MODEL}")
    (cell,) = j["cells"]
    # per item p: old 1 1 0 0 1 0 (mean 1/2); new 1 1/2 1 1/2 1 1 (mean 5/6)
    assert cell["n_items"] == 6
    assert cell["delta"] == pytest.approx(5 / 6 - 1 / 2)
    assert cell["source_side"]["trials"] == 6 and cell["target_side"]["trials"] == 12
    assert cell["source_side"]["accuracy"] == pytest.approx(0.5)
    assert cell["target_side"]["accuracy"] == pytest.approx(5 / 6)


def test_lm_eval_files_of_one_model_are_trials_in_file_order(tmp_path):
    out = tmp_path / "t.jsonl"
    res = _run("import", A, B, "--out", out, "--model", "m", "--filter", "strict-match")
    assert res.exit_code == 0, res.stderr
    rows = _rows(out)
    got = {(r["item"], r["trial"]): r["category"] for r in rows}
    # exact_match 1 1 0 0 1 0 and 1 0 1 0 1 0; every 0 is "[invalid]" under strict-match: the
    # regex found no answer (A: docs 2, 3, 5; B: docs 1, 3, 5), written as format_failure
    cat = {"1": "correct", "0": "wrong", "x": "format_failure"}
    want = {(str(d), t): cat[v] for t, vs in ((0, "11xx1x"), (1, "1x1x1x")) for d, v in enumerate(vs)}
    assert got == want
    assert "extraction failures: 6 trial(s) whose answer the log's own filter did not find" in res.stdout
    assert {r["benchmark"] for r in rows} == {"gsm8k"}  # from the file name samples_gsm8k_<date>.jsonl
    assert "file order: trial 0" in res.stdout and "file order: trial 1" in res.stdout


def test_lm_eval_one_model_per_file_gives_an_edge_for_items(tmp_path):
    out = tmp_path / "t.csv"
    res = _run("import", A, B, "--out", out, "--model", "old", "--model", "new", "--filter", "strict-match")
    assert res.exit_code == 0, res.stderr
    j = _items_json(out, "old:new")
    (cell,) = j["cells"]
    # A 1 1 0 0 1 0 and B 1 0 1 0 1 0: both 3 of 6 right
    assert cell["n_items"] == 6 and cell["delta"] == 0
    assert cell["source_side"]["accuracy"] == pytest.approx(0.5) and cell["target_side"]["accuracy"] == pytest.approx(0.5)


def _log_with_unscored(tmp_path):
    samples = [
        Sample(1, {"match": "C"}), Sample(2, {"match": "I"}), Sample(3, {"match": None}),
        Sample(4, None, error="RateLimitError: too many requests"),
        Sample(1, {"match": "C"}, epoch=2), Sample(2, {"match": "C"}, epoch=2),
        Sample(3, {"match": "I"}, epoch=2), Sample(4, {"match": "C"}, epoch=2),
    ]
    return il.write_eval_log(tmp_path / "u.eval", samples, model="m/x", task="t")


def test_unscored_samples_are_written_as_a_category_and_counted(tmp_path):
    log = _log_with_unscored(tmp_path)
    out = tmp_path / "t.jsonl"
    res = _run("import", log, "--out", out, "-f", "json")
    assert res.exit_code == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["unscored"] == {"trials": 2, "written_as": "api_error"}
    assert rep["cells"][0]["categories"] == {"correct": 4, "wrong": 2, "api_error": 2}
    cats = {(r["item"], r["trial"]): r["category"] for r in _rows(out)}
    assert cats[("3", 1)] == "api_error" and cats[("4", 1)] == "api_error"
    # the reader warns of each sample (a null score, an error), the import of what it wrote for them
    assert rep["warnings"]["by_code"] == {"unscored": 1, "sample-error": 1, "unscored-written": 1}

    out2 = tmp_path / "w.jsonl"
    res = _run("import", log, "--out", out2, "--unscored", "wrong")
    assert res.exit_code == 0, res.stderr
    assert "unscored: 2 trial(s) without a verdict, written as wrong" in res.stdout
    assert sum(r["category"] == "wrong" for r in _rows(out2)) == 4


def test_provenance_names_the_reader_and_each_file_with_its_sha256(tmp_path):
    res = _run("import", OLD, EPOCHS, "--out", tmp_path / "t.jsonl", "--inspect-scorer", "match", "-f", "json")
    assert res.exit_code == 0, res.stderr
    inputs = json.loads(res.stdout)["inputs"]
    assert [i["sha256"] for i in inputs] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in (OLD, EPOCHS)]
    assert {i["reader"] for i in inputs} == {"inspect-log@1"}
    assert inputs[0]["reader_chosen"] == "by content" and inputs[0]["reader_options"]["scorer"] == "match"
    assert inputs[1]["model"] == il.NEW_MODEL and inputs[1]["model_from"] == "the file"


def test_an_existing_out_is_refused_unless_forced(tmp_path):
    out = tmp_path / "t.jsonl"
    out.write_text("keep me\n")
    res = _run("import", EPOCHS, "--out", out)
    assert res.exit_code == 2 and "--out" in res.stderr and "exists" in res.stderr and "--force" in res.stderr
    assert out.read_text() == "keep me\n"
    res = _run("import", EPOCHS, "--out", out, "--force")
    assert res.exit_code == 0, res.stderr
    assert len(_rows(out)) == 12
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]  # no temporary file left behind


def test_an_unknown_reader_is_refused(tmp_path):
    res = _run("import", EPOCHS, "--out", tmp_path / "t.jsonl", "--reader", "no-such@1")
    assert res.exit_code == 2 and "no-such@1" in res.stderr
    assert not (tmp_path / "t.jsonl").exists()


def test_a_file_that_names_no_model_needs_model(tmp_path):
    res = _run("import", A, "--out", tmp_path / "t.jsonl", "--filter", "strict-match")
    assert res.exit_code == 2
    assert f"{A}: the file does not name its model (lm-eval-samples@1); pass --model" in res.stderr
    assert not (tmp_path / "t.jsonl").exists()


def test_a_model_count_that_fits_neither_rule_is_refused(tmp_path):
    res = _run("import", A, B, "--out", tmp_path / "t.jsonl", "--filter", "strict-match",
               "--model", "a", "--model", "b", "--model", "c")
    assert res.exit_code == 2 and "--model is given 3 times for 2 files" in res.stderr


def test_a_reader_of_raw_outputs_is_refused(tmp_path):
    f = tmp_path / "j.jsonl"
    f.write_text('{"query_id": "1", "corpus_id": "2", "original_qrel_score": 1, "model_output": "3"}\n')
    res = _run("import", f, "--out", tmp_path / "t.jsonl", "--model", "m", "--benchmark", "b", "--reader", "judge-jsonl@1")
    assert res.exit_code == 2
    assert "judge-jsonl@1 reads outputs (not correctness verdicts)" in res.stderr and "inspect-log@1" in res.stderr


def test_the_same_file_twice_is_refused(tmp_path):
    res = _run("import", EPOCHS, EPOCHS, "--out", tmp_path / "t.jsonl")
    assert res.exit_code == 2 and "holds the same bytes as" in res.stderr and "counted twice" in res.stderr


def test_the_same_trial_from_two_files_is_refused_naming_both(tmp_path):
    other = tmp_path / "copy.eval"
    il.write_eval_log(other, il.epoch_samples()[:6], model=il.NEW_MODEL)  # epoch 1 again, other bytes
    res = _run("import", EPOCHS, other, "--out", tmp_path / "t.jsonl")
    assert res.exit_code == 2
    assert "item '1', trial 1 is given again (first at" in res.stderr and str(EPOCHS) in res.stderr


def test_unscored_as_correct_is_refused(tmp_path):
    res = _run("import", EPOCHS, "--out", tmp_path / "t.jsonl", "--unscored", "correct")
    assert res.exit_code == 2 and "--unscored must be one of wrong" in res.stderr


def test_an_unknown_table_extension_is_refused_before_reading(tmp_path):
    res = _run("import", EPOCHS, "--out", tmp_path / "t.txt")
    assert res.exit_code == 2 and "unknown table format" in res.stderr


def test_the_several_trials_error_points_to_an_import_that_works(tmp_path):
    res = _run("compare", OLD, EPOCHS, "--inspect-scorer", "match", "-f", "json", "--replicates", "0")
    assert res.exit_code == 2
    assert "read every trial into a trials table with 'replicate import --reader inspect-log@1'" in res.stderr
    res = _run("import", "--reader", "inspect-log@1", OLD, EPOCHS, "--inspect-scorer", "match", "--out", tmp_path / "t.jsonl")
    assert res.exit_code == 0, res.stderr
