"""replicate pairwise: both-order pairwise judgments resolved by model with the harness's own rule.

FastChat file written below (mtbench-pair@1's [[A]] format; game 1 shows model_1 as A, game 2 model_2):

    r1 q1 x-y t1  g1 [[A]] x   g2 [[B]] x     x wins
    r2 q1 x-y t2  g1 [[B]] y   g2 [[A]] y     y wins
    r3 q2 x-y t1  g1 [[A]] x   g2 [[A]] y     inconsistent: tie
    r4 q2 x-y t2  g1 [[C]] tie g2 [[B]] x     game 1 a tie: tie (the games disagree too)
    r5 q3 x-z t1  g1 [[C]]     g2 [[C]]       tie
    r6 q3 x-z t2  g1 none      g2 [[A]]       error: dropped
    r7 q4 z-y t1  g1 [[A]] z   g2 [[B]] z     z wins
    r8 q5 x-y t1  g1 [[B]] y   g2 [[A]] y     y wins

    x  records 7, dropped 1; win 1 (r1), tie 3 (r3 r4 r5), loss 2 (r2 r8): win rate (1 + 3/2) / 6 = 5/12;
       games disagree 2 (r3 r4) of 6
    y  records 6; win 2 (r2 r8), tie 2 (r3 r4), loss 2 (r1 r7): 3/6; disagree 2 of 6
    z  records 3, dropped 1; win 1 (r7), tie 1 (r5): 3/4; disagree 0 of 2
    --baseline y: x over r1 r2 r3 r4 r8: win 1, tie 2, loss 2, 2/5; z over r7: 1/1; y's row left out.

Arena-Hard file (one model m against the baseline; game 1 shows the baseline as A, game 2 the model):

    q1  g1 B>A  model 1 x1   g2 A>B  model 1 x1     agree
    q2  g1 A>>B model 0 x3   g2 B>A  model 0 x1     agree
    q3  g1 A=B  0.5 x1       g2 A>>B model 1 x3     disagree
    q4  g1 none              g2 B>>A model 0 x3     v0.1: game 2 counted; v2.0: the record dropped
    q5  g1 B>>A model 1 x3   g2 A=B  0.5 x1         disagree

    v0.1: 17 battles: win 8 (q1 2, q3 3, q5 3), tie 2, loss 7 (q2 4, q4 3): score (8 + 1) / 17 = 9/17
    v2.0: 14 battles (q4 dropped): win 8, tie 2, loss 4: 9/14
    games disagree: 2 (q3 q5) of 4 with both games read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.pairwise.rules import arena_hard_record, fastchat_record, resolve

VERDICT = {"A": "[[A]]", "B": "[[B]]", "tie": "[[C]]", None: "I cannot decide."}
WINNER1 = {"A": "model_1", "B": "model_2", "tie": "tie", None: "error"}
WINNER2 = {"A": "model_2", "B": "model_1", "tie": "tie", None: "error"}
FASTCHAT_ROWS = [
    (1, "x", "y", 1, "A", "B"), (1, "x", "y", 2, "B", "A"), (2, "x", "y", 1, "A", "A"), (2, "x", "y", 2, "tie", "B"),
    (3, "x", "z", 1, "tie", "tie"), (3, "x", "z", 2, None, "A"), (4, "z", "y", 1, "A", "B"), (5, "x", "y", 1, "B", "A"),
]
ARENA_ROWS = [("q1", "B>A", "A>B"), ("q2", "A>>B", "B>A"), ("q3", "A=B", "A>>B"), ("q4", None, "B>>A"),
              ("q5", "B>>A", "A=B")]


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def fastchat_pairs(tmp_path):
    rows = [{"question_id": q, "model_1": m1, "model_2": m2, "g1_winner": WINNER1[g1], "g2_winner": WINNER2[g2],
             "judge": ["gpt-4", "pair-v2"], "g1_user_prompt": "...", "g1_judgment": "Because. " + VERDICT[g1],
             "g2_user_prompt": "...", "g2_judgment": "Because. " + VERDICT[g2], "turn": t, "tstamp": 1.0}
            for q, m1, m2, t, g1, g2 in FASTCHAT_ROWS]
    return _write(tmp_path / "gpt-4_pair.jsonl", rows)


def arena_hard(tmp_path: Path, layout: str) -> Path:
    rows = []
    for q, g1, g2 in ARENA_ROWS:
        if layout == "v0.1":
            games = [{"user_prompt": "...", "judgment": "Verdict: " + (f"[[{g}]]" if g else "none"), "score": g}
                     for g in (g1, g2)]
            rows.append({"question_id": q, "model": "m", "judge": "gpt-4-1106-preview", "games": games})
        else:
            games = [None if g is None else {"score": g, "judgment": {"answer": f"Verdict: [[{g}]]"}, "prompt": []}
                     for g in (g1, g2)]
            rows.append({"uid": q, "category": "hard_prompt", "judge": "gpt-4.1", "model": "m",
                         "baseline": "o3-mini-2025-01-31", "games": games})
    return _write(tmp_path / f"m-{layout}.jsonl", rows)


def _table(out: str) -> dict:
    return {m["model"]: (m["records"], m["dropped"], *(m[f]["count"] for f in ("win", "tie", "loss")),
                         m["win_rate_ties_half"]["share"], m["position_disagreement"]["count"],
                         m["position_disagreement"]["n"])
            for m in json.loads(out)["models"]}


# FastChat -----------------------------------------------------------------------------------
def fastchat_show_result(path: Path, baseline: str | None = None) -> dict:
    """show_result.py's display_result_pairwise, transcribed onto the recorded g1_winner / g2_winner."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["g1_winner"] != "error" and r["g2_winner"] != "error"]
    res: dict[str, list[int]] = {}
    for r in rows:
        if baseline is not None and baseline not in (r["model_1"], r["model_2"]):
            continue
        if r["g1_winner"] == "tie" or r["g1_winner"] != r["g2_winner"]:
            outcome = {r["model_1"]: 1, r["model_2"]: 1}  # index 1: tie
        else:
            w, lo = (r["model_1"], r["model_2"]) if r["g1_winner"] == "model_1" else (r["model_2"], r["model_1"])
            outcome = {w: 0, lo: 2}
        for m, k in outcome.items():
            res.setdefault(m, [0, 0, 0])[k] += 1
    res.pop(baseline, None)
    return {m: (w, t, lo, (w + 0.5 * t) / (w + t + lo)) for m, (w, t, lo) in res.items()}


