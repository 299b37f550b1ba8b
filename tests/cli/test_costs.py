"""`replicate costs` through typer's CliRunner: reports, prices files, bad input, plots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.synth.trials import add_usage, synthetic_rows, write_csv, write_jsonl

runner = CliRunner()

PRICES = """\
source = "a provider's price page"
date = 2026-11-30
currency = "USD"

[models.old]
input = 1.0
output = 4.0

[models."new"]
input = 2.0
output = 8.0
"""


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    d = tmp_path_factory.mktemp("costs-cli")
    p = np.linspace(0.2, 0.8, 24)
    q = np.clip(p + np.where(np.arange(24) < 6, 0.6, 0.0), 0, 1)
    rows = synthetic_rows({"old": p, "new": q}, k=10, seed=2, benchmark=["x"] * 12 + ["y"] * 12,
                          api_error_rate=0.05)
    rows = add_usage(rows, completion={"old": 50, "new": 90}, reasoning={"new": 20}, null_rate=0.05, seed=3)
    write_jsonl(rows, d / "t.jsonl")
    write_csv(rows, d / "t.csv")
    (d / "prices.toml").write_text(PRICES)
    return d


def test_table_report_says_nulls_and_classes(trials):
    r = runner.invoke(app, ["costs", str(trials / "t.jsonl"), "--edge", "old:new", "--replicates", "200"])
    assert r.exit_code == 0, r.output
    for words in ("Tokens per trial", "Tokens per item", "no usage", "Per edge: paired change per item",
                  "Cost by item class", "improved", "never read as 0", "seed 0", "input:"):
        assert words in r.stdout
    assert "reasoning   0         " in r.stdout  # old reports no reasoning tokens: 0 reported, not 0 tokens


def test_json_csv_and_jsonl_agree_and_carry_settings(trials):
    out = []
    for name in ("t.jsonl", "t.csv"):
        r = runner.invoke(app, ["costs", str(trials / name), "-e", "old:new", "--replicates", "50", "--seed", "4",
                                "--prices", str(trials / "prices.toml"), "-f", "json"])
        assert r.exit_code == 0, r.output
        out.append(json.loads(r.stdout))
    a, b = out
    assert a["models"] == b["models"] and a["edges"] == b["edges"]
    assert a["kinds"] == ["prompt", "completion", "reasoning", "total", "cost"]
    assert a["bootstrap"] == {"replicates": 50, "seed": 4, "cluster": None, "confidence_level": 0.95,
                              "method": "item-bootstrap-percentile"}
    assert a["prices"]["source"] == "a provider's price page" and a["prices"]["date"] == "2026-11-30"
    assert a["classification"] == {"eps": "0.2", "alpha": 0.05, "ci": "newcombe"}
    edge = a["edges"][0]["by_kind"]["total"]
    assert 0 <= edge["share_more"] <= 1 and edge["interval"]["median_change"]["seed"] == 4
    assert set(edge["by_class"]) == {"improved", "regressed", "equivalent", "inconclusive"}


def test_no_usage_says_so(tmp_path):
    write_jsonl(synthetic_rows({"a": [0.5] * 3, "b": [0.5] * 3}, k=2), tmp_path / "t.jsonl")
    r = runner.invoke(app, ["costs", str(tmp_path / "t.jsonl"), "-e", "a:b"])
    assert r.exit_code == 0, r.output
    assert "No cost figures" in r.stdout and "reports no usage" in r.stdout and "median" not in r.stdout
    j = json.loads(runner.invoke(app, ["costs", str(tmp_path / "t.jsonl"), "-f", "json"]).stdout)
    assert j["usage_reported"] is False and j["models"] == [] and j["edges"] == []


@pytest.mark.parametrize(("text", "words"), [
    (PRICES.replace('date = 2026-11-30\n', ''), "prices.toml: missing date"),
    (PRICES.replace('source = "a provider\'s price page"\n', ''), "prices.toml: missing source"),
    (PRICES.replace("input = 1.0", "input = -1.0"), "prices.toml:5: models.old.input must be a number >= 0"),
    (PRICES.replace("output = 8.0", ""), "prices.toml:9: models.new: missing output"),
    (PRICES.replace("output = 4.0", "outptu = 4.0"), "prices.toml:5: models.old: unknown field"),
    (PRICES.replace("2026-11-30", '"last week"'), "prices.toml:2: date must be a date"),
])
def test_bad_prices_file(trials, tmp_path, text, words):
    (tmp_path / "prices.toml").write_text(text)
    r = runner.invoke(app, ["costs", str(trials / "t.jsonl"), "--prices", str(tmp_path / "prices.toml")])
    assert r.exit_code == 2
    assert "Error: " in r.stderr and words in r.stderr


def test_bad_usage_is_an_error_with_its_line(tmp_path):
    rows = add_usage(synthetic_rows({"a": [0.5] * 3}, k=2), completion={"a": 10})
    rows[4]["prompt_tokens"] = -1
    write_jsonl(rows, tmp_path / "t.jsonl")
    r = runner.invoke(app, ["costs", str(tmp_path / "t.jsonl")])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"Error: {tmp_path / 't.jsonl'}:5: column 'prompt_tokens' must be >= 0, got -1")


def test_cluster_column_and_its_errors(trials, tmp_path):
    args = ["costs", str(trials / "t.jsonl"), "-e", "old:new", "--replicates", "30", "-f", "json"]
    plain, items = (json.loads(runner.invoke(app, args + extra).stdout) for extra in ([], ["--cluster", "item"]))
    assert plain["edges"] == items["edges"] and items["bootstrap"]["cluster"] is None
    r = runner.invoke(app, ["costs", str(trials / "t.jsonl"), "-e", "old:new", "--cluster", "nope"])
    assert r.exit_code == 2 and "no column 'nope'" in r.stderr
    r = runner.invoke(app, ["costs", str(trials / "t.jsonl"), "-e", "old:new", "--by", "all"])
    assert r.exit_code == 2 and "--by must be one of benchmark, none" in r.stderr
    rows = add_usage(synthetic_rows({"a": [0.5] * 4, "b": [0.6] * 4}, k=2,
                                    metadata={"topic": ["t1", "t1", "t2", None]}), completion={"a": 5, "b": 6})
    write_jsonl(rows, tmp_path / "c.jsonl")
    r = runner.invoke(app, ["costs", str(tmp_path / "c.jsonl"), "-e", "a:b", "--cluster", "topic"])
    assert r.exit_code == 2 and "has no value in column 'topic', which --cluster resamples by" in r.stderr


def test_plots_are_drawn(trials, tmp_path):
    pytest.importorskip("matplotlib")
    r = runner.invoke(app, ["costs", str(trials / "t.jsonl"), "-e", "old:new", "--replicates", "20",
                            "--plots", str(tmp_path / "fig")])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / "fig").iterdir())
    assert "costs-ecdf-total.png" in names and "costs-edge-1-total.svg" in names and "costs-edge-2-total.png" in names


#: Per-model figures describe the table, not a sample estimate: no interval.
NOT_ESTIMATES = {"null_share": "the share of the table's trials (items) reporting no usage: a count of the data"}
EDGE_FIGURES = ("median_change", "median_ratio", "share_more")


def test_every_edge_figure_has_an_interval_in_json_and_text(trials):
    from replicate.trials.costs_render import value

    args = ["costs", str(trials / "t.jsonl"), "-e", "old:new", "--replicates", "40",
            "--prices", str(trials / "prices.toml")]
    js = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    shown = []
    for e in js["edges"]:
        acc = e["accuracy"]
        for side in ("source", "target"):
            assert set(acc["interval"][side]) >= {"low", "high", "method", "replicates", "cluster"}
            shown.append(("pct", acc["interval"][side]))
        for kind, c in e["by_kind"].items():
            figures = [(c, f) for f in EDGE_FIGURES] + [(c["by_class"][k], f) for k in c["by_class"]
                                                       if c["by_class"][k]["items"] for f in EDGE_FIGURES]
            for node, f in figures:
                if node[f] is not None:
                    iv = node["interval"][f]
                    assert iv["replicates"] == 40 and iv["seed"] == 0
                    shown.append((kind if f == "median_change" else "ratio" if f == "median_ratio" else "pct", iv))
            for side in ("source", "target"):
                if c["per_correct"][side] is not None:
                    shown.append(("plain:" + kind, c["interval"][f"per_correct_{side}"]))
    for fmt in ("table", "markdown"):
        text = runner.invoke(app, [*args, "-f", fmt]).stdout
        for how, iv in shown:
            if how == "pct":
                words = f"[{100 * iv['low']:.1f}%, {100 * iv['high']:.1f}%]"
            elif how == "ratio":
                words = f"[{iv['low']:.2f}x, {iv['high']:.2f}x]"
            elif how.startswith("plain:"):
                k = how.split(":")[1]
                words = f"[{value(iv['low'], k)}, {value(iv['high'], k)}]"
            else:
                words = f"[{value(iv['low'], how, signed=True)}, {value(iv['high'], how, signed=True)}]"
            assert words in text, (fmt, how, words)
