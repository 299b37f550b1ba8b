"""`replicate parsers audit` with gold stored as label names ("A>B", "tie").

The audited parsers' shared label set reads the gold, as `compare --parser`
does; when their sets differ, gold is read as whole-number grades only and a
gold given as a name is refused saying so. Counts below are by hand.
"""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.parsing import PARSERS, Parser

FIELDS = ["--key-field", "id", "--gold-field", "human", "--output-field", "judgment"]


def _write(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for i, (gold, text) in enumerate(rows, 1):
            fh.write(json.dumps({"id": f"q{i}", "human": gold, "judgment": text}) + "\n")
    return path


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_text_gold_is_read_through_the_shared_label_set(tmp_path):
    path = _write(tmp_path / "arena.jsonl", [
        ("A>B", "My final verdict is: [[A>B]]"),  # both A>B: right
        ("A>B", "[[a>b]]"),  # v0.1 unparsed (case); v2.0 A>B: right
        ("B>A", "[[A>B]] then [[B>A]]"),  # v0.1 unparsed (two distinct); v2.0 last, B>A: right
        ("A>>B", "[[B<<A]]"),  # both A>>B: right
        ("B>A", "[[A=B]]"),  # both A=B: wrong
        ("A=B", "no verdict"),  # both unparsed
    ])
    res = _run("parsers", "audit", "-p", "arena-hard@1", "-p", "arena-hard-last@1", path, *FIELDS,
               "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    f = json.loads(res.stdout)["files"][0]
    v01, last = f["parsers"]["arena-hard@1"], f["parsers"]["arena-hard-last@1"]
    assert (v01["parsed"], v01["unparsed"], v01["correct"]) == (3, 3, 2)
    assert v01["em"] == 2 / 3
    assert (last["parsed"], last["unparsed"], last["correct"]) == (5, 1, 4)
    assert last["em"] == 0.8
    assert f["labels_differ"] == 2


def test_categorical_text_gold(tmp_path):
    """Two readings of MT-Bench's categorical set: FastChat's, and a toy one taking the last verdict."""
    names = {"A": 0, "B": 1, "C": 2}

    def last_verdict(text: str) -> int | None:
        found = re.findall(r"\[\[([ABC])\]\]", text)
        return names[found[-1]] if found else None

    toy = Parser("toy-pair-last@1", "last [[A]]/[[B]]/[[C]]", last_verdict, labels=(0, 1, 2),
                 label_set=PARSERS.get("mtbench-pair@1").label_set)
    PARSERS.register(toy)
    try:
        path = _write(tmp_path / "pair.jsonl", [
            ("A", "[[A]]"),  # both A: right
            ("tie", "[[C]]"),  # both tie: right
            ("B", "[[A]] no, [[B]]"),  # FastChat A (wrong); last B (right)
            ("B", "none"),  # both unparsed
        ])
        res = _run("parsers", "audit", "-p", "mtbench-pair@1", "-p", toy.name, path, *FIELDS,
                   "--replicates", "0", "-f", "json")
    finally:
        PARSERS.unregister(toy.name)
    assert res.exit_code == 0, res.output
    f = json.loads(res.stdout)["files"][0]
    fastchat, last = f["parsers"]["mtbench-pair@1"], f["parsers"][toy.name]
    assert (fastchat["parsed"], fastchat["correct"]) == (3, 2)
    assert (last["parsed"], last["correct"]) == (3, 3)
    assert f["labels_differ"] == 1


def test_text_gold_is_refused_when_the_label_sets_differ(tmp_path):
    path = _write(tmp_path / "mixed.jsonl", [("A", "[[A]] [[A>B]]"), ("B", "[[B]] [[B>A]]")])
    res = _run("parsers", "audit", "-p", "mtbench-pair@1", "-p", "arena-hard@1", path, *FIELDS)
    assert res.exit_code == 2
    err = res.stderr
    assert "mixed.jsonl:1: gold field 'human'" in err, err
    assert "label sets differ (mtbench-pair@1: categorical A, B, tie; arena-hard@1: ordinal 0-4 (" in err, err
    assert "audit parsers that share a label set to read gold given as text" in err


def test_numeric_gold_still_works_when_ordinal_sets_differ(tmp_path):
    path = _write(tmp_path / "num.jsonl", [(2, "2"), (3, "final score: 3"), (1, "11")])
    res = _run("parsers", "audit", "-p", "umbrela-fallback@1", "-p", "number@1", path, *FIELDS,
               "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    f = json.loads(res.stdout)["files"][0]["parsers"]
    # fallback: 2 right, 3 right, "11" holds no standalone 0-3 digit: unparsed
    assert (f["umbrela-fallback@1"]["parsed"], f["umbrela-fallback@1"]["correct"]) == (2, 2)
    # number@1: 2 right, "final score: 3" unparsed, 11 outside 0-10 unparsed
    assert (f["number@1"]["parsed"], f["number@1"]["correct"]) == (1, 1)
