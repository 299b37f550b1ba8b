"""arena-hard-judgment@1 and arena-hard-score@1: Arena-Hard-Auto's model_judgment/<judge>/<model>.jsonl files.

Every file here is written by the tests, in the shape Arena-Hard-Auto's gen_judgment.py writes
(v0.1: question_id, model, judge, games of {user_prompt, judgment, score}; v2.0: uid, category,
judge, model, baseline, games of {score, judgment: {answer}, prompt}). Hand count for the
two-judge comparison (game by game: reference judge's recorded score / judge x / judge y, as
arena-hard@1 reads x and y):

    q1 g1  A>B  / A>B ok           / A>B ok          q1 g2  B>A / B>A ok  / A>B wrong
    q2 g1  A=B  / A=B ok           / B>A wrong       q2 g2  A=B / unparsed ([[A>>B]] then [[A>B]]) / A=B ok
    q3 g1  none (score null: no gold, left out)      q3 g2  B>>A / B>>A ok / B>>A ok

Gold items 5 (q3 g1 unparsed in the gold file, warned). Over the items with gold, parsed on both
sides (q2 g2 dropped: unparsed on x): n 4, both 2 (q1g1, q3g2), only_old 2 (q1g2, q2g1), only_new 0,
neither 0; labels differ on 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.judge.model import KEY_SEP
from replicate.parsing import PARSERS
from replicate.reading.contract import READERS


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def v01(qid, g1, g2, model="gpt-4-0613", judge="gpt-4-1106-preview"):
    """One v0.1 line: games are (judgment text, recorded score) pairs."""
    games = [{"user_prompt": f"<|User Prompt|>\nquestion {qid}", "judgment": j, "score": s} for j, s in (g1, g2)]
    return {"question_id": qid, "model": model, "judge": judge, "games": games}


def v20(uid, g1, g2, model="o3-mini", judge="gpt-4.1"):
    """One v2.0 line: a game is (answer text, score), or None for a failed call."""
    games = [None if g is None else {"score": g[1], "judgment": {"answer": g[0]}, "prompt": [{"role": "user"}]}
             for g in (g1, g2)]
    return {"uid": uid, "category": "hard_prompt", "judge": judge, "model": model, "baseline": "o3-mini-2025-01-31",
            "games": games}


def write(path: Path, *objs) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


@pytest.fixture
def judges(tmp_path):
    x = write(tmp_path / "x.jsonl",
              v01("q1", ("...\nMy final verdict is: [[A>B]]", "A>B"), ("[[B>A]]", "B>A"), judge="x"),
              v01("q2", ("[[A=B]]", "A=B"), ("[[A>>B]]\nOn reflection: [[A>B]]", None), judge="x"),
              v01("q3", ("[[A>B]]", "A>B"), ("[[B>>A]]", "B>>A"), judge="x"))
    y = write(tmp_path / "y.jsonl",
              v01("q1", ("[[A>B]]", "A>B"), ("[[A>B]]", "A>B"), judge="y"),
              v01("q2", ("[[B>A]]", "B>A"), ("[[A=B]]", "A=B"), judge="y"),
              v01("q3", ("[[B>A]]", "B>A"), ("[[A<<B]]", "A<<B"), judge="y"))
    ref = write(tmp_path / "ref.jsonl",
                v01("q1", ("[[A>B]]", "A>B"), ("[[B>A]]", "B>A"), judge="ref"),
                v01("q2", ("[[A=B]]", "A=B"), ("[[B=A]]", "B=A"), judge="ref"),
                v01("q3", ("[[A>B]] or [[B>A]]", None), ("[[B>>A]]", "B>>A"), judge="ref"))
    return x, y, ref


def _labels(run, parser=None):
    labels = (run.label_with(parser) if parser else run).labels.tolist()
    show = (parser.label_set if parser else READERS.get("arena-hard-score@1").label_set).show
    return [(tuple(str(k).split(KEY_SEP)), None if c < 0 else show(c)) for k, c in zip(run.keys, labels)]


def test_two_judges_against_a_reference_judges_recorded_verdicts(judges):
    x, y, ref = judges
    res = _run("compare", x, y, "-p", "arena-hard@1", "--gold", ref, "--gold-reader", "arena-hard-score@1",
               "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["reader"] == "arena-hard-judgment@1" and out["parser"] == "arena-hard@1"
    assert out["cells"] == {"both": 2, "only_old": 2, "only_new": 0, "neither": 0}
    assert out["n"] == 4 and out["changed"] == 2 and out["unparsed"] == {"old": 1, "new": 0}
    assert out["gold"]["reader"] == "arena-hard-score@1" and out["gold"]["entries"] == 6
    assert [(r["with_gold"], r["without_gold"]) for r in out["gold"]["runs"]] == [(5, 1), (5, 1)]
    assert out["old"]["files"][0]["reader_options"] == {"layout": "v0.1", "judge": "x"}
    assert "reader: arena-hard-judgment@1 (chosen by content" in res.stderr
    assert "gold-unparsed" in res.stderr and "first: q3 / gpt-4-0613 / 1 at" in res.stderr


def test_games_are_keyed_by_question_model_and_game(judges):
    x, _, _ = judges
    run = load_run("x", [x], diagnostics=Diagnostics())
    assert _labels(run, PARSERS.get("arena-hard@1")) == [
        (("q1", "gpt-4-0613", "1"), "A>B"),  # game 1: the baseline shown as A
        (("q1", "gpt-4-0613", "2"), "B>A"),  # game 2: swapped, the model shown as A
        (("q2", "gpt-4-0613", "1"), "A=B"),
        (("q2", "gpt-4-0613", "2"), None),  # two different verdicts: arena-hard@1 reads none
        (("q3", "gpt-4-0613", "1"), "A>B"),
        (("q3", "gpt-4-0613", "2"), "B>>A"),
    ]
    assert READERS.get("arena-hard-judgment@1").key_names == ("question_id", "model", "game")


def test_recorded_scores_are_the_released_reading(judges):
    """arena-hard-score@1 reads each game's score; A<<B is B>>A's spelling and a null score is unparsed."""
    _, y, ref = judges
    assert _labels(load_run("ref", [ref], diagnostics=Diagnostics(), reader="arena-hard-score@1"))[4:] == [
        (("q3", "gpt-4-0613", "1"), None), (("q3", "gpt-4-0613", "2"), "B>>A")]
    res = _run("compare", y, y, "--reader", "arena-hard-score@1", "--gold", ref, "--gold-reader",
               "arena-hard-score@1", "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["parser"] == "arena-hard-score" and out["reader"] == "arena-hard-score@1"
    # y against ref over the 5 gold items: q1g1 ok, q1g2 wrong, q2g1 wrong, q2g2 ok, q3g2 ok (A<<B is B>>A)
    assert out["cells"] == {"both": 3, "only_old": 0, "only_new": 0, "neither": 2}


def test_reparsing_reproduces_the_recorded_v01_scores(judges):
    """A file's recorded score as gold for its own text: arena-hard@1 agrees on every game with a verdict."""
    x, _, _ = judges
    res = _run("compare", x, x, "-p", "arena-hard@1", "--gold", x, "--gold-reader", "arena-hard-score@1",
               "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n"] == 5 and out["em_old"] == 1.0


