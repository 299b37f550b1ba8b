"""fastchat-pair@1: FastChat llm_judge pairwise judgments, two games a line, compared against human gold.

data/fastchat holds our own files in the exact shape FastChat's gen_judgment.py
writes (model_judgment/<judge>_pair.jsonl; every field of play_a_match_pair's
record) for two judges over four (question, pair, turn) matches, and a gold of
human verdicts as text, keyed in the order shown. Hand count, game by game
(human / gpt-4 / claude-v1, as mtbench-pair@1 reads them):

    81 t1 g1  A   / A ok     / A ok        81 t1 g2  B   / B ok     / B ok
    81 t2 g1  tie / tie ok   / B wrong     81 t2 g2  tie / A wrong  / tie ok
    82 t1 g1  A   / A ok     / A ok        82 t1 g2  B   / B ok     / A wrong
    83 t1 g1  B   / A wrong  / B ok        83 t1 g2  A   / unparsed / A ok   ($ERROR$)

Over the 7 items parsed on both sides: both 3, only_old 2 (81t2g1, 82t1g2),
only_new 2 (81t2g2, 83t1g1), neither 0; labels differ on 4 (81t2 both games,
82t1g2, 83t1g1).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.judge.model import KEY_SEP
from replicate.parsing import PARSERS
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data" / "fastchat"
OLD, NEW, GOLD = DATA / "gpt-4_pair.jsonl", DATA / "claude-v1_pair.jsonl", DATA / "human_gold.jsonl"
GOLD_FIELDS = ["--key-field", "question_id", "--key-field", "model_a", "--key-field", "model_b",
               "--key-field", "turn", "--gold-field", "winner"]


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_compare_two_judges_against_human_verdicts():
    res = _run("compare", OLD, NEW, "-p", "mtbench-pair@1", "--gold", GOLD, *GOLD_FIELDS,
               "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["reader"] == "fastchat-pair@1" and out["parser"] == "mtbench-pair@1"
    assert out["cells"] == {"both": 3, "only_old": 2, "only_new": 2, "neither": 0}
    assert out["n"] == 7 and out["changed"] == 4
    assert out["unparsed"] == {"old": 1, "new": 0}
    assert out["gold"]["reader"] == "gold-jsonl@1" and out["gold"]["entries"] == 8
    assert [(r["with_gold"], r["without_gold"]) for r in out["gold"]["runs"]] == [(8, 0), (8, 0)]
    assert "reader: fastchat-pair@1 (chosen by content" in res.stderr


def test_games_are_keyed_in_the_order_shown():
    run = load_run("gpt4", [OLD], diagnostics=Diagnostics())
    pair = PARSERS.get("mtbench-pair@1")
    labels = run.label_with(pair).labels.tolist()
    got = [(tuple(str(k).split(KEY_SEP)), None if c < 0 else pair.label_set.show(c)) for k, c in zip(run.keys, labels)]
    assert got == [
        (("81", "gpt-3.5-turbo", "vicuna-13b-v1.3", "1"), "A"),  # game 1: model_1 shown as A
        (("81", "vicuna-13b-v1.3", "gpt-3.5-turbo", "1"), "B"),  # game 2: swapped
        (("81", "gpt-3.5-turbo", "vicuna-13b-v1.3", "2"), "tie"),
        (("81", "vicuna-13b-v1.3", "gpt-3.5-turbo", "2"), "A"),
        (("82", "gpt-3.5-turbo", "llama-13b", "1"), "A"),
        (("82", "llama-13b", "gpt-3.5-turbo", "1"), "B"),
        (("83", "vicuna-13b-v1.3", "llama-13b", "1"), "A"),
        (("83", "llama-13b", "vicuna-13b-v1.3", "1"), None),  # $ERROR$
    ]


def test_bad_records_are_named(tmp_path):
    line = json.loads(OLD.read_text(encoding="utf-8").splitlines()[0])
    cases = [
        ({k: v for k, v in line.items() if k != "turn"}, "record lacks 'turn'"),
        ({**line, "g2_judgment": 7}, "'g2_judgment' must be a string, got a JSON int (7)"),
        ({**line, "model_1": None}, "'model_1' must be a string or an integer, got null"),
        ({k: v for k, v in line.items() if k != "g2_judgment"}, "record lacks 'g2_judgment' (the judge's raw output)"),
    ]
    for i, (bad, message) in enumerate(cases):
        path = tmp_path / f"bad{i}.jsonl"
        path.write_text(json.dumps(line) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
        with pytest.raises(BadInput) as exc:
            load_run("r", [path], diagnostics=Diagnostics(), reader="fastchat-pair@1")
        assert str(exc.value) == f"{path}:2: {message}"


def test_null_judgment_is_unparsed_and_warned(tmp_path):
    line = json.loads(OLD.read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "null.jsonl"
    path.write_text(json.dumps({**line, "g1_judgment": None}) + "\n", encoding="utf-8")
    diag = Diagnostics()
    run = load_run("r", [path], diagnostics=diag, reader="fastchat-pair@1")
    assert run.label_with(PARSERS.get("mtbench-pair@1")).labels.tolist() == [-1, 1]  # g1 null; g2 "[[B]]"
    assert "null-output" in {w.code for w in diag.warnings}


def test_single_ratings_against_human_ratings():
    """fastchat-single@1 with mtbench-single@1; by hand (human / gpt-4 / gpt-3.5-turbo):
    81 t1 8 / 8 ok / 8 ok; 81 t2 6 / [[7.5]] unparsed / 6 ok; 82 t1 3 / the citation [1] read as 1, wrong /
    3 ok; 83 t1 9 / 9 ok / 10 wrong. Over the 3 items parsed on both sides: both 1, only_old 1, only_new 1;
    labels differ on 2."""
    old, new = DATA / "gpt-4_single.jsonl", DATA / "gpt-3.5-turbo_single.jsonl"
    res = _run("compare", old, new, "-p", "mtbench-single@1", "--gold", DATA / "human_ratings.jsonl",
               "--key-field", "question_id", "--key-field", "model", "--key-field", "turn", "--gold-field", "rating",
               "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["reader"] == "fastchat-single@1"
    assert out["cells"] == {"both": 1, "only_old": 1, "only_new": 1, "neither": 0}
    assert out["n"] == 3 and out["changed"] == 2 and out["unparsed"] == {"old": 1, "new": 0}
    run = load_run("g", [old], diagnostics=Diagnostics())
    assert [tuple(str(k).split(KEY_SEP)) for k in run.keys][:2] == [("81", "vicuna-13b-v1.3", "1"), ("81", "vicuna-13b-v1.3", "2")]
