"""umbrela-judge@1: UMBRELA's own judge output, keyed by ids or by (query, passage) text."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.parsing import PARSERS
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _hand(path, gold_path, parser):
    gold = {}
    for line in gold_path.read_text().splitlines():
        q, _, d, g = line.split()
        gold[(q, d)] = int(g)
    out = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        out[(r["qid"], r["docid"])] = parser(r["prediction"])
    return out, gold


def test_acceptance_compare_with_separate_gold_equals_a_hand_count():
    a, b, gold_path = DATA / "umbrela_a.jsonl", DATA / "umbrela_b.jsonl", DATA / "gold.txt"
    res = _run("compare", a, b, "--reader", "umbrela-judge@1", "--gold", gold_path, "-p", "umbrela-fallback@1", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    p = PARSERS.get("umbrela-fallback@1")
    old, gold = _hand(a, gold_path, p)
    new, _ = _hand(b, gold_path, p)
    cells = dict(both=0, only_old=0, only_new=0, neither=0)
    for k in gold.keys() & old.keys() & new.keys():
        if old[k] is None or new[k] is None:
            continue  # intersect
        o, n = old[k] == gold[k], new[k] == gold[k]
        cells["both" if o and n else "only_old" if o else "only_new" if n else "neither"] += 1
    assert out["cells"] == cells == {"both": 2, "only_old": 2, "only_new": 1, "neither": 0}
    assert out["reader"] == "umbrela-judge@1" and out["parser"] == "umbrela-fallback@1"
    assert out["unparsed"] == {"old": 1, "new": 0}
    assert out["gold"]["runs"][0]["without_gold"] == 1


def test_detected_by_content_and_keyed_by_text_without_ids():
    diag = Diagnostics()
    run = load_run("t", DATA / "umbrela_text.jsonl", diagnostics=diag)
    assert run.reader == "umbrela-judge@1" and run.files[0].chosen == "by content"
    assert run.keys[0] == "how long is life cycle of flea\x1fThe life cycle of a flea can last anywhere from 20 days to an entire year."
    assert run.outputs[0] == "##final score: 3"


def test_a_record_that_loses_its_id_names_the_line(tmp_path):
    bad = tmp_path / "u.jsonl"
    rows = [{"qid": "q1", "docid": "d1", "query": "a", "passage": "b", "prediction": "x", "judgment": 0},
            {"query": "a", "passage": "c", "prediction": "y", "judgment": 0, "extra": [1, 2]}]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(BadInput, match=r"u.jsonl:2: record lacks 'qid'"):
        load_run("u", bad, diagnostics=Diagnostics())


def test_prediction_must_be_text_and_unknown_fields_are_ignored(tmp_path):
    ok = tmp_path / "ok.jsonl"
    ok.write_text(json.dumps({"query": "a", "passage": "b", "prediction": None, "judgment": 0, "whatever": {"x": 1}}) + "\n")
    diag = Diagnostics()
    run = load_run("ok", ok, diagnostics=diag)
    assert run.outputs == (None,) and diag.counts() == {"null-output": 1}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "a", "passage": "b", "prediction": 3}) + "\n")
    with pytest.raises(BadInput, match=r"bad.jsonl:1: 'prediction' must be a string, got a JSON int \(3\)"):
        load_run("bad", bad, diagnostics=Diagnostics())
