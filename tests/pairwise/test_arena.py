"""Chatbot Arena battles (arena-battles@1): per-model win rates, and a judge's agreement with human votes.

Battles written below (FastChat's clean_battle layout), counted by hand:

    b1 q1 x-y model_a          x wins
    b2 q1 y-x model_b          x wins
    b3 q2 x-z tie              tie
    b4 q2 z-x tie (bothbad)    tie
    b5 q3 y-z model_a          y wins
    b6 q4 z-y model_b          y wins
    b7 q4 x-y model_b          y wins

    x  5 battles: win 2 (b1 b2), tie 2 (b3 b4), loss 1 (b7): (2 + 2/2) / 5 = 0.6
    y  5 battles: win 3 (b5 b6 b7), loss 2 (b1 b2): 0.6
    z  4 battles: tie 2 (b3 b4), loss 2 (b5 b6): (0 + 2/2) / 4 = 0.25
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replicate.pairwise.arena import Battle
from replicate.pairwise.human import Verdict, human_agreement
from replicate.pairwise.tally import PairwiseError
from tests.pairwise.test_pairwise import _run, _write

BATTLES = [("q1", "x", "y", "model_a"), ("q1", "y", "x", "model_b"), ("q2", "x", "z", "tie"),
           ("q2", "z", "x", "tie (bothbad)"), ("q3", "y", "z", "model_a"), ("q4", "z", "y", "model_b"),
           ("q4", "x", "y", "model_b")]
WANT = {"x": (5, 2, 2, 1, 0.6), "y": (5, 3, 0, 2, 0.6), "z": (4, 0, 2, 2, 0.25)}


def battle_rows(battles=BATTLES, *, question: bool = True) -> list[dict]:
    """Records laid out as clean_battle_data.py writes them."""
    rows = []
    for i, (q, a, b, w) in enumerate(battles):
        row = {"model_a": a, "model_b": b, "winner": w, "judge": f"arena_user_{i}", "conversation_a": None,
               "conversation_b": None, "turn": 1, "anony": True, "language": "English", "tstamp": 1.69e9 + i}
        rows.append({"question_id": q, **row} if question else row)
    return rows


def _counts(out: str) -> dict:
    return {m["model"]: (m["win_rate_ties_half"]["n"], *(m[f]["count"] for f in ("win", "tie", "loss")),
                         m["win_rate_ties_half"]["share"]) for m in json.loads(out)["models"]}


def _tally(path: Path, *args) -> dict:
    r = _run("pairwise", path, "-f", "json", "--replicates", "0", *args)
    assert r.exit_code == 0, r.output
    assert "arena-battles@1 (chosen by content" in r.output
    return _counts(r.stdout)


def test_battles_json_jsonl_parquet_hand_counted(tmp_path):
    rows = battle_rows()
    array = tmp_path / "clean_battle_20230905.json"
    array.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    assert _tally(array) == WANT
    assert _tally(_write(tmp_path / "battles.jsonl", rows)) == WANT
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=3)
    assert _tally(path) == WANT


def test_ties_both_kinds_count_half_and_the_text_says_so(tmp_path):
    path = _write(tmp_path / "battles.jsonl", battle_rows([("q1", "x", "y", "tie (bothbad)"), ("q2", "x", "y", "tie")]))
    assert _tally(path) == {"x": (2, 0, 2, 0, 0.5), "y": (2, 0, 2, 0, 0.5)}
    text = _run("pairwise", path, "--replicates", "0").stdout
    assert "'tie (bothbad)' counted as a tie" in text


def test_intervals_cluster_by_question_or_battle(tmp_path):
    many = [(f"q{i // 2}", "x", "y", ("model_a", "model_b", "tie")[i % 3]) for i in range(30)]
    by_q = _run("pairwise", _write(tmp_path / "q.jsonl", battle_rows(many)), "-f", "json", "--replicates", "200")
    iv = json.loads(by_q.stdout)["models"][0]["win_rate_ties_half"]["interval"]
    assert iv["cluster"] == "question_id" and iv["clusters"] == 15 and iv["low"] < iv["high"]
    no_q = _run("pairwise", _write(tmp_path / "n.jsonl", battle_rows(many, question=False)), "-f", "json",
                "--replicates", "200")
    iv = json.loads(no_q.stdout)["models"][0]["win_rate_ties_half"]["interval"]
    assert iv["cluster"] == "battle" and iv["clusters"] == 30


@pytest.mark.parametrize("bad, message", [
    ({"winner": "model_c"}, "winner 'model_c' is none of"),
    ({"winner": None}, "battle lacks 'winner'"),
    ({"model_b": None}, "battle lacks 'model_b'"),
    ({"model_a": 7}, "'model_a' must be a model's name"),
    ({"model_b": "x"}, "model_a and model_b are both 'x'"),
    ({"question_id": 1.5}, "'question_id' must be a string or an integer"),
])
def test_malformed_battles_name_file_and_line(tmp_path, bad, message):
    rows = battle_rows()
    rows[2] = {k: v for k, v in {**rows[2], **bad}.items() if not (v is None and k in ("model_b",))}
    path = _write(tmp_path / "battles.jsonl", rows)
    r = _run("pairwise", path, "--replicates", "0")
    assert r.exit_code == 2 and f"battles.jsonl:3: {message}" in r.output, r.output
    array = tmp_path / "battles.json"
    array.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    r = _run("pairwise", array, "--replicates", "0")
    starts = [i + 1 for i, line in enumerate(array.read_text(encoding="utf-8").splitlines()) if line == " {"]
    assert r.exit_code == 2 and f"battles.json:{starts[2]}: {message}" in r.output, r.output


def test_malformed_parquet_row_named(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = battle_rows()
    rows[4]["winner"] = "left"
    path = tmp_path / "battles.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2)
    r = _run("pairwise", path, "--replicates", "0")
    assert r.exit_code == 2 and "battles.parquet:5: winner 'left' is none of" in r.output, r.output


# judge against humans ------------------------------------------------------------------------
#   judge (verdict for models[0])    battles                               paired (judge, human), sorted order
#   v1 q1 (x, y) x wins              h1 q1 x-y model_a  (x wins)           (1, 1)   agree
#                                    h2 q1 y-x model_a  (y wins)           (1, 0)   disagree; battle flipped
#   v2 q2 (z, x) z wins              h3 q2 x-z model_b  (z wins)           (0, 0)   agree; verdict flipped
#   v3 q3 (x, y) tie                 h4 q3 x-y tie (bothbad)               (.5, .5) agree
#                                    h5 q3 x-y model_a                     (.5, 1)  disagree
#   v4 q4 (x, y) none (dropped)      h6 q4 x-y model_a                     judge dropped
#   v5 q5 (x, y) x wins              -                                     no battle
#   -                                h7 q6 x-y model_a                     no judgment
VERDICTS = [Verdict("q1", ("x", "y"), None, 1.0), Verdict("q2", ("z", "x"), None, 1.0),
            Verdict("q3", ("x", "y"), None, 0.5), Verdict("q4", ("x", "y"), None, None),
            Verdict("q5", ("x", "y"), None, 1.0)]
HUMANS = [Battle("q1", "x", "y", "1", "model_a"), Battle("q1", "y", "x", "1", "model_a"),
          Battle("q2", "x", "z", "1", "model_b"), Battle("q3", "x", "y", "1", "tie (bothbad)"),
          Battle("q3", "x", "y", "1", "model_a"), Battle("q4", "x", "y", "1", "model_a"),
          Battle("q6", "x", "y", "1", "model_a")]


def test_agreement_hand_counted_and_kappa_as_sklearn():
    from sklearn.metrics import cohen_kappa_score

    got = human_agreement(VERDICTS, HUMANS)
    assert (got.with_ties.n, got.with_ties.agree, got.without_ties.n, got.without_ties.agree) == (5, 3, 3, 2)
    assert (got.battles, got.paired_battles, got.judged_pairs) == (7, 5, 3)
    assert (got.no_judgment, got.judge_dropped, got.no_battle, got.flipped) == (1, 1, 1, 2)
    judge, human = ["a", "a", "b", "tie", "tie"], ["a", "b", "b", "tie", "a"]  # sorted-order winners
    assert got.with_ties.kappa == pytest.approx(cohen_kappa_score(judge, human))
    assert got.without_ties.kappa == pytest.approx(cohen_kappa_score(judge[:3], human[:3]))


def test_a_verdict_given_in_the_other_order_is_flipped():
    swapped = [Verdict(v.question, v.models[::-1], v.turn, None if v.value is None else 1.0 - v.value)
               for v in VERDICTS]
    got, back = human_agreement(VERDICTS, HUMANS), human_agreement(swapped, HUMANS)
    assert (back.with_ties, back.without_ties) == (got.with_ties, got.without_ties)
    assert back.flipped == 5 - got.flipped  # every pairing's order relation reversed
    unflipped = [Verdict(v.question, v.models[::-1], v.turn, v.value) for v in VERDICTS]  # the same winner by position
    assert human_agreement(unflipped, HUMANS).with_ties.agree == 2  # h2 (y wins) and the tie of q3 agree, not h1, h3


def test_two_verdicts_on_one_pair_refused():
    with pytest.raises(PairwiseError, match="q1, x vs y two verdicts"):
        human_agreement([VERDICTS[0], Verdict("q1", ("y", "x"), None, 0.0)], HUMANS)


# the CLI: MT-Bench pairs (FastChat's rule, by turn) against MT-Bench's human judgments ------------
#   r1 81 alpaca-13b/gpt-4 t1  g1 [[B]] g2 [[A]]: gpt-4 wins      h1 81 gpt-4/alpaca-13b t1 model_a: agree (flipped)
#                                                                 h2 81 alpaca-13b/gpt-4 t1 model_b: agree
#   r2 81 alpaca-13b/gpt-4 t2  g1 [[A]] g2 [[A]]: inconsistent, tie  h3 81 t2 tie: agree
#   r3 82 gpt-4/alpaca-13b t1  g1 [[A]] g2 [[B]]: gpt-4 wins      h4 82 alpaca-13b/gpt-4 t1 model_a: disagree, flipped
#                                                                 h5 82 t2 model_b: no judgment (no turn 2)
def test_cli_mtbench_pairs_against_human_judgments(tmp_path):
    judge = [(81, "alpaca-13b", "gpt-4", 1, "[[B]]", "[[A]]"), (81, "alpaca-13b", "gpt-4", 2, "[[A]]", "[[A]]"),
             (82, "gpt-4", "alpaca-13b", 1, "[[A]]", "[[B]]")]
    pairs = _write(tmp_path / "gpt-4_pair.jsonl", [
        {"question_id": q, "model_1": m1, "model_2": m2, "g1_winner": "x", "g2_winner": "x", "judge": ["gpt-4", "pair-v2"],
         "g1_user_prompt": "...", "g1_judgment": "So " + g1, "g2_user_prompt": "...", "g2_judgment": "So " + g2,
         "turn": t, "tstamp": 1.0} for q, m1, m2, t, g1, g2 in judge])
    votes = [(81, "gpt-4", "alpaca-13b", 1, "model_a", "expert_0"), (81, "alpaca-13b", "gpt-4", 1, "model_b", "expert_1"),
             (81, "alpaca-13b", "gpt-4", 2, "tie", "expert_0"), (82, "alpaca-13b", "gpt-4", 1, "model_a", "expert_0"),
             (82, "alpaca-13b", "gpt-4", 2, "model_b", "expert_0")]
    human = _write(tmp_path / "human.jsonl", [
        {"question_id": q, "model_a": a, "model_b": b, "winner": w, "judge": j,
         "conversation_a": [{"role": "user", "content": "..."}], "conversation_b": [], "turn": t}
        for q, a, b, t, w, j in votes])
    r = _run("pairwise", pairs, "--human", human, "-f", "json")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["with_ties"]["pairs"] == 4 and body["with_ties"]["agree"] == 3
    assert body["without_ties"]["pairs"] == 3 and body["without_ties"]["agree"] == 2
    assert [(t["turn"], t["with_ties"]["pairs"], t["with_ties"]["agree"]) for t in body["by_turn"]] == [
        ("1", 3, 2), ("2", 1, 1)]
    assert (body["battles_without_judgment"], body["flipped"], body["turns_matched"]) == (1, 2, True)
    text = _run("pairwise", pairs, "--human", human).stdout
    assert "4 of 5 battles paired with 3 judge verdicts" in text and "turn 2" in text
    wrong = _run("pairwise", pairs, "--human", pairs)
    assert wrong.exit_code == 2 and "--human takes battle logs" in wrong.output


def test_cli_judge_in_battle_layout(tmp_path):
    """MT-Bench's gpt4_pair votes share the human layout: each battle is the judge's verdict."""
    judge = _write(tmp_path / "gpt4_pair.jsonl", battle_rows([("q1", "y", "x", "model_b"), ("q2", "x", "z", "tie")]))
    human = _write(tmp_path / "human.jsonl", battle_rows(BATTLES[:4]))
    r = _run("pairwise", judge, "--human", human, "-f", "json")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert (body["with_ties"]["pairs"], body["with_ties"]["agree"], body["flipped"]) == (4, 4, 2)
    assert np.isclose(body["with_ties"]["cohen_kappa"], 1.0)


def test_cli_arena_hard_judge_against_battles_with_its_baseline_named(tmp_path):
    """tests/pairwise/test_pairwise.py's v0.1 file: per question the mean of m's battles against the baseline is
    q1 1 (win), q2 0 (loss), q3 (0.5 + 3) / 4 (win), q4 0 (loss, game 2 only), q5 (3 + 0.5) / 4 (win)."""
    from tests.pairwise.test_pairwise import arena_hard

    judge = arena_hard(tmp_path, "v0.1")
    human = _write(tmp_path / "battles.jsonl", battle_rows([
        ("q1", "m", "gpt-4-0314", "model_a"), ("q2", "gpt-4-0314", "m", "model_a"), ("q3", "m", "gpt-4-0314", "tie"),
        ("q5", "gpt-4-0314", "m", "model_b")]))
    r = _run("pairwise", judge, "--human", human, "--baseline", "gpt-4-0314", "-f", "json")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert (body["with_ties"]["pairs"], body["with_ties"]["agree"]) == (4, 3)
    assert (body["without_ties"]["pairs"], body["without_ties"]["agree"]) == (3, 3)
    assert (body["judge_verdicts_without_battle"], body["turns_matched"]) == (1, False)
    unnamed = json.loads(_run("pairwise", judge, "--human", human, "-f", "json").stdout)
    assert unnamed["battles_without_judgment"] == 4 and unnamed["with_ties"]["pairs"] == 0


def test_agreement_intervals_resample_questions(tmp_path):
    rng = np.random.default_rng(3)
    winners = ("model_a", "model_b", "tie")
    judge_rows, human_rows = [], []
    for q in range(40):
        w = winners[rng.integers(3)]
        judge_rows.append((f"q{q}", "x", "y", w))
        for _ in range(2):  # two voters, agreeing with the judge two times in three
            human_rows.append((f"q{q}", "y", "x", {"model_a": "model_b", "model_b": "model_a"}.get(w, w)
                               if rng.random() < 2 / 3 else winners[rng.integers(3)]))
    judge = _write(tmp_path / "judge.jsonl", battle_rows(judge_rows))
    human = _write(tmp_path / "human.jsonl", battle_rows(human_rows))
    body = json.loads(_run("pairwise", judge, "--human", human, "-f", "json", "--replicates", "200").stdout)
    for part in ("with_ties", "without_ties"):
        fig = body[part]
        rate, kappa = fig["rate_interval"], fig["cohen_kappa_interval"]
        assert rate["cluster"] == kappa["cluster"] == "question_id" and rate["clusters"] <= 40
        assert rate["low"] <= fig["rate"] <= rate["high"] and kappa["low"] <= fig["cohen_kappa"] <= kappa["high"]
    assert body["with_ties"]["rate_interval"]["clusters"] == 40 and body["with_ties"]["pairs"] == 80
    items = json.loads(_run("pairwise", judge, "--human", human, "-f", "json", "--replicates", "200",
                            "--cluster", "item").stdout)["with_ties"]
    assert items["rate_interval"]["cluster"] is None and items["rate_interval"]["clusters"] == 80
    none = json.loads(_run("pairwise", judge, "--human", human, "-f", "json", "--replicates", "0").stdout)
    assert none["with_ties"]["rate_interval"] is None and none["with_ties"]["rate"] == body["with_ties"]["rate"]
    text = _run("pairwise", judge, "--human", human, "--replicates", "200").stdout
    assert "Intervals: 95% bootstrap" in text and "40 question_id clusters resampled whole" in text
