"""One option name, one meaning (issue 32): today's spellings, and the old ones kept as aliases that warn.

Each old spelling gives the very output of the new one, and one exact warning on stderr.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.aliases import modernise
from replicate.cli.app import app
from support.paths import ROOT

P = "umbrela-fallback@1"
KEYS = [("1", "a"), ("1", "b"), ("2", "c"), ("2", "d"), ("3", "e"), ("3", "f")]
INSPECT = ROOT / "tests" / "readers" / "data" / "inspect"
EDGE_WARNING = "Warning: --edge OLD NEW is deprecated; write --edge OLD:NEW\n"


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


def _same_but_warned(new, old, warning):
    assert new.exit_code == 0, new.output
    assert old.exit_code == 0, old.output
    assert old.stdout == new.stdout
    assert old.stderr == warning + new.stderr  # the warning first, then what the new spelling says too


def test_floor_edge_two_values_is_the_one_value_edge_with_a_warning(runs):
    base = ["floor", *runs[:3], "-p", P, "--replicates", "20", "-f", "json"]
    new = _run(*base, "--edge", f"{runs[3]}:{runs[4]}")
    old = _run(*base, "--edge", runs[3], runs[4])
    _same_but_warned(new, old, EDGE_WARNING)
    assert json.loads(new.stdout)["edge"] is not None


def test_parsers_audit_edge_two_values_is_the_one_value_edge_with_a_warning(runs):
    base = ["parsers", "audit", "-p", "umbrela-strict@1", "-p", P, *runs[:2], "--replicates", "20"]
    new = _run(*base, "--edge", "R1:R2")
    _same_but_warned(new, _run(*base, "--edge", "R1", "R2"), EDGE_WARNING)
    assert "R1" in new.stdout


def test_edge_names_holding_a_colon_are_split_between_known_runs(tmp_path):
    a = _write(tmp_path / "a:1.jsonl", [0, 1, 2, 3, 0, 1])
    b = _write(tmp_path / "b.jsonl", [0, 1, 0, 3, 1, 2])
    res = _run("parsers", "audit", "-p", "umbrela-strict@1", "-p", P, a, b, "--replicates", "0", "--edge", f"{a}:{b}")
    assert res.exit_code == 0, res.output


def test_plan_items_is_n_items_with_a_warning():
    base = ["plan", "--move", "0.3:0.8", "--k", "20", "--resamples", "50", "-f", "json"]
    new = _run(*base, "--n-items", "40")
    _same_but_warned(new, _run(*base, "--items", "40"), "Warning: --items is deprecated; write --n-items\n")
    _same_but_warned(new, _run(*base, "--items=40"), "Warning: --items is deprecated; write --n-items\n")
    assert json.loads(new.stdout)["settings"]["n_items"] == 40


def test_compare_scorer_is_inspect_scorer_with_a_warning():
    base = ["compare", INSPECT / "old.eval", INSPECT / "new.eval", "-f", "json", "--replicates", "0"]
    new = _run(*base, "--inspect-scorer", "match")
    _same_but_warned(new, _run(*base, "--scorer", "match"), "Warning: --scorer is deprecated; write --inspect-scorer\n")


def test_score_keeps_its_own_scorer_and_collect_its_items():
    # commands whose own option is the old name are left alone

    class Opt:
        param_type_name = "option"
        is_flag = count = False
        nargs = 1
        secondary_opts: list[str] = []
        metavar = None

        def __init__(self, *opts):
            self.opts = list(opts)

    own = [Opt("--items"), Opt("--scorer")]
    assert modernise(own, ["--items", "f.jsonl", "--scorer", "x@1"]) == (["--items", "f.jsonl", "--scorer", "x@1"], [])
    renamed = [Opt("--n-items"), Opt("--filter")]
    # a value equal to an old option name, and everything after --, stay as written
    assert modernise(renamed, ["--filter", "--items", "--", "--items"]) == (["--filter", "--items", "--", "--items"], [])


def test_a_missing_new_value_is_refused_as_before(runs):
    res = _run("floor", *runs[:3], "-p", P, "--edge", runs[3])
    assert res.exit_code == 2
    assert res.stderr == f"Error: --edge takes two run names, OLD:NEW; got {runs[3]!r} (a run file whose name starts with '-' can be written ./-name)\n"
