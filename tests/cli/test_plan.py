"""`replicate plan` through typer's CliRunner: formats, the library's figures, usage errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.stats.power import flag_power

runner = CliRunner()


def test_plan_json_is_the_library_figure_and_records_the_assumption_and_seed():
    r = runner.invoke(app, ["plan", "--n-items", "40", "--move", "0.3:0.8", "--k", "20", "--k", "30:25",
                            "--moving", "0.25", "--resamples", "200", "--seed", "9", "-f", "json"])
    assert r.exit_code == 0, r.output
    j = json.loads(r.stdout)
    first, second = j["power"]
    lib = flag_power(0.3, 0.8, k=20, n_items=40, moving=0.25, n_resamples=200, seed=9)
    assert first["power"] == lib.power and first["bounds"] == {"low": lib.bounds[0], "high": lib.bounds[1]}
    assert (second["k_source"], second["k_target"]) == (30, 25)
    assert first["moving_items"] == 10 and first["seed"] == 9 and first["n_resamples"] == 200
    s = j["settings"]
    assert s["seed"] == 9 and s["moving"] == 0.25 and s["n_items"] == 40 and "share 0.25" in s["assumption"]
    assert j["k_needed"] == []


def test_plan_table_and_markdown_and_k_needed():
    args = ["plan", "--n-items", "10", "--move", "0.2:0.9", "--move", "0.4:0.6", "--k", "10",
            "--power", "0.8", "--k-max", "30", "--resamples", "100"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "0.2 -> 0.9" in r.stdout and "not reached by K = 30" in r.stdout
    md = runner.invoke(app, args + ["-f", "markdown"])
    assert md.exit_code == 0 and "## Power to flag an item" in md.stdout and "| move" in md.stdout
    j = json.loads(runner.invoke(app, args + ["-f", "json"]).stdout)
    found, never = j["k_needed"]
    assert found["k"] is not None and found["power_at_k"] >= 0.8 and never["k"] is None


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--move", "0.4-0.6"], "--move must look like P:Q"),
        (["--move", "0.4:1.6"], "must lie in [0, 1]"),
        (["--k", "0"], "--k must be a positive integer"),
        (["--eps", "2"], "--eps must lie in (0, 1]"),
        (["--moving", "1.5"], "--moving must lie in [0, 1]"),
        (["--alpha", "2"], "Error: --alpha must lie in (0, 1), got 2.0"),
        (["--power", "1"], "Error: --power must lie in (0, 1), got 1.0"),
    ],
)
def test_plan_usage_errors_exit_2(extra, message):
    r = runner.invoke(app, ["plan", "--n-items", "10", *extra])
    assert r.exit_code == 2
    assert message in r.stderr