def test_v20_layout(tmp_path):
    """uid keys; the text is judgment.answer; a null game (failed call) is unparsed and warned."""
    f = write(tmp_path / "o3-mini.jsonl",
              v20("u1", ("[[B>A]] ... [[a>b]]", "A>B"), ("[[A>B]]", "A>B")),
              v20("u2", None, ("[B>A]", "B>A")))
    diag = Diagnostics()
    run = load_run("v2", [f], diagnostics=diag)
    assert run.files[0].reader == "arena-hard-judgment@1"
    assert _labels(run, PARSERS.get("arena-hard-last@1")) == [
        (("u1", "o3-mini", "1"), "A>B"), (("u1", "o3-mini", "2"), "A>B"),
        (("u2", "o3-mini", "1"), None), (("u2", "o3-mini", "2"), "B>A")]
    assert [w.code for w in diag.warnings] == ["null-output"] and diag.warnings[0].line == 2
    scores = load_run("v2", [f], diagnostics=Diagnostics(), reader="arena-hard-score@1")
    assert [label for _, label in _labels(scores)] == ["A>B", "A>B", None, "B>A"]


def test_a_first_line_longer_than_the_sniffed_head_is_recognised(tmp_path):
    long = "x" * 70_000
    f = write(tmp_path / "long.jsonl", v01("q1", (long + " [[A>B]]", "A>B"), ("[[B>A]]", "B>A")))
    run = load_run("r", [f], diagnostics=Diagnostics())
    assert run.files[0].reader == "arena-hard-judgment@1" and len(run) == 2


