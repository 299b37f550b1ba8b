"""End to end: collect from the simulated endpoint over real HTTP, `replicate score`, then
`replicate items` and `replicate screen` on what score wrote (JSONL, JSONL.gz and CSV)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import collect
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
KEY = "sk-test-trials-e2e"
ENV = "REPLICATE_TRIALS_E2E_KEY"
runner = CliRunner()


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    d = tmp_path_factory.mktemp("e2e")
    mp = pytest.MonkeyPatch()
    mp.setenv(ENV, KEY)
    try:
        sim = replace(load_sim_config(FIX / "sim.toml"), hang_seconds=1.0, retry_after=0.01)
        with start_sim_server(sim, api_key=KEY) as srv:
            cfg = replace(load_config(FIX / "config.toml"), base_url=srv.url, timeout=0.3, api_key_env=ENV,
                          concurrency=6, k=6)
            cfg = replace(cfg, retry=replace(cfg.retry, backoff_base=0.001, backoff_max=0.01))
            collect(cfg, load_items(FIX / "items.jsonl"), d / "archive.jsonl")
    finally:
        mp.undo()
    outs = {}
    for name in ("t.jsonl", "t.jsonl.gz", "t.csv"):
        r = runner.invoke(app, ["score", str(d / "archive.jsonl"), "--items", str(FIX / "items.jsonl"),
                                "--out", str(d / name)])
        assert r.exit_code == 0, r.stderr
        outs[name] = d / name
    return outs


def test_items_reads_what_score_writes_in_every_format(scored):
    results = {}
    for name, path in scored.items():
        r = runner.invoke(app, ["items", str(path), "--edge", "sim-a:sim-b", "--null", "50", "--strata",
                                "difficulty", "--single-draw", "-f", "json"])
        assert r.exit_code == 0, r.stderr
        results[name] = json.loads(r.stdout)
    j = results["t.jsonl"]
    for other in ("t.jsonl.gz", "t.csv"):
        assert results[other]["cells"] == j["cells"] and results[other]["accuracy"] == j["accuracy"]
    # The figures agree with a count made directly from the rows score wrote.
    rows = [orjson.loads(line) for line in scored["t.jsonl"].read_bytes().splitlines()]
    assert j["input"]["rows"] == len(rows)
    assert j["input"]["scorers"] == sorted({r["scorer"] for r in rows})
    assert [c["benchmark"] for c in j["cells"]] == sorted({r["benchmark"] for r in rows})
    for acc in j["accuracy"]:
        mine = [r for r in rows if r["model"] == acc["model"] and r["benchmark"] == acc["benchmark"]]
        assert {c: n for c, n in acc["categories"].items() if n} == Counter(r["category"] for r in mine)
        per_item: dict = {}
        for r in mine:
            if r["category"] != "api_error":
                per_item.setdefault(r["item"], []).append(r["category"] == "correct")
        assert acc["n_items"] == len(per_item)
        assert acc["accuracy"] == pytest.approx(sum(sum(v) / len(v) for v in per_item.values()) / len(per_item))
    strata = {s["value"] for c in j["cells"] for s in c["strata"]}
    assert strata <= {"easy", "medium", "hard"} and strata


def test_screen_reads_what_score_writes(scored):
    r = runner.invoke(app, ["screen", str(scored["t.csv"]), "-f", "json"])
    assert r.exit_code == 0, r.stderr
    assert [b["benchmark"] for b in json.loads(r.stdout)["benchmarks"]] == ["algebra", "arith", "mcq"]
