"""Labels of a named label set are shown by their names (A, B, tie; B>>A .. A>>B) in tables and JSON.

Hand counts: FastChat gpt-4_pair.jsonl (test_fastchat.py) read by mtbench-pair@1 gives A 4, B 2, tie 1 and
one unparsed; the Arena-Hard file below, written here, gives A>B 2, B>>A 1, A=B 1 and one unparsed.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.labels import LabelSet, label_name
from support.paths import ROOT

PAIR = ROOT / "tests" / "readers" / "data" / "fastchat" / "gpt-4_pair.jsonl"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_label_name_is_the_set_name_or_the_number():
    pair = LabelSet.categorical("A", "B", "tie")
    arena = LabelSet.named_ordinal("B>>A", "B>A", "A=B", "A>B", "A>>B")
    assert [label_name(c, pair) for c in range(3)] == ["A", "B", "tie"]
    assert [label_name(c, arena) for c in range(5)] == ["B>>A", "B>A", "A=B", "A>B", "A>>B"]
    assert label_name(2, LabelSet.ordinal(0, 3)) == 2 and label_name(2, None) == 2
    assert label_name(9, pair) == 9  # outside the set (kept as read): its number


def test_parse_shows_pairwise_verdicts_by_name():
    res = _run("parse", PAIR, "-p", "mtbench-pair@1", "-f", "json", "--replicates", "50")
    assert res.exit_code == 0, res.output
    (run,) = json.loads(res.stdout)["runs"]
    assert run["labels"] == {"A": 4, "B": 2, "tie": 1} and run["unparsed"] == 1
    assert run["label_set"] == {"kind": "categorical", "min": 0, "max": 2, "names": ["A", "B", "tie"]}
    assert set(run["label_shares"]) == {"A", "B", "tie"}
    text = _run("parse", PAIR, "-p", "mtbench-pair@1", "--replicates", "0").stdout
    rows = [line.split()[:2] for line in text.splitlines() if line.split()[:1] in (["A"], ["B"], ["tie"])]
    assert rows == [["A", "4"], ["B", "2"], ["tie", "1"]]


def _v01(qid, judgments, judge):
    games = [{"user_prompt": f"question {qid}", "judgment": j, "score": None} for j in judgments]
    return {"question_id": qid, "model": "m", "judge": judge, "games": games}


def test_arena_hard_verdicts_by_name_in_parse_and_parsers_audit(tmp_path):
    path = tmp_path / "m.jsonl"
    lines = [_v01("q1", ("[[A>B]]", "[[B>>A]]"), "j"), _v01("q2", ("[[A=B]]", "[[A>B]] and [[B>A]]"), "j"),
             _v01("q3", ("[[A>B]]", "[[A>B]]"), "j")]
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    res = _run("parse", path, "-p", "arena-hard@1", "-f", "json", "--replicates", "0", "--reader", "arena-hard-judgment@1")
    assert res.exit_code == 0, res.output
    (run,) = json.loads(res.stdout)["runs"]
    assert run["labels"] == {"B>>A": 1, "A=B": 1, "A>B": 3} and run["unparsed"] == 1
    # the audit's patterns and examples name the labels and the gold too: q2 game 2 is unparsed by arena-hard@1
    # (two verdicts), B>A for arena-hard-last@1 (the last one); the reference judge recorded A>B
    ref = tmp_path / "ref.jsonl"
    scored = [{**o, "judge": "ref", "games": [{**g, "score": s} for g, s in zip(o["games"], scores)]}
              for o, scores in zip(lines, (("A>B", "B>A"), ("A=B", "A>B"), ("A>B", "A>>B")))]
    ref.write_text("".join(json.dumps(o) + "\n" for o in scored), encoding="utf-8")
    res = _run("parsers", "audit", path, "-p", "arena-hard@1", "-p", "arena-hard-last@1", "-f", "json",
               "--reader", "arena-hard-judgment@1", "--gold", ref, "--gold-reader", "arena-hard-score@1",
               "--replicates", "0")
    assert res.exit_code == 0, res.output
    (f,) = json.loads(res.stdout)["files"]
    assert [p["labels"] for p in f["patterns"]] == [{"arena-hard@1": None, "arena-hard-last@1": "B>A"}]
    (ex,) = f["examples"]
    assert (ex["gold"], ex["labels"]) == ("A>B", {"arena-hard@1": None, "arena-hard-last@1": "B>A"})


def test_exported_labels_carry_the_names_beside_the_codes(tmp_path):
    out = tmp_path / "labels.jsonl"
    res = _run("parse", PAIR, "-p", "mtbench-pair@1", "--labels", out, "--replicates", "0",
               "--key-field", "question_id", "--key-field", "model_1", "--key-field", "model_2")
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["label"], r["label_name"]) for r in rows].count((0, "A")) == 4
    assert {(r["label"], r["label_name"]) for r in rows} == {(0, "A"), (1, "B"), (2, "tie"), (None, None)}