def test_score_not_a_verdict_is_unparsed_and_warned(tmp_path):
    f = write(tmp_path / "s.jsonl", v01("q1", ("[[A]]", "A"), ("[[B>A]]", "B>A")))
    diag = Diagnostics()
    run = load_run("r", [f], diagnostics=diag, reader="arena-hard-score@1")
    assert [label for _, label in _labels(run)] == [None, "B>A"]
    assert [w.code for w in diag.warnings] == ["score-not-a-verdict"]


BASE = v01("q1", ("[[A>B]]", "A>B"), ("[[B>A]]", "B>A"))


@pytest.mark.parametrize("reader", ["arena-hard-judgment@1", "arena-hard-score@1"])
@pytest.mark.parametrize("bad, message", [
    ({k: v for k, v in BASE.items() if k != "question_id"}, "record lacks 'question_id'"),
    ({**BASE, "model": None}, "'model' must be a string or an integer, got null"),
    ({k: v for k, v in BASE.items() if k != "games"}, "record lacks 'games'"),
    ({**BASE, "games": {"a": 1}}, "'games' must be a list of two games, got a JSON object"),
    ({**BASE, "games": BASE["games"][:1]}, "'games' holds 1 game(s); a pairwise judgment holds 2 "
                                          "(game 1 the baseline shown as A, game 2 the answers swapped)"),
    ({**BASE, "games": BASE["games"] * 2}, "'games' holds 4 game(s); a pairwise judgment holds 2 "
                                          "(game 1 the baseline shown as A, game 2 the answers swapped)"),
    ({**BASE, "games": [BASE["games"][0], "A>B"]}, "game 2 must be a JSON object, got a JSON str (\"A>B\")"),
])
def test_bad_records_are_named(tmp_path, reader, bad, message):
    path = write(tmp_path / "bad.jsonl", BASE, bad)
    with pytest.raises(BadInput) as exc:
        load_run("r", [path], diagnostics=Diagnostics(), reader=reader)
    assert str(exc.value) == f"{path}:2: {message}"


@pytest.mark.parametrize("game, message", [
    ({"user_prompt": "p", "score": "A>B"}, "game 1 lacks 'judgment' (the judge's text)"),
    ({"judgment": 7, "score": "A>B"}, "game 1's 'judgment' must be a string, got a JSON int (7)"),
    ({"judgment": {"thought": "..."}, "score": "A>B"}, "game 1's 'judgment' is an object without 'answer' (the judge's text)"),
    ({"judgment": {"answer": ["x"]}, "score": "A>B"}, "game 1's 'judgment.answer' must be a string, got a JSON array"),
])
def test_missing_or_bad_judgment_text_is_refused(tmp_path, game, message):
    path = write(tmp_path / "bad.jsonl", {**BASE, "games": [game, BASE["games"][1]]})
    with pytest.raises(BadInput) as exc:
        load_run("r", [path], diagnostics=Diagnostics(), reader="arena-hard-judgment@1")
    assert str(exc.value) == f"{path}:1: {message}"


def test_bad_scores_are_refused(tmp_path):
    for i, (game, message) in enumerate([
        ({"judgment": "[[A>B]]"}, "game 2 lacks 'score' (the verdict Arena-Hard recorded)"),
        ({"judgment": "[[A>B]]", "score": 3}, "game 2's 'score' must be a verdict string or null, got a JSON int (3)"),
    ]):
        path = write(tmp_path / f"bad{i}.jsonl", {**BASE, "games": [BASE["games"][0], game]})
        with pytest.raises(BadInput) as exc:
            load_run("r", [path], diagnostics=Diagnostics(), reader="arena-hard-score@1")
        assert str(exc.value) == f"{path}:1: {message}"


