"""Provenance and reasoning of every trial, over real HTTP against sim-server: the response's model,
system_fingerprint, id and created are archived; reasoning from message.reasoning, reasoning_content
and content lists is kept and never scored; a snapshot change mid-run is flagged by score and items,
and items --by-snapshot splits on it."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from replicate.collect.config import load_config, load_items
from replicate.collect.response import read_message
from replicate.collect.runner import collect
from replicate.collect.simserver import REASONING_TEXT, SimModel, load_sim_config, start_sim_server
from replicate.scoring.pipeline import score_archive_to_file

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
ENV = "REPLICATE_TEST_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(ENV, "sk-test-x")


@pytest.fixture(scope="module")
def items():
    return load_items(FIX / "items.jsonl")


def sim(models, faults=None):
    base = load_sim_config(FIX / "sim.toml")
    return replace(base, models=MappingProxyType({m.name: m for m in models}), too_long=frozenset(),
                   faults=MappingProxyType(faults or {}))


def cfg_for(url, **over):
    cfg = load_config(FIX / "config.toml")
    return replace(cfg, base_url=url, api_key_env=ENV, retry=replace(cfg.retry, backoff_base=0.001), **over)


def records(path):
    return [r for _, r in read_archive(path).records]


@pytest.mark.parametrize("style", ["reasoning", "reasoning_content", "content_list"])
def test_reasoning_is_archived_and_the_answer_scored_from_content(items, tmp_path, style):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim([SimModel("sim-a", p=1.0, reasoning=style, reasoning_tokens=9)])) as srv:
        collect(cfg_for(srv.url, models=("sim-a",), k=1), items[:4], arch)
    recs = records(arch)
    assert len(recs) == 4
    for r in recs:
        assert r["reasoning"] == REASONING_TEXT
        assert r["text"].endswith("Final answer: " + next(str(i.reference) for i in items if i.id == r["item"]))
        assert r["usage"]["reasoning_tokens"] == 9
    rep = score_archive_to_file(arch, FIX / "items.jsonl", None)
    assert rep.counts["sim-a"]["correct"] == 4


def test_reasoning_without_content_is_truncation_at_the_limit_else_format_failure(items, tmp_path):
    rows = {}
    for fault in ("rate_truncate", "rate_reasoning_only"):
        arch = tmp_path / f"{fault}.jsonl"
        with start_sim_server(sim([SimModel("sim-a", reasoning="reasoning_content")], {fault: 1.0})) as srv:
            collect(cfg_for(srv.url, models=("sim-a",), k=1), items[:3], arch)
        recs = records(arch)
        assert all(r["text"] is None and r["reasoning"] == REASONING_TEXT for r in recs)
        out = tmp_path / f"{fault}.trials.jsonl"
        score_archive_to_file(arch, FIX / "items.jsonl", out)
        rows[fault] = Counter(json.loads(x)["category"] for x in out.read_text().splitlines())
    assert rows == {"rate_truncate": {"truncation": 3}, "rate_reasoning_only": {"format_failure": 3}}


def test_response_provenance_is_archived(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    m = SimModel("sim-a", snapshot="sim-a-2026-01-15", fingerprint="fp_abc")
    with start_sim_server(sim([m])) as srv:
        collect(cfg_for(srv.url, models=("sim-a",), k=2, concurrency=1), items[:3], arch)
    recs = records(arch)
    assert {r["response_model"] for r in recs} == {"sim-a-2026-01-15"}
    assert {r["system_fingerprint"] for r in recs} == {"fp_abc"}
    assert len({r["response_id"] for r in recs}) == 6 and all(r["response_id"].startswith("chatcmpl-") for r in recs)
    assert sorted(r["created"] for r in recs) == [1_760_000_000 + n for n in range(6)]


def test_a_snapshot_change_mid_run_is_flagged_by_score_and_items(items, tmp_path):
    arch, trials = tmp_path / "a.jsonl", tmp_path / "t.jsonl"
    swap = SimModel("sim-a", p=0.6, snapshot="sim-a-v1", fingerprint="fp_1", swap_after=30,
                    swap_snapshot="sim-a-v2", swap_fingerprint="fp_2")
    with start_sim_server(sim([swap, SimModel("sim-b", p=0.7, snapshot="sim-b-v1")])) as srv:
        collect(cfg_for(srv.url, k=5), items, arch)
    n = len(items) * 5
    rep = score_archive_to_file(arch, FIX / "items.jsonl", trials)
    assert rep.snapshot_changes == {"sim-a": {"snapshot": {"sim-a-v1": 30, "sim-a-v2": n - 30},
                                              "system_fingerprint": {"fp_1": 30, "fp_2": n - 30}}}
    res = CliRunner().invoke(app, ["score", str(arch), "--items", str(FIX / "items.jsonl"),
                                   "--out", str(tmp_path / "t2.jsonl")])
    assert res.exit_code == 0
    assert (f"snapshot changed: model sim-a was answered by 2 snapshots (sim-a-v1 30, sim-a-v2 {n - 30}) and "
            f"2 fingerprints (fp_1 30, fp_2 {n - 30})") in res.output
    rows = [json.loads(x) for x in trials.read_text().splitlines()]
    assert Counter(r["snapshot"] for r in rows if r["model"] == "sim-b") == {"sim-b-v1": n}

    res = CliRunner().invoke(app, ["items", str(trials), "--edge", "sim-a:sim-b", "--null", "0",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    codes = json.loads(res.stdout)["warnings"]["by_code"]
    assert codes == {"snapshot_changed": 1}
    assert "sim-a-v1 30" in res.stderr

    res = CliRunner().invoke(app, ["items", str(trials), "--by-snapshot", "--edge", "sim-a@sim-a-v1:sim-a@sim-a-v2",
                                   "--null", "0", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    trial_counts = Counter(r["model"] for r in rows)
    assert trial_counts["sim-a"] == n
    assert json.dumps(out).count("sim-a@sim-a-v1") >= 1
    res = CliRunner().invoke(app, ["items", str(trials), "--by-snapshot", "--edge", "sim-a:sim-b", "--null", "0"])
    assert res.exit_code == 2  # sim-a no longer exists once split


def test_split_by_snapshot_counts(tmp_path):
    from replicate.trials.load import read_trials
    from replicate.trials.snapshots import split_by_snapshot

    rows = [{"model": "m", "item": f"i{i}", "trial": t, "benchmark": "b", "category": "correct",
             "snapshot": "s1" if t < 2 else ("s2" if t < 5 else None)} for i in range(3) for t in range(6)]
    rows += [{"model": "n", "item": "i0", "trial": 0, "benchmark": "b", "category": "wrong", "snapshot": "x"}]
    p = tmp_path / "t.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    t = split_by_snapshot(read_trials(p))
    assert Counter(t.models[i] for i in t.model) == {"m@s1": 6, "m@s2": 9, "m@unknown": 3, "n": 1}


@pytest.mark.parametrize("message, expected", [
    ({"content": "Final answer: 3"}, ("Final answer: 3", None)),
    ({"content": None, "reasoning_content": "think"}, (None, "think")),
    ({"content": "a", "reasoning": "r"}, ("a", "r")),
    ({"content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}, ("AB", None)),
    ({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "t1"}]},
                  {"type": "text", "text": "ans"}]}, ("ans", "t1")),
    ({"content": [{"type": "reasoning", "text": "why"}], "reasoning_content": "first"}, (None, "first\nwhy")),
    ({"content": 5}, (None, None)),
])
def test_read_message(message, expected):
    assert read_message(message) == expected