def test_fastchat_pairs_hand_counted_and_as_show_result(fastchat_pairs):
    r = _run("pairwise", fastchat_pairs, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    got = _table(r.stdout)
    assert got == {"x": (7, 1, 1, 3, 2, 5 / 12, 2, 6), "y": (6, 0, 2, 2, 2, 0.5, 2, 6), "z": (3, 1, 1, 1, 0, 0.75, 0, 2)}
    want = fastchat_show_result(fastchat_pairs)
    assert {m: (w, t, lo, rate) for m, (_, _, w, t, lo, rate, _, _) in got.items()} == want
    body = json.loads(r.stdout)
    assert body["rule"] == "fastchat" and body["parser"] == "mtbench-pair@1" and body["departure"] is None
    assert [m["model"] for m in body["models"]] == ["z", "y", "x"]
    assert {m["model"]: m["inconsistent_ties"] for m in body["models"]} == {"x": 2, "y": 2, "z": 0}


def test_fastchats_recorded_winners_give_the_same_tally(fastchat_pairs, tmp_path):
    """fastchat-pair-winners@1 reads g1_winner / g2_winner (FastChat's own verdicts) back onto the order shown."""
    read = _run("pairwise", fastchat_pairs, "-f", "json", "--replicates", "0")
    recorded = _run("pairwise", fastchat_pairs, "--reader", "fastchat-pair-winners@1", "-f", "json", "--replicates", "0")
    assert recorded.exit_code == 0, recorded.output
    assert _table(recorded.stdout) == _table(read.stdout)
    body = json.loads(recorded.stdout)
    assert body["parser"] == "fastchat-winners" and body["departure"] is None
    labels = tmp_path / "labels.jsonl"
    _run("parse", fastchat_pairs, "--reader", "fastchat-pair-winners@1", "--labels", labels, "--replicates", "0")
    rows = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    assert [(r["model_a"], r["model_b"], r["label_name"]) for r in rows[:4]] == [
        ("x", "y", "A"), ("y", "x", "B"), ("x", "y", "B"), ("y", "x", "A")]
    bad = _write(tmp_path / "bad.jsonl", [{**json.loads(fastchat_pairs.read_text().splitlines()[0]), "g2_winner": "x"}])
    r = _run("pairwise", bad, "--reader", "fastchat-pair-winners@1")
    assert r.exit_code == 2 and "bad.jsonl:1: 'g2_winner' must be 'model_1', 'model_2', 'tie' or 'error'" in r.output


def test_fastchat_pairwise_baseline(fastchat_pairs):
    r = _run("pairwise", fastchat_pairs, "--baseline", "y", "-f", "json", "--replicates", "0")
    got = _table(r.stdout)
    assert set(got) == {"x", "z"}
    assert got["x"][2:6] == (1, 2, 2, 0.4) and got["z"][2:6] == (1, 0, 0, 1.0)
    want = fastchat_show_result(fastchat_pairs, baseline="y")
    assert {m: (w, t, lo, rate) for m, (_, _, w, t, lo, rate, _, _) in got.items()} == want
    text = _run("pairwise", fastchat_pairs, "--baseline", "y", "--replicates", "0").stdout
    assert "Records with y only; its own row left out (pairwise-baseline)." in text


def test_fastchat_table_names_positions_and_the_rule(fastchat_pairs):
    r = _run("pairwise", fastchat_pairs, "--cluster", "item", "--replicates", "200")
    assert r.exit_code == 0, r.output
    assert "FastChat show_result.py's pairwise rule" in r.stdout
    assert "inconsistent ties: z 0, y 2, x 2" in r.stdout
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("x "))
    assert "1 (16.7%) [" in line and "41.7% [" in line and "2 of 6 (33.3%) [" in line


