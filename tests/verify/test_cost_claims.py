"""Claims over token costs (`costs.median_tokens`, `costs.edge_median_ratio`) in a trials table with usage.

The reference is a plain numpy computation over the generated rows, independent of the costs module."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.verify.claims_file import parse_claims
from support.synth.trials import add_usage, synthetic_rows, write_jsonl

runner = CliRunner()
N = 20


def _rows(usage: bool = True) -> list[dict]:
    p = np.linspace(0.2, 0.8, N)
    rows = synthetic_rows({"old": p, "new": np.clip(p + 0.1, 0, 1)}, k=10, seed=3, benchmark=["x"] * 10 + ["y"] * 10,
                          api_error_rate=0.05)
    return add_usage(rows, completion={"old": 80, "new": 140}, reasoning={"new": 30}, null_rate=0.05, seed=2) \
        if usage else rows


def _value(r, kind):
    if kind == "total":
        return None if r["prompt_tokens"] is None or r["completion_tokens"] is None else (
            r["prompt_tokens"] + r["completion_tokens"])
    return r.get(f"{kind}_tokens")


def _per_item(rows, kind):
    acc = defaultdict(list)
    for r in rows:
        v = _value(r, kind)
        if r["category"] != "api_error" and v is not None:
            acc[(r["model"], r["benchmark"], r["item"])].append(v)
    return {k: float(np.mean(v)) for k, v in acc.items()}


def _expected(rows):
    trial = [_value(r, "completion") for r in rows
             if r["model"] == "new" and r["benchmark"] == "x" and r["category"] != "api_error"]
    med_trial = float(np.median([v for v in trial if v is not None]))
    items = _per_item(rows, "prompt")
    med_item = float(np.median([v for (m, b, _), v in items.items() if m == "old" and b == "y"]))
    tot = _per_item(rows, "total")
    ratios = [tot[("new", b, i)] / tot[("old", b, i)] for (m, b, i) in tot
              if m == "old" and ("new", b, i) in tot and tot[("old", b, i)] > 0]
    pooled = float(np.median(ratios))
    return med_trial, med_item, pooled


def _claims(med_trial, med_item, pooled, wrong):
    return f"""
[trials]
study = ["t.jsonl"]

[[claims]]
id = "med-trial"
metric = "costs.median_tokens"
trials = "study"
model = "new"
benchmark = "x"
kind = "completion"
value = "{med_trial:.1f}"
unit = "ratio"

[[claims]]
id = "med-item"
metric = "costs.median_tokens"
trials = "study"
model = "old"
benchmark = "y"
kind = "prompt"
per = "item"
value = "{med_item:.2f}"
unit = "ratio"

[[claims]]
id = "ratio-pooled"
metric = "costs.edge_median_ratio"
trials = "study"
edge = "old:new"
kind = "total"
value = "{pooled:.3f}"
unit = "ratio"

[[claims]]
id = "ratio-wrong"
metric = "costs.edge_median_ratio"
trials = "study"
edge = "old:new"
kind = "total"
value = "{wrong:.2f}"
unit = "ratio"
"""


def _verify(tmp_path, rows):
    write_jsonl(rows, tmp_path / "t.jsonl")
    med_trial, med_item, pooled = _expected(_rows())
    (tmp_path / "c.toml").write_text(_claims(med_trial, med_item, pooled, pooled + 0.2), encoding="utf-8")
    r = runner.invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path), "-f", "json",
                            "--date", "2026-01-01"])
    return r, (med_trial, med_item, pooled)


def test_printed_cost_figures_are_matched_against_numpy(tmp_path):
    r, (med_trial, med_item, pooled) = _verify(tmp_path, _rows())
    assert r.exit_code == 1, r.output
    got = {c["id"]: c for c in json.loads(r.stdout)["trials"]["claims"]}
    assert {k: c["verdict"] for k, c in got.items()} == {
        "med-trial": "match", "med-item": "match", "ratio-pooled": "match", "ratio-wrong": "mismatch"}
    assert got["med-trial"]["computed"] == med_trial
    assert got["med-item"]["computed"] == pytest.approx(med_item, rel=1e-12)
    assert got["ratio-pooled"]["computed"] == pytest.approx(pooled, rel=1e-12)
    assert got["med-item"]["options"] == {"kind": "prompt", "per": "item"}
    assert got["ratio-pooled"]["options"] == {"kind": "total"}


def test_a_table_without_usage_makes_cost_claims_not_computable_with_the_reason(tmp_path):
    r, _ = _verify(tmp_path, _rows(usage=False))
    assert r.exit_code == 0, r.output  # not computable is no failure
    claims = json.loads(r.stdout)["trials"]["claims"]
    assert {c["verdict"] for c in claims} == {"not_computable"}
    assert all("no non-error trial reports token usage" in c["why"] for c in claims)


def test_cost_fields_are_checked_by_claim_id():
    data = {"trials": {"s": ["t.jsonl"]}, "claims": [
        {"id": "a", "metric": "costs.median_tokens", "trials": "s", "model": "m", "benchmark": "b",
         "value": "3", "unit": "ratio", "per": "run"},
        {"id": "b", "metric": "costs.edge_median_ratio", "trials": "s", "edge": "m:n", "kind": "tokens",
         "value": "3", "unit": "percent", "per": "item"},
    ]}
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    msg = str(info.value)
    for line in ("claim 'a': missing field 'kind' (metric 'costs.median_tokens' needs it: "
                 "prompt, completion, reasoning or total)",
                 "claim 'a': per must be trial or item, got 'run'",
                 "claim 'b': kind must be one of prompt, completion, reasoning, total, got 'tokens'",
                 "claim 'b': unit 'percent' does not fit metric 'costs.edge_median_ratio'; use ratio",
                 "claim 'b': unknown field 'per'"):
        assert line in msg, (line, msg)


@pytest.mark.parametrize("more", [[], ["--replication-archive", "other=a.jsonl"],
                                  ["--replication", "other=t.jsonl"]], ids=["alone", "archive", "unknown"])
def test_a_cost_claim_is_not_replicated_against_a_fresh_collection(tmp_path, more):
    """Named first, before what else is wrong with the fresh collections' names."""
    rows = _rows()
    write_jsonl(rows, tmp_path / "t.jsonl")
    (tmp_path / "c.toml").write_text(_claims(*_expected(rows), 1.0), encoding="utf-8")
    r = runner.invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path),
                            "--replication", f"study={tmp_path / 't.jsonl'}", *more])
    assert r.exit_code == 2
    assert "med-trial, med-item, ratio-pooled, ratio-wrong name a figure a fresh collection does not" in r.output