def test_torn_last_line_and_not_an_object(tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_text(json.dumps(BASE) + "\n" + json.dumps(BASE)[:40], encoding="utf-8")
    with pytest.raises(BadInput, match=r"torn.jsonl:2: "):
        load_run("r", [torn], diagnostics=Diagnostics(), reader="arena-hard-judgment@1")
    arr = tmp_path / "arr.jsonl"
    arr.write_text(json.dumps(BASE) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(BadInput) as exc:
        load_run("r", [arr], diagnostics=Diagnostics(), reader="arena-hard-judgment@1")
    assert str(exc.value) == f"{arr}:2: expected a JSON object, got a JSON array"


def test_a_later_record_of_the_other_layout_is_refused(tmp_path):
    path = write(tmp_path / "mixed.jsonl", BASE, v20("u1", ("[[A>B]]", "A>B"), ("[[B>A]]", "B>A")))
    with pytest.raises(BadInput) as exc:
        load_run("r", [path], diagnostics=Diagnostics(), reader="arena-hard-judgment@1")
    assert str(exc.value) == f"{path}:2: record lacks 'question_id'"


def test_duplicate_question_and_game(tmp_path):
    """The same (question, model, game) twice: identical is a counted warning, another judgment an error."""
    same = write(tmp_path / "same.jsonl", BASE, BASE)
    diag = Diagnostics()
    assert len(load_run("r", [same], diagnostics=diag)) == 2
    assert {w.code for w in diag.warnings} == {"duplicate-identical"}
    other = write(tmp_path / "other.jsonl", BASE, v01("q1", ("[[A>B]]", "A>B"), ("[[A=B]]", "A=B")))
    with pytest.raises(BadInput, match=r"other.jsonl:2.*other.jsonl:1|other.jsonl:1.*other.jsonl:2"):
        load_run("r", [other], diagnostics=Diagnostics())


def test_the_score_reader_is_never_chosen_by_content(tmp_path):
    f = write(tmp_path / "m.jsonl", BASE)
    assert load_run("r", [f], diagnostics=Diagnostics()).files[0].reader == "arena-hard-judgment@1"
    assert READERS.get("arena-hard-score@1").sniff(f.read_bytes(), None) == "no"  # type: ignore[arg-type]


def test_human_verdicts_as_gold_jsonl(judges, tmp_path):
    """A gold JSONL of verdict names keyed (question_id, model, game), read through arena-hard@1's label set."""
    x, y, _ = judges
    gold = write(tmp_path / "human.jsonl",
                 {"question_id": "q1", "model": "gpt-4-0613", "game": 1, "verdict": "A>B"},
                 {"question_id": "q1", "model": "gpt-4-0613", "game": 2, "verdict": "A>B"},
                 {"question_id": "q3", "model": "gpt-4-0613", "game": 1, "verdict": "B>A"})
    res = _run("compare", x, y, "-p", "arena-hard@1", "--gold", gold, "--key-field", "question_id",
               "--key-field", "model", "--key-field", "game", "--gold-field", "verdict", "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    # q1g1 both right; q1g2 x B>A wrong, y A>B right; q3g1 x A>B wrong, y B>A right
    assert out["cells"] == {"both": 1, "only_old": 0, "only_new": 2, "neither": 0}


@pytest.mark.parametrize("reader", ["arena-hard-judgment@1", "arena-hard-score@1"])
def test_exported_labels_keep_the_game_and_one_key_naming_under_either_reader(tmp_path, judges, reader):
    """Both games of every line survive --labels (6 rows, 6 distinct keys), keyed question_id, model, game whatever
    the reader; the files carry no gold, so none is written (null, not -1)."""
    x, _, _ = judges
    out = tmp_path / f"{reader}.jsonl"
    args = ["-p", "arena-hard@1"] if reader == "arena-hard-judgment@1" else []
    res = _run("parse", x, "--reader", reader, *args, "--labels", out, "--replicates", "0")
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 6 and len({(r["question_id"], r["model"], r["game"]) for r in rows}) == 6
    assert [list(r)[:3] for r in rows] == [["question_id", "model", "game"]] * 6
    assert [r["game"] for r in rows] == ["1", "2"] * 3
    assert all(r["gold"] is None and r["gold_name"] is None for r in rows)
    assert [r["label_name"] for r in rows] == ["A>B", "B>A", "A=B", None if args else None, "A>B", "B>>A"]
