"""One option name, one meaning (issue 32): today's spellings. The old ones (``plan --items``, ``compare
--scorer``, ``--edge OLD NEW``) were deprecated for a release that never came and are gone (issue 40): each is
refused with click's usage error, never read as something else.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

P = "umbrela-fallback@1"
KEYS = [("1", "a"), ("1", "b"), ("2", "c"), ("2", "d"), ("3", "e"), ("3", "f")]
INSPECT = ROOT / "tests" / "readers" / "data" / "inspect"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _write(path, labels):
    with open(path, "w") as fh:
        for (q, d), lab in zip(KEYS, labels):
            fh.write(json.dumps({"query_id": q, "corpus_id": d, "original_qrel_score": 1.0, "model_output": f"##final score: {lab}"}) + "\n")
    return str(path)


@pytest.fixture
def runs(tmp_path):
    return [
        _write(tmp_path / "R1.jsonl", [0, 1, 2, 3, 0, 1]),
        _write(tmp_path / "R2.jsonl", [0, 1, 0, 3, 1, 2]),
        _write(tmp_path / "R3.jsonl", [1, 1, 2, 0, 1, 2]),
        _write(tmp_path / "V1.jsonl", [0, 1, 2, 3, 1, 2]),
        _write(tmp_path / "V2.jsonl", [0, 1, 2, 0, 0, 1]),
    ]


def _refused(res, words):
    assert res.exit_code == 2, res.output
    assert words in res.stderr, res.stderr


def test_floor_edge_takes_one_value(runs):
    base = ["floor", *runs[:3], "-p", P, "--replicates", "20", "-f", "json"]
    new = _run(*base, "--edge", f"{runs[3]}:{runs[4]}")
    assert new.exit_code == 0, new.output
    assert json.loads(new.stdout)["edge"] is not None
    _refused(_run(*base, "--edge", runs[3], runs[4]), "--edge takes two run names, OLD:NEW")


def test_parsers_audit_edge_takes_one_value(runs):
    base = ["parsers", "audit", "-p", "umbrela-strict@1", "-p", P, *runs[:2], "--replicates", "20"]
    new = _run(*base, "--edge", "R1:R2")
    assert new.exit_code == 0 and "R1" in new.stdout, new.output
    _refused(_run(*base, "--edge", "R1", "R2"), "--edge takes two run names, OLD:NEW")


def test_edge_names_holding_a_colon_are_split_between_known_runs(tmp_path):
    a = _write(tmp_path / "a:1.jsonl", [0, 1, 2, 3, 0, 1])
    b = _write(tmp_path / "b.jsonl", [0, 1, 0, 3, 1, 2])
    res = _run("parsers", "audit", "-p", "umbrela-strict@1", "-p", P, a, b, "--replicates", "0", "--edge", f"{a}:{b}")
    assert res.exit_code == 0, res.output


def test_plan_takes_n_items_and_refuses_items():
    base = ["plan", "--move", "0.3:0.8", "--k", "20", "--resamples", "50", "-f", "json"]
    new = _run(*base, "--n-items", "40")
    assert new.exit_code == 0 and json.loads(new.stdout)["settings"]["n_items"] == 40, new.output
    _refused(_run(*base, "--items", "40"), "No such option: --items")
    _refused(_run(*base, "--items=40"), "No such option: --items")


def test_compare_takes_inspect_scorer_and_refuses_scorer():
    base = ["compare", INSPECT / "old.eval", INSPECT / "new.eval", "-f", "json", "--replicates", "0"]
    assert _run(*base, "--inspect-scorer", "match").exit_code == 0
    _refused(_run(*base, "--scorer", "match"), "No such option: --scorer")


def test_a_missing_new_value_is_refused_as_before(runs):
    res = _run("floor", *runs[:3], "-p", P, "--edge", runs[3])
    assert res.exit_code == 2
    assert res.stderr == f"Error: --edge takes two run names, OLD:NEW; got {runs[3]!r} (a run file whose name starts with '-' can be written ./-name)\n"
