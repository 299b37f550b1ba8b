"""AlpacaEval annotations: the reader, the preference parser and the win rate AlpacaEval prints.

Hand count for the file written below (model m, baseline b; preference 1 = b's output, 2 = m's):

    preferences 2, 1, 1.5, 0 (old draw: 1.5), 1.73, 1.2, null (dropped), 2.0
    win_rate = mean(p - 1) over the 7 = (1 + 0 + .5 + .5 + .73 + .2 + 1) / 7 = 3.93 / 7
    wins (p > 1.5) 3, losses (p < 1.5) 2, draws 2; discrete_win_rate = (3 + 2/2) / 7 = 4/7
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app

PREFS = [2, 1, 1.5, 0, 1.73, 1.2, None, 2.0]


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def annotations(path: Path, prefs, model="m", baseline="b") -> Path:
    rows = [{"dataset": "helpful_base", "instruction": f"Instruction {i}?", "output_1": "base answer",
             "generator_1": baseline, "output_2": "model answer", "generator_2": model,
             "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": p, "raw_completion": "m",
             "price_per_example": 0.01, "time_per_example": 1.0} for i, p in enumerate(prefs)]
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")  # AlpacaEval writes an indented array
    return path


def alpacaeval_describe(prefs) -> tuple[float, float, int, int, int]:
    """AlpacaEval's metrics/helpers.py, transcribed: (win_rate, discrete_win_rate, n_wins, n_wins_base, n_total)."""
    def valid(x):
        return x is not None and not math.isnan(x) and 1 <= x <= 2

    absolute = [1.5 if p == 0 else p for p in prefs if p is not None]
    absolute = [p - 1 for p in absolute if valid(p)]
    discrete = [None if p is None else (0 if p == 1.5 else round(p)) for p in prefs]
    discrete = [1.5 if p == 0 else p for p in discrete]
    discrete = [p - 1 for p in discrete if valid(p)]
    return (sum(absolute) / len(absolute), sum(discrete) / len(discrete), sum(p > 0.5 for p in absolute),
            sum(p < 0.5 for p in absolute), len(absolute))


def test_win_rate_hand_counted_and_as_alpacaeval_computes_it(tmp_path):
    path = annotations(tmp_path / "annotations.json", PREFS)
    r = _run("pairwise", path, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["rule"] == "alpacaeval" and body["parser"] == "alpacaeval-preference@1" and body["departure"] is None
    (m,) = body["models"]
    assert m["model"] == "m" and m["opponents"] == ["b"] and (m["records"], m["dropped"]) == (8, 1)
    assert (m["win"]["count"], m["tie"]["count"], m["loss"]["count"]) == (3, 2, 2)
    assert m["win_rate_ties_half"]["share"] == pytest.approx(3.93 / 7) and m["discrete_win_rate"] == pytest.approx(4 / 7)
    win_rate, discrete, wins, base_wins, total = alpacaeval_describe(PREFS)
    assert (m["win_rate_ties_half"]["share"], m["discrete_win_rate"]) == (pytest.approx(win_rate), pytest.approx(discrete))
    assert (m["win"]["count"], m["loss"]["count"], m["win_rate_ties_half"]["n"]) == (wins, base_wins, total)


def test_table_and_the_parse_of_the_file(tmp_path):
    path = annotations(tmp_path / "annotations.json", PREFS)
    r = _run("pairwise", path, "--cluster", "item", "--replicates", "200")
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("m "))
    assert "56.1% [" in line and line.rstrip().endswith("57.1%") and "no position figure" in r.stdout
    parsed = _run("parse", path, "-f", "json", "--replicates", "0")  # the reader's parser is suggested, named here
    assert parsed.exit_code == 2 and "--parser alpacaeval-preference@1" in parsed.output
    s = json.loads(_run("parse", path, "-p", "alpacaeval-preference@1", "-f", "json", "--replicates", "0").stdout)["runs"][0]
    assert (s["records"], s["unparsed"], s["labels"]) == (8, 1, {"1": 2, "1.5": 2, "2": 3})


def test_bad_annotations_are_refused_naming_file_and_line(tmp_path):
    path = annotations(tmp_path / "a.json", [2, "x"])
    r = _run("pairwise", path)
    assert r.exit_code == 2 and "a.json:" in r.output and "'preference' must be a number or null, got" in r.output
    cut = tmp_path / "cut.json"
    cut.write_text(annotations(tmp_path / "b.json", [2, 1]).read_text()[:-3], encoding="utf-8")
    r = _run("pairwise", cut, "--reader", "alpacaeval-annotations@1")
    assert r.exit_code == 2 and "cut.json" in r.output and "annotation" in r.output