def test_rules_against_a_plain_reading():
    # FastChat: game 1 a tie and game 2 a win is a tie; a consistent win counts once for each model
    r = fastchat_record("q", "a", "b", "tie", "A")
    assert [u.value for u in r.units] == [0.5, 0.5] and r.disagree and r.both_read
    r = fastchat_record("q", "a", "b", "B", "A")
    assert [(u.model, u.value) for u in r.units] == [("a", 0.0), ("b", 1.0)] and not r.disagree
    assert fastchat_record("q", "a", "b", None, "A").units == ()
    # Arena-Hard: strong verdicts weigh 3 (or the weight given), game 1 inverted
    r = arena_hard_record("q", "m", "base", "A>>B", "A>>B", rule="arena-hard-v0.1", weight=5)
    assert [u.value for u in r.units] == [0.0] * 5 + [1.0] * 5 and r.disagree
    assert arena_hard_record("q", "m", "base", None, "A>B", rule="arena-hard-v2.0").units == ()
    assert [u.value for u in arena_hard_record("q", "m", "base", None, "A>B", rule="arena-hard-v0.1").units] == [1.0]
    with pytest.raises(ValueError, match="rule must be one of"):
        resolve("elo", [])  # type: ignore[arg-type]


# Arena-Hard ---------------------------------------------------------------------------------
LABEL_TO_SCORE = {"A>B": [1], "A>>B": [1] * 3, "A=B": [0.5], "A<<B": [0] * 3, "A<B": [0], "B>A": [0],
                  "B>>A": [0] * 3, "B=A": [0.5], "B<<A": [1] * 3, "B<A": [1]}


def arena_hard_v2_scores(path: Path) -> list[float]:
    """Arena-Hard v2.0 show_result.load_judgments, transcribed: a record with a null game or score dropped, then
    game 2's scores plus game 1's inverted, exploded into battles."""
    battles = []
    for line in path.read_text(encoding="utf-8").splitlines():
        g = json.loads(line)["games"]
        if g[0] is None or g[1] is None or g[0]["score"] is None or g[1]["score"] is None:
            continue
        battles += LABEL_TO_SCORE[g[1]["score"]] + [1 - s for s in LABEL_TO_SCORE[g[0]["score"]]]
    return battles


