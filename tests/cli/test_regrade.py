"""`replicate regrade`: the sizing on the example release and the sample a person grades (seeded, recorded)."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

RUNS = str(ROOT / "fixtures" / "example" / "runs.toml")
ARGS = ["regrade", "--runs", RUNS, "alpha-2024-08", "alpha-2025-01", "-p", "umbrela-fallback@1", "--precision", "0.1",
        "--replicates", "100"]
runner = CliRunner()


def test_regrade_sizes_and_draws_a_blind_stratified_sample(tmp_path):
    out = tmp_path / "sample.csv"
    r = runner.invoke(app, [*ARGS, "--out", str(out), "-f", "json"])
    assert r.exit_code == 0, r.stderr
    js = json.loads(r.stdout)
    assert [m["metric"] for m in js["metrics"]] == ["em", "regression", "kappa"]
    assert js["recommended_n"] == max(m["simulated_n"] for m in js["metrics"])
    assert js["metrics"][2]["analytic_n"] is None  # kappa: simulation only
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == js["recommended_n"] == js["draw"]["n"]
    assert list(rows[0]) == ["query_id", "corpus_id", "human_grade"] and {r["human_grade"] for r in rows} == {""}
    record = json.loads((tmp_path / "sample.csv.draw.json").read_text())
    assert record["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert sum(d["pairs"] for d in record["drawn"]) == len(rows) and record["seed"] == 0
    pool = {g["grade"]: g["pairs"] for g in js["strata"]}
    for d in record["drawn"]:  # proportional to the grades' pool sizes, to within one pair
        assert abs(d["pairs"] - len(rows) * pool[d["grade"]] / js["pairs"]) < 1
    assert all(src["sha256"] for src in record["sources"])
    # the same seed draws the same pairs; an existing --out needs --force
    again = tmp_path / "again.csv"
    assert runner.invoke(app, [*ARGS, "--out", str(again)]).exit_code == 0
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "grades.csv"
    other.write_text("someone's grades\n")
    r = runner.invoke(app, [*ARGS, "--out", str(other)])
    assert r.exit_code == 2 and "exists and was not written by an earlier 'replicate regrade'" in r.stderr
    assert other.read_text() == "someone's grades\n"


def test_regrade_says_when_no_n_is_enough(tmp_path):
    r = runner.invoke(app, [*ARGS[:-4], "--precision", "0.02", "--replicates", "60", "--metric", "em",
                            "--out", str(tmp_path / "s.csv")])
    assert r.exit_code == 2 and "no n reaches --precision on this pool: give --n to draw anyway" in r.stderr
    r = runner.invoke(app, [*ARGS[:-4], "--precision", "0.02", "--replicates", "60", "--metric", "em"])
    assert r.exit_code == 0 and "unreachable" in r.stdout


@pytest.mark.parametrize("precision", ["0", "1"])
def test_a_precision_outside_0_1_is_named_as_the_option(precision):
    """The library's half_width is the command's --precision: the error names the option the user gave."""
    r = runner.invoke(app, [*ARGS[:-4], "--precision", precision, "--replicates", "60"])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (
        f"Error: --precision must lie in (0, 1), e.g. 0.06 for +-6 points; got {float(precision)}")


def test_an_unknown_metric_is_named_as_the_option():
    r = runner.invoke(app, [*ARGS, "--metric", "nosuch"])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == "Error: --metric: unknown nosuch; one of em, regression, kappa"
