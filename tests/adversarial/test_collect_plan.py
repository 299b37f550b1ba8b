"""Issue 30, items 7 and 21: `collect --dry-run` plans any K without listing it, and checks the items' scorers
before a single request could be paid for."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from dataclasses import replace

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.config import load_config, load_items
from replicate.collect.plan import estimate_prompt_tokens, make_plan, phase_order
from replicate.errors import UsageError
from support.paths import ROOT

FIX = ROOT / "fixtures" / "collect"


def _limited() -> None:  # before the fix a K of 1e9 fills memory: stop the child at 2 GB
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_a_dry_run_with_k_of_a_billion_answers_at_once(tmp_path):
    p = subprocess.run([sys.executable, "-m", "replicate", "collect", str(FIX / "config.toml"), "--items",
                        str(FIX / "items.jsonl"), "--archive", str(tmp_path / "a.jsonl"), "--dry-run",
                        "--k", str(10**9), "-f", "json"], capture_output=True, text=True, timeout=60,
                       preexec_fn=_limited)
    assert p.returncode == 0, p.stderr[-2000:]
    plan = json.loads(p.stdout)
    items = load_items(FIX / "items.jsonl")
    tokens = sum(estimate_prompt_tokens(it) for it in items)
    assert plan["requests"] == 2 * len(items) * 10**9
    assert [ph["est_prompt_tokens"] for ph in plan["phases"]] == [10**9 * tokens] * 2


def test_the_counted_plan_equals_the_listed_one_on_a_partial_archive():
    cfg = replace(load_config(FIX / "config.toml"), k=3)
    items = load_items(FIX / "items.jsonl")
    order = phase_order(items, "sim-a", k=3, seed=cfg.seed)
    done = {("sim-a", i, t) for i, t in order[:17]} | {("sim-b", items[0].id, 2), ("sim-b", "gone", 0),
                                                         ("sim-c", items[0].id, 0), ("sim-a", items[1].id, 7)}
    plan = make_plan(cfg, items, done=done)
    by_id = {it.id: estimate_prompt_tokens(it) for it in items}
    for ph in plan.phases:  # the plain loop: every (item, trial) of the phase not in the archive
        todo = [(it.id, t) for it in items for t in range(3) if (ph.model, it.id, t) not in done]
        assert (ph.requests, ph.already_done, ph.est_prompt_tokens) == (
            len(todo), len(items) * 3 - len(todo), sum(by_id[i] for i, _ in todo))
    assert [ph.already_done for ph in plan.phases] == [17, 1]


def test_a_real_run_of_a_phase_too_large_to_hold_is_refused():
    items = load_items(FIX / "items.jsonl")
    with pytest.raises(UsageError, match=r"20 items x k=1,000,000,000 = 20,000,000,000 requests is more than"):
        phase_order(items, "m", k=10**9, seed=0)


@pytest.mark.parametrize("dry", [True, False])
def test_an_unknown_scorer_is_refused_before_anything_is_sent(tmp_path, dry):
    lines = (FIX / "items.jsonl").read_bytes().splitlines(keepends=True)
    bad = orjson.loads(lines[2])
    bad["scorer"] = "no-such-scorer@1"
    items = tmp_path / "items.jsonl"
    items.write_bytes(b"".join(lines[:2]) + orjson.dumps(bad) + b"\n" + b"".join(lines[3:]))
    cfg = tmp_path / "config.toml"
    cfg.write_text((FIX / "config.toml").read_text().replace("127.0.0.1:8765", "127.0.0.1:9"))
    res = CliRunner().invoke(app, ["collect", str(cfg), "--items", str(items), "--archive", str(tmp_path / "a.jsonl"),
                                   *(["--dry-run"] if dry else [])], env={"SIM_API_KEY": "x" * 12})
    assert res.exit_code == 2, res.output
    assert f"Error: {items}:3: item {bad['id']!r}: unknown scorer 'no-such-scorer@1'" in res.stderr
    assert not (tmp_path / "a.jsonl").exists()