def arena_hard_v01_battles(path: Path) -> list[str]:
    """Arena-Hard v0.1 show_result.get_battles_from_row, transcribed: winners of (baseline as model_a, model as b)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        games = json.loads(line)["games"]
        for number, game in enumerate(games, 1):
            table = {"A=B": ("tie", 1), "A>B": ("model_a", 1), "A>>B": ("model_a", 3), "B>A": ("model_b", 1),
                     "B>>A": ("model_b", 3)}
            winner, weight = table.get(game["score"], (None, 0))
            if number == 2 and winner in ("model_a", "model_b"):
                winner = "model_b" if winner == "model_a" else "model_a"
            out += [winner] * weight
    return out


def test_arena_hard_v01_hand_counted_and_as_show_result(tmp_path):
    path = arena_hard(tmp_path, "v0.1")
    r = _run("pairwise", path, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["rule"] == "arena-hard-v0.1" and body["parser"] == "arena-hard@1" and body["unit"] == "battle"
    assert _table(r.stdout) == {"m": (5, 0, 8, 2, 7, 9 / 17, 2, 4)}
    battles = arena_hard_v01_battles(path)
    # the Bradley-Terry win rate against the only opponent is (wins + ties / 2) / battles
    assert (battles.count("model_b") + battles.count("tie") / 2) / len(battles) == 9 / 17
    same = _run("pairwise", path, "--reader", "arena-hard-score@1", "-f", "json", "--replicates", "0")
    assert _table(same.stdout) == _table(r.stdout) and json.loads(same.stdout)["parser"] == "arena-hard-score"


def test_arena_hard_v20_hand_counted_and_as_show_result(tmp_path):
    path = arena_hard(tmp_path, "v2.0")
    r = _run("pairwise", path, "-f", "json", "--replicates", "0")
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["rule"] == "arena-hard-v2.0" and body["parser"] == "arena-hard-last@1"
    assert _table(r.stdout) == {"m": (5, 1, 8, 2, 4, 9 / 14, 2, 4)}
    scores = arena_hard_v2_scores(path)
    assert sum(scores) / len(scores) == 9 / 14 and len(scores) == 14
    departed = json.loads(_run("pairwise", path, "-p", "arena-hard@1", "-f", "json", "--replicates", "0").stdout)
    assert "arena-hard@1, not the harness's own reading (arena-hard-last@1 or arena-hard-score)" in departed["departure"]


def test_files_that_are_not_pairwise_are_refused(tmp_path):
    single = Path(__file__).resolve().parents[1] / "readers" / "data" / "fastchat" / "gpt-4_single.jsonl"
    r = _run("pairwise", single, "-p", "mtbench-single@2")
    assert r.exit_code == 2 and "pairwise judgments are read with fastchat-pair@1" in r.output


def test_a_cluster_other_than_question_is_refused(fastchat_pairs):
    r = _run("pairwise", fastchat_pairs, "--cluster", "turn")
    assert r.exit_code == 2 and "clustered by question_id or not at all" in r.output


@pytest.mark.parametrize("reader", ["fastchat-pair@1", "fastchat-pair-winners@1"])
@pytest.mark.parametrize("cluster", ["question_id", "item"])
def test_every_record_dropped_gives_rows_without_figures(fastchat_pairs, tmp_path, reader, cluster):
    """A file whose every record has an error in a game (nothing parsed: FastChat drops them all): each model
    keeps its row, its records all dropped, its shares and win rate undefined and without an interval. The
    bootstrap of the win rate raised a ValueError over zero units before."""
    rows = [json.loads(line) for line in fastchat_pairs.read_text(encoding="utf-8").splitlines()]
    bad = _write(tmp_path / "all-errors_pair.jsonl", [
        dict(r, g1_judgment="no verdict", g2_judgment="no verdict", g1_winner="error", g2_winner="error")
        for r in rows])
    res = _run("pairwise", bad, "--reader", reader, "--replicates", 20, "--cluster", cluster, "-f", "json")
    assert res.exit_code == 0, res.output
    models = json.loads(res.stdout)["models"]
    assert {m["model"] for m in models} == {m for r in rows for m in (r["model_1"], r["model_2"])}
    for m in models:
        assert m["records"] == m["dropped"] > 0
        for f in ("win", "tie", "loss", "win_rate_ties_half"):
            assert (m[f]["count"], m[f]["n"], m[f]["share"]) == (0.0, 0.0, None)
            assert m[f]["interval"]["low"] is None and m[f]["interval"]["high"] is None
