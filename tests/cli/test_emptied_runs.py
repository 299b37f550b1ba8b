"""A run a choice of the user's emptied (a --gold file covering none of its items, --out-of-scale drop dropping
every one): the error names that cause, the file and the option, not only that the runs share no item; the
warnings that say more are still printed above it. Before, compare and chain said 'the runs ... share no item
(items are keyed by ...); check the files or set --key-field', agreement blamed the gold file for a drop (and
printed no warning), and matrix and floor printed tables of '-' with exit 0."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app

COMMANDS = ("compare", "chain", "matrix", "floor", "agreement")


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def qrels(tmp_path):
    files = {
        "off.txt": "q1 0 d1 7\nq1 0 d2 9\nq2 0 d1 8\n",  # every grade off the 0-3 scale
        "on.txt": "q1 0 d1 1\nq1 0 d2 2\nq2 0 d1 0\n",
        "gold.txt": "q1 0 d1 1\nq1 0 d2 2\nq2 0 d1 3\n",
        "elsewhere.txt": "q8 0 d8 1\nq9 0 d9 2\n",  # gold of other items
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS)
def test_out_of_scale_drop_emptying_a_run_is_the_error(qrels, command):
    res = _run(command, qrels / "off.txt", qrels / "on.txt", "--reader", "trec-qrels@1", "--gold", qrels / "gold.txt",
               "--out-of-scale", "drop", "--replicates", "0")
    assert res.exit_code == 2, res.output
    assert res.stderr.endswith(
        "Error: --out-of-scale drop dropped all 3 items of run 'off.txt': every label lay outside its scale 0-3 "
        "(7 x1, 8 x1, 9 x1); keep or clip reads them\n")
    assert "off.txt:1: label 7 lies outside the label set ordinal 0-3" in res.stderr  # the warnings are kept
    assert "share no item" not in res.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_gold_file_covering_none_of_a_run_is_the_error(qrels, command):
    gold = qrels / "elsewhere.txt"
    res = _run(command, qrels / "off.txt", qrels / "on.txt", "--reader", "trec-qrels@1", "--gold", gold,
               "--replicates", "0")
    assert res.exit_code == 2, res.output
    assert res.stderr.endswith(
        f"Error: the gold file {gold} (--gold) covers none of the 3 items of run 'off.txt' (first: q1 / d1, "
        "q1 / d2, q2 / d1): its keys must match the run's (query_id, doc_id; 2 gold key(s) name items the run "
        "lacks)\n")
    assert f"{gold}: 3 of run 'off.txt''s 3 items have no gold in the gold file" in res.stderr  # kept
    assert "share no item" not in res.stderr


def test_runs_sharing_no_item_by_their_keys_still_say_so(qrels):
    (qrels / "apart.txt").write_text("q7 0 d7 1\n")
    (qrels / "both.txt").write_text("q1 0 d1 1\nq7 0 d7 1\n")  # gold of some items of each run
    for command in ("compare", "matrix"):
        res = _run(command, qrels / "on.txt", qrels / "apart.txt", "--reader", "trec-qrels@1", "--gold",
                   qrels / "both.txt", "--replicates", "0")
        assert res.exit_code == 2, res.output
        assert "share no item (items are keyed by" in res.stderr


def test_of_three_runs_the_one_standing_apart_is_shown(qrels):
    # two runs share two items, the third shares none: what the others would share without each says which
    (qrels / "twin.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (qrels / "twin2.txt").write_text("q1 0 d1 0\nq1 0 d2 0\nq1 0 d3 1\n")
    (qrels / "apart.txt").write_text("q7 0 d7 1\n")
    (qrels / "all.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq7 0 d7 0\n")
    res = _run("matrix", qrels / "twin.txt", qrels / "twin2.txt", qrels / "apart.txt", "--reader", "trec-qrels@1",
               "--gold", qrels / "all.txt", "--replicates", "0")
    assert res.exit_code == 2, res.output
    assert ("share no item (items are keyed by query_id, corpus_id): without one run the others would share "
            "0 (without twin.txt), 0 (without twin2.txt), 2 (without apart.txt); check the files or set --key-field"
            ) in res.stderr
    # each shares an item with another, yet no item is common to all three: only one pair holds it
    (qrels / "a.txt").write_text("q1 0 d1 1\n")
    (qrels / "b.txt").write_text("q1 0 d2 1\n")
    (qrels / "c.txt").write_text("q1 0 d1 1\nq1 0 d2 1\n")
    res = _run("matrix", qrels / "a.txt", qrels / "b.txt", qrels / "c.txt", "--reader", "trec-qrels@1",
               "--gold", qrels / "all.txt", "--replicates", "0")
    assert res.exit_code == 2, res.output
    assert "would share 1 (without a.txt), 1 (without b.txt), 0 (without c.txt);" in res.stderr
