"""trec-qrels@1 as a run of decided labels and as --gold; the LLMJudge acceptance on the real files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.api import load_runs
from replicate.judge.load import load_run
from replicate.judge.select import RunSpec
from support.paths import LLMJUDGE, ROOT, text_of

DATA = ROOT / "tests" / "readers" / "data"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _qrels(path):
    out = {}
    for line in text_of(path).splitlines():
        qid, _, docid, grade = line.split()
        out[(qid, docid)] = int(grade)
    return out


def _hand_cells(old, new, gold):
    """Four cells counted by hand over the items all three have."""
    cells = dict(both=0, only_old=0, only_new=0, neither=0)
    changed = 0
    for k in gold.keys() & old.keys() & new.keys():
        o, n = old[k] == gold[k], new[k] == gold[k]
        cells["both" if o and n else "only_old" if o else "only_new" if n else "neither"] += 1
        changed += old[k] != new[k]
    return cells, changed


def test_compare_qrels_against_separate_gold():
    res = _run("compare", DATA / "old.txt", DATA / "new.txt", "--reader", "trec-qrels@1", "--gold", DATA / "gold.txt",
               "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    # by hand: shared items with gold q1/p1..p3, q2/p1, q2/p4, q2/p5 (q9/p9 has no gold)
    assert out["cells"] == {"both": 2, "only_old": 2, "only_new": 2, "neither": 0}
    assert out["changed"] == 4 and out["n"] == 6
    assert out["parser"] == "qrels-grades" and out["reader"] == "trec-qrels@1"
    gold = out["gold"]
    assert gold["reader"] == "trec-qrels@1" and gold["entries"] == 7
    assert gold["runs"][0] == {"name": "old.txt", "items": 7, "with_gold": 6, "without_gold": 1,
                               "first_without_gold": ["q9 / p9"], "gold_without_item": 1,
                               "first_gold_without_item": ["q3 / p7"]}
    assert out["warnings"]["by_code"] == {"no-gold": 2, "gold-without-item": 2}
    # the gold file's reader was chosen by content, and said so
    assert "reader: trec-qrels@1 (chosen by content; --reader to choose) for " in res.stderr
    assert "gold.txt" in res.stderr


def test_qrels_without_gold_asks_for_it():
    res = _run("compare", DATA / "old.txt", DATA / "new.txt")
    assert res.exit_code == 2
    assert "run 'old.txt' carries no gold (its reader trec-qrels@1 reads labels only): give the reference labels " \
           "with --gold FILE" in res.stderr
    # parse needs none: it describes the labels
    parse = json.loads(_run("parse", DATA / "old.txt", "-f", "json").stdout)
    assert parse["runs"][0]["labels"] == {"0": 2, "1": 2, "2": 2, "3": 1} and parse["runs"][0]["gold"] == {}


def test_gold_that_disagrees_with_a_run_names_both_places(tmp_path):
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 2, "model_output": "##final score: 2"}\n')
    res = _run("parse", run, "-p", "umbrela-fallback@1", "--gold", DATA / "gold.txt")
    assert res.exit_code == 2
    assert f"item q1 / p1 has gold 2 in run 'run' ({run}:1) but 3 in the gold file ({DATA / 'gold.txt'}:1)" in res.stderr


def test_gold_joined_twice_with_different_grades_is_an_error(tmp_path):
    gold = tmp_path / "gold.txt"
    gold.write_text("q1 0 p1 3\nq1 0 p2 0\nq1 0 p1 2\n")
    with pytest.raises(BadInput, match=r"gold.txt:3: duplicate item q1 / p1 with different content \(first at .*gold.txt:1\)"):
        load_runs([RunSpec("r", (DATA / "old.txt",))], gold=gold)


def test_crlf_and_q0_and_a_grade_off_the_scale():
    diag = Diagnostics()
    run = load_run("r", DATA / "crlf_q0.txt", diagnostics=diag)
    assert run.reader == "trec-qrels@1" and run.labels.tolist() == [3, 0, 10, 1, 0, 2]
    assert [(w.code, w.line) for w in diag.warnings] == [("label-outside-set", 3)]


def test_floor_of_qrels_runs():
    res = _run("floor", DATA / "old.txt", DATA / "new.txt", "--reader", "trec-qrels@1", "--gold", DATA / "gold.txt",
               "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["reader"] == "trec-qrels@1" and out["parser"] == "qrels-grades"
    assert out["pairs"][0]["cells"] == {"both": 2, "only_old": 2, "only_new": 2, "neither": 0}


def test_llmjudge_compare_equals_a_hand_count():
    gold_path = LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz"
    old_path, new_path = LLMJUDGE / "NISTRetrieval-instruct0.txt.gz", LLMJUDGE / "h2oloo-zeroshot2.txt.gz"
    res = _run("compare", old_path, new_path, "--reader", "trec-qrels@1", "--gold", gold_path, "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    cells, changed = _hand_cells(_qrels(old_path), _qrels(new_path), _qrels(gold_path))
    assert out["cells"] == cells and out["changed"] == changed and out["n"] == 4423
    # h2oloo-zeroshot2.txt is one byte longer than its siblings: one grade is 10, off the 0-3 scale.
    # It is read as written (by default kept, wrong against any 0-3 gold) and warned with its line, not dropped.
    assert out["warnings"]["first"] == [{
        "code": "label-outside-set",
        "message": "label 10 lies outside the label set ordinal 0-3 (read as written; --out-of-scale decides how it counts)",
        "path": str(new_path), "line": 3187,
    }]
    assert out["new"]["unparsed"] == 0


def test_llmjudge_floor_of_three_reruns():
    runs = [LLMJUDGE / f"NISTRetrieval-instruct{i}.txt.gz" for i in range(3)]
    res = _run("floor", *runs, "--reader", "trec-qrels@1", "--gold", LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    gold = _qrels(LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz")
    grades = [_qrels(p) for p in runs]
    by_pair = {(p["old"], p["new"]): p for p in out["pairs"]}
    for i in range(3):
        for j in range(3):
            if i != j:
                cells, changed = _hand_cells(grades[i], grades[j], gold)
                pair = by_pair[(runs[i].name.removesuffix(".gz"), runs[j].name.removesuffix(".gz"))]
                assert pair["cells"] == cells and pair["changed"] == changed
    assert out["shared_items"] == 4423 and out["warnings"]["count"] == 0
