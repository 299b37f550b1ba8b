"""replicate mtbench: MT-Bench's score as FastChat's show_result.py computes it.

Hand count for the file written below (FastChat's rating of each judgment: first [[N]], else first [N],
-1 when none):

    m1  q81 t1 [[8]] 8      q81 t2 [[8.5]] 8.5     q82 t1 [[0]] 0     q82 t2 no rating (-1)
        q83 t1 [7] 7        q83 t2 [[10]] 10
    m2  q81 t1 [[5]] 5      q81 t2 [[6]] 6         q82 t1 [[4]] 4

show_result: m1 turn 1 (8 + 0 + 7) / 3 = 5.0, turn 2 (8.5 + 10) / 2 = 9.25, average over its 5 rated rows
33.5 / 5 = 6.7 (not the mean of the two turn means, 7.125); m2 turn 1 4.5, turn 2 6.0, average 15 / 3 = 5.0.
Read with the stricter mtbench-single@1 (whole 1-10 only) m1 loses 8.5 and 0: turn 1 7.5, turn 2 10, average 25 / 3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app

REAL = Path(__file__).resolve().parents[1] / "readers" / "data" / "fastchat" / "real" / "gpt-4_single.jsonl"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def single(qid, model, turn, judgment, score=-1):
    return {"question_id": qid, "model": model, "judge": ["gpt-4", "single-v1"], "user_prompt": "...",
            "judgment": judgment, "score": score, "turn": turn, "tstamp": 1.0}


@pytest.fixture
def judgments(tmp_path):
    rows = [
        single(81, "m1", 1, "Good. Rating: [[8]]"), single(81, "m1", 2, "Rating: [[8.5]]"),
        single(82, "m1", 1, "Off topic. Rating: [[0]]"), single(82, "m1", 2, "I cannot rate this."),
        single(83, "m1", 1, "Rating: [7]"), single(83, "m1", 2, "[[10]]"),
        single(81, "m2", 1, "[[5]]"), single(81, "m2", 2, "[[6]]"), single(82, "m2", 1, "[[4]]"),
    ]
    path = tmp_path / "gpt-4_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _means(out: str) -> dict:
    return {m["model"]: (m["judgments"], m["unrated"], *(m[f]["mean"] for f in ("overall", "turn_1", "turn_2")),
                         *(m[f]["n"] for f in ("overall", "turn_1", "turn_2")))
            for m in json.loads(out)["models"]}


def test_fastchat_reading_by_default_hand_counted(judgments):
    r = _run("mtbench", judgments, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    got = _means(r.stdout)
    assert got["m1"] == (6, 1, pytest.approx(6.7), 5.0, 9.25, 5, 3, 2)
    assert got["m2"] == (3, 0, 5.0, 4.5, 6.0, 3, 2, 1)
    body = json.loads(r.stdout)
    assert body["parser"] == "mtbench-single@2" and body["departure"] is None
    assert [m["model"] for m in body["models"]] == ["m1", "m2"]  # highest average first, as show_result sorts


def test_the_stricter_reading_is_a_departure_said_in_every_format(judgments):
    r = _run("mtbench", judgments, "-p", "mtbench-single@1", "-f", "json", "--replicates", "0")
    got = _means(r.stdout)
    assert got["m1"] == (6, 3, pytest.approx(25 / 3), 7.5, 10.0, 3, 2, 1)
    assert "mtbench-single@1, not FastChat's own reading" in json.loads(r.stdout)["departure"]
    for fmt in ("table", "markdown"):
        text = _run("mtbench", judgments, "-p", "mtbench-single@1", "-f", fmt, "--replicates", "0").stdout
        assert "Departure from FastChat's rule: read with mtbench-single@1" in text


def test_table_shows_each_mean_with_its_count_and_interval(judgments):
    r = _run("mtbench", judgments, "--cluster", "item", "--replicates", "200")
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("m1 "))
    assert "6.700 (5) [" in line and "5.000 (3) [" in line and "9.250 (2)" in line
    assert "Intervals: 95% bootstrap (percentile, within the values' range): 9 items resampled one by one" in r.stdout


def _fastchat_show_result(path: Path) -> dict:
    """show_result.py --mode single, transcribed: the recorded scores, -1 dropped, means by model and turn."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["score"] != -1]
    out = {}
    for model in {r["model"] for r in rows}:
        mine = [r for r in rows if r["model"] == model]
        t1 = [r["score"] for r in mine if r["turn"] == 1]
        out[model] = (sum(r["score"] for r in mine) / len(mine), sum(t1) / len(t1) if t1 else None)
    return out


def test_the_real_excerpt_reads_to_fastchats_own_mean():
    """The committed excerpt of a real FastChat file: the mean of the judge's texts read by mtbench-single@2 equals
    show_result's mean of the scores FastChat recorded (149.5 / 20 = 7.475, the 8.5 of question 97 included)."""
    r = _run("mtbench", REAL, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    (model,) = json.loads(r.stdout)["models"]
    want = _fastchat_show_result(REAL)[model["model"]]
    assert model["overall"]["mean"] == pytest.approx(want[0], abs=1e-12) == pytest.approx(149.5 / 20)
    assert model["turn_1"]["mean"] == pytest.approx(want[1], abs=1e-12)
    assert model["overall"]["n"] == 20 and model["unrated"] == 0 and model["turn_2"]["n"] == 0
    strict = json.loads(_run("mtbench", REAL, "-p", "mtbench-single@1", "-f", "json", "--replicates", "0").stdout)
    assert strict["models"][0]["overall"]["mean"] == pytest.approx(141 / 19)


def test_files_that_are_not_single_answer_judgments_are_refused(tmp_path):
    pair = Path(__file__).resolve().parents[1] / "readers" / "data" / "fastchat" / "gpt-4_pair.jsonl"
    r = _run("mtbench", pair, "-p", "mtbench-pair@1")
    assert r.exit_code == 2 and "need judgments keyed question_id, model, turn (fastchat-single@1)" in r.output


def test_a_judgment_in_two_files_is_an_error(judgments, tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(judgments.read_bytes())
    r = _run("mtbench", judgments, copy)
    assert r.exit_code == 2
    # before: 'a judgment (question_id, model, turn) is in more than one FILE', naming neither file nor judgment
    first = r.stderr.splitlines()[-1]
    assert first.startswith("Error: the judgment (question_id, model, turn) ") and "is in two files" in first
    assert f"({judgments}:1 and {copy}:1); give each once" in first
