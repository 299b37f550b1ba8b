"""fastchat-pair@1 records judged in FastChat's two-score format, read by mtbench-pair-scores@1.

Our own files (tmp_path) in the shape play_a_match_pair writes, for two judges over two
(question, pair, turn) matches, each line two games; gold is human verdicts keyed in the order
shown. Hand count, game by game (human / judge old / judge new, as mtbench-pair-scores@1 reads):

    81 g1  A   / [[8, 7]] A ok          / [[9,7]] A ok
    81 g2  B   / [[7, 8.05]] B ok       / [[8.1, 8]] tie wrong   (8.1 - 8 <= 0.1)
    82 g1  tie / [[1.1, 1]] A wrong     / [[6, 6]] tie ok        (1.1 - 1 > 0.1 in floats)
    82 g2  tie / [[07, 7]] unparsed     / [[5,  5]] unparsed     (leading zero; two spaces)

Over the 3 items parsed on both sides: both 1, only_old 1 (81g2), only_new 1 (82g1), neither 0;
labels differ on 2.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from replicate.cli.app import app


def _line(qid, g1, g2, judge):
    return {"question_id": qid, "model_1": "gpt-3.5-turbo", "model_2": "vicuna-13b-v1.3", "g1_winner": "error",
            "g2_winner": "error", "judge": [judge, "pair-scores"], "g1_user_prompt": "[User Question]\nq",
            "g1_judgment": g1, "g2_user_prompt": "[User Question]\nq", "g2_judgment": g2, "turn": 1,
            "tstamp": 1687000000.0}


def _write(path, *objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def test_two_judges_in_the_two_score_format_against_human_verdicts(tmp_path):
    old = _write(tmp_path / "gpt-4_pair.jsonl", _line(81, "A is better. [[8, 7]]", "[[7, 8.05]]", "gpt-4"),
                 _line(82, "Close, but [[1.1, 1]]", "[[07, 7]]", "gpt-4"))
    new = _write(tmp_path / "claude-v1_pair.jsonl", _line(81, "[[9,7]]", "[[8.1, 8]]", "claude-v1"),
                 _line(82, "[[6, 6]]", "[[5,  5]]", "claude-v1"))
    gold = _write(tmp_path / "human.jsonl", *(
        {"question_id": q, "model_a": a, "model_b": b, "turn": 1, "winner": w}
        for q, a, b, w in [(81, "gpt-3.5-turbo", "vicuna-13b-v1.3", "A"), (81, "vicuna-13b-v1.3", "gpt-3.5-turbo", "B"),
                           (82, "gpt-3.5-turbo", "vicuna-13b-v1.3", "tie"),
                           (82, "vicuna-13b-v1.3", "gpt-3.5-turbo", "tie")]))
    res = CliRunner().invoke(app, [str(a) for a in (
        "compare", old, new, "-p", "mtbench-pair-scores@1", "--gold", gold, "--key-field", "question_id",
        "--key-field", "model_a", "--key-field", "model_b", "--key-field", "turn", "--gold-field", "winner",
        "--replicates", "0", "-f", "json")])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["reader"] == "fastchat-pair@1" and out["parser"] == "mtbench-pair-scores@1"
    assert out["cells"] == {"both": 1, "only_old": 1, "only_new": 1, "neither": 0}
    assert out["n"] == 3 and out["changed"] == 2 and out["unparsed"] == {"old": 1, "new": 1}
