"""`replicate items` and `replicate screen` through typer's CliRunner, and the benchmark's core."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.synth.trials import synthetic_rows, write_jsonl

runner = CliRunner()


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    p = np.linspace(0.2, 0.8, 24)
    q = p.copy()
    q[:6] = np.clip(q[:6] + 0.6, 0, 1)
    rows = synthetic_rows({"old": p, "new": q}, k=30, seed=2, benchmark=["x"] * 12 + ["y"] * 12,
                          loose_bonus=0.2, metadata={"difficulty": ["easy", "hard"] * 12})
    write_jsonl(rows, d / "t.jsonl")
    return d / "t.jsonl"


def test_items_json_keys_seed_and_provenance(trials, tmp_path):
    out = tmp_path / "per_item.jsonl"
    r = runner.invoke(app, ["items", str(trials), "--edge", "old:new", "--null", "50", "--seed", "7",
                            "--per-item", str(out), "--sensitivity", "0.1,0.3", "--single-draw",
                            "--strata", "difficulty", "-f", "json"])
    assert r.exit_code == 0, r.output
    j = json.loads(r.stdout)
    assert [c["benchmark"] for c in j["cells"]] == ["x", "y"]
    cell = j["cells"][0]
    for key in ("source", "target", "benchmark", "n_items", "delta", "p_plus", "p_minus", "p_chg",
                "equivalent", "inconclusive", "null_p95", "seed"):
        assert key in cell
    assert cell["seed"] == 7 and set(cell["null_p95"]) == {"p_plus", "p_minus", "p_chg"}
    assert cell["n_items"] == 12 and cell["source_side"]["k"] == {"min": 30, "max": 30, "mean": 30.0}
    assert [s["eps_text"] for s in cell["sensitivity"]] == ["0.1", "0.3"]
    assert [s["value"] for s in cell["strata"]] == ["easy", "hard"]
    assert "single_draw" in cell and "loose" in cell
    import hashlib

    assert j["input"]["file"]["sha256"] == hashlib.sha256(trials.read_bytes()).hexdigest()
    assert j["settings"]["seed"] == 7 and j["settings"]["ci"] == "newcombe"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 24
    assert set(rows[0]) == {"source", "target", "benchmark", "item", "correct_source", "trials_source",
                            "api_errors_source", "correct_target", "trials_target", "api_errors_target",
                            "p", "q", "d", "d_exact", "ci_low", "ci_high", "class"}
    improved = sum(r["class"] == "improved" for r in rows)
    assert improved == sum(c["counts"]["improved"] for c in j["cells"])


def test_same_seed_same_json_different_seed_different_null(trials):
    args = ["items", str(trials), "--edge", "old:new", "--by", "none", "--null", "200", "--alpha", "0.5",
            "--eps", "0.05", "-f", "json"]
    a = runner.invoke(app, args + ["--seed", "1"]).stdout
    b = runner.invoke(app, args + ["--seed", "1"]).stdout
    assert a == b
    c = runner.invoke(app, args + ["--seed", "2"]).stdout
    ja, jc = json.loads(a), json.loads(c)
    assert ja["cells"][0]["p_plus"] == jc["cells"][0]["p_plus"]  # the observed data does not depend on the seed
    assert ja["cells"][0]["null_p95"] != jc["cells"][0]["null_p95"]


def test_items_table_and_markdown(trials):
    r = runner.invoke(app, ["items", str(trials), "--edge", "old:new", "--null", "0"])
    assert r.exit_code == 0
    assert r.stdout.startswith(
        "Item classes (eps 0.2, BH q <= 0.05, newcombe 95% interval; permutation null off, seed 0)\n"
    )
    assert "old -> new" in r.stdout and "Accuracy per model and benchmark" in r.stdout
    header, _, first = r.stdout.splitlines()[2:5]
    assert header.split()[17:20] == ["Pchg", "null", "p"]  # no null run: its p-value is '-'
    assert first.split()[-3] == "-"
    r = runner.invoke(app, ["items", str(trials), "--edge", "old:new", "--null", "0", "-f", "markdown"])
    assert r.exit_code == 0 and "| edge " in r.stdout and r.stdout.startswith("## Item classes")


def test_items_errors_exit_2_with_message(trials, tmp_path):
    r = runner.invoke(app, ["items", str(trials), "--edge", "old:newer"])
    assert r.exit_code == 2
    assert r.stderr == "Error: unknown model(s) in --edge: newer; models in the table: new, old\n"
    r = runner.invoke(app, ["items", str(trials), "--edge", "old:new", "--ci", "exact"])
    assert r.exit_code == 2 and "--ci must be one of newcombe, wald, agresti-caffo" in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "m", "item": "i", "trial": 0, "benchmark": "b", "category": "oops"}\n')
    r = runner.invoke(app, ["items", str(bad), "--edge", "m:n"])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"Error: {bad}:1: unknown category 'oops'; allowed: correct, wrong,")


def test_warnings_beyond_the_first_20_are_counted_on_stderr(tmp_path):
    rows = [json.dumps({"model": m, "item": "i", "trial": 0, "benchmark": "b", "category": "correct"})
            for m in ("old", "new")]
    p = tmp_path / "blank.jsonl"
    p.write_text(rows[0] + "\n" * 24 + rows[1] + "\n")  # 23 blank lines between the two rows
    for cmd in (["items", str(p), "--edge", "old:new", "--null", "0"], ["screen", str(p)]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 0, r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 21
        assert lines[0] == f"warning: {p}:2: blank line skipped [blank-line]"
        assert lines[19] == f"warning: {p}:21: blank line skipped [blank-line]"
        assert lines[20] == "warning: ... and 3 more"
    # and every one of them is in the JSON, for both commands
    for cmd in (["items", str(p), "--edge", "old:new", "--null", "0"], ["screen", str(p)]):
        j = json.loads(runner.invoke(app, [*cmd, "-f", "json"]).stdout)
        assert j["warnings"]["count"] == 23  # top-level "warnings", as in every command
        assert j["warnings"]["by_code"] == {"blank-line": 23}


def test_screen_cli(trials):
    r = runner.invoke(app, ["screen", str(trials), "-f", "json"])
    assert r.exit_code == 0
    j = json.loads(r.stdout)
    assert [b["benchmark"] for b in j["benchmarks"]] == ["x", "y"]
    assert all(b["passes"] for b in j["benchmarks"])
    r = runner.invoke(app, ["screen", str(trials), "--low", "0.95", "--high", "1"])
    assert r.exit_code == 0 and "no" in r.stdout


def test_library_errors_name_parameters_and_the_cli_shows_its_options(trials):
    from replicate.errors import UsageError
    from replicate.trials.engine import analyse_items
    from replicate.trials.load import read_trials

    with pytest.raises(UsageError, match=r"^n_null must be >= 0 \(0 = off\), got -1$"):
        analyse_items(read_trials(trials), [("old", "new")], n_null=-1)
    cases = [
        (["items", str(trials), "--edge", "old:new", "--null", "-1"], "--null must be >= 0 (0 = off), got -1"),
        (["items", str(trials), "--edge", "old:zz"], "unknown model(s) in --edge: zz; models in the table: new, old"),
        (["items", str(trials), "--edge", "old:new", "--sensitivity", ","],
         "--sensitivity needs a comma-separated list of thresholds such as 0.10,0.20"),
        (["screen", str(trials), "--low", "0.9", "--high", "0.1"], "--low must not exceed --high, got low=0.9, high=0.1"),
        (["plan", "--n-items", "0"], "--n-items must be an integer >= 1, got 0"),
        (["plan", "--n-items", "5", "--resamples", "1"], "--resamples must be an integer >= 2, got 1"),
    ]
    for args, message in cases:
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr == f"Error: {message}\n", args