def test_an_instruction_beyond_64_bits_is_refused_naming_it(tmp_path):
    # orjson cannot write an integer beyond 64 bits, which the message naming the bad value used to ask it to
    path = annotations(tmp_path / "a.json", [2, 1])
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows[1]["instruction"] = 10**30
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    r = _run("pairwise", path)
    assert r.exit_code == 2, r.output
    assert "a.json:" in r.output and "a JSON int (1000000000000000000000000000000)" in r.output


def test_another_parser_is_a_departure_or_refused(tmp_path):
    path = annotations(tmp_path / "annotations.json", [2, 1, 1.5])
    r = _run("pairwise", path, "-p", "number@1", "-f", "json", "--replicates", "0")  # whole numbers only: 1.5 dropped
    body = json.loads(r.stdout)
    assert "number@1, not the harness's own reading (alpacaeval-preference@1)" in body["departure"]
    assert body["models"][0]["win_rate_ties_half"]["share"] == 0.5 and body["models"][0]["dropped"] == 1
    zero = annotations(tmp_path / "zero.json", [2, 0])  # number@1 reads 0 as 0, no preference at all
    r = _run("pairwise", zero, "-p", "number@1")
    assert r.exit_code == 2 and "read AlpacaEval's preferences with alpacaeval-preference@1" in r.output


# a second annotator's annotations of the same outputs (replicate pairwise A --human B) -----------------------
#   instruction  judge A  judge B  (m against b; 1 b's output preferred, 2 m's)
#   0            2        2        agree (m wins)
#   1            1        2        disagree
#   2            1.5      1.5      agree (tie)
#   3            1.8      1        disagree (A's fraction above 1.5: m wins)
#   4            null     2        A gave no verdict: counted, not paired
#   5            1.2      1.3      agree (b wins)
#   6            2        null     B gave no preference: counted; A's verdict has no annotation
#   7            -        1        B only: no judge verdict
def test_agreement_with_a_second_annotator_hand_counted(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    a = annotations(tmp_path / "a.json", [2, 1, 1.5, 1.8, None, 1.2, 2])
    b = annotations(tmp_path / "b.json", [2, 2, 1.5, 1, 2, 1.3, None, 1])
    r = _run("pairwise", a, "--human", b, "-f", "json", "--replicates", "200")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert (body["with_ties"]["pairs"], body["with_ties"]["agree"]) == (5, 3)
    assert (body["without_ties"]["pairs"], body["without_ties"]["agree"]) == (4, 2)
    judge, other = ["m", "b", "tie", "m", "b"], ["m", "m", "tie", "b", "b"]
    assert body["with_ties"]["cohen_kappa"] == pytest.approx(cohen_kappa_score(judge, other))
    keep = [i for i in range(5) if "tie" not in (judge[i], other[i])]
    assert body["without_ties"]["cohen_kappa"] == pytest.approx(
        cohen_kappa_score([judge[i] for i in keep], [other[i] for i in keep]))
    assert (body["battles"], body["battles_without_judgment"], body["battles_judge_dropped"],
            body["judge_verdicts_without_battle"], body["human_without_verdict"], body["flipped"]) == (7, 1, 1, 1, 1, 0)
    assert body["question"] == "instruction" and body["with_ties"]["rate_interval"]["cluster"] == "instruction"
    text = _run("pairwise", a, "--human", b, "--replicates", "0").stdout
    assert "Judge against a second annotator on the same instruction and model pair" in text
    assert "5 of 7 annotations paired with 5 judge verdicts" in text
    assert "1 annotations of the second annotator without a preference" in text


def test_second_annotator_refused_against_other_layouts(tmp_path):
    a = annotations(tmp_path / "a.json", [2, 1])
    battles = tmp_path / "battles.json"
    battles.write_text(json.dumps([{"question_id": "q", "model_a": "m", "model_b": "b", "winner": "model_a"}]))
    r = _run("pairwise", battles, "--human", a)
    assert r.exit_code == 2 and "another annotator's AlpacaEval annotations" in r.output
    r = _run("pairwise", a, "--human", a, "--length-controlled", a)
    assert r.exit_code == 2 and "--length-controlled is for AlpacaEval annotations" in r.output
