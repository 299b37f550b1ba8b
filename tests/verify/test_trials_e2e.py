"""The worked trials example end to end: the committed study is the generator's output; `verify` recomputes
it; a fresh collection from the simulated endpoint over real HTTP (`collect` + `score`) is checked with
`verify --replication`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.synth.trials_study import PLANTED, write_study

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "trials-study"
KEY = "sk-test-verify-trials-doc"  # the key support/trials_study.py collects with
runner = CliRunner()


def test_committed_study_is_exactly_the_generators_output(tmp_path):
    written = write_study(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(
        p.relative_to(FIX).as_posix() for p in FIX.rglob("*") if p.is_file())
    for p in written:
        assert p.read_bytes() == (FIX / p.relative_to(tmp_path)).read_bytes(), p.name


@pytest.fixture(scope="module")
def fresh(fresh_trials_study):
    """The documented collect + score, over real HTTP from the in-process sim server (support/trials_study.py)."""
    return fresh_trials_study / "fresh" / "trials.jsonl", fresh_trials_study / "fresh" / "archive.jsonl"


def _verify(*extra: str) -> tuple[int, dict]:
    r = runner.invoke(app, ["verify", str(FIX / "claims.toml"), "--root", str(FIX), "-f", "json", *extra])
    return r.exit_code, json.loads(r.stdout)


def test_recomputed_the_planted_claims_mismatch_and_the_rest_match():
    code, out = _verify()
    assert code == 1
    verdicts = {c["id"]: c["verdict"] for c in out["trials"]["claims"]}
    assert {k for k, v in verdicts.items() if v != "match"} == set(PLANTED)
    assert all(c["mode"] == "recomputed" for c in out["trials"]["claims"])


def test_replicated_the_true_change_replicates_and_the_invented_ones_do_not(fresh, tmp_path):
    trials, archive = fresh
    code, out = _verify("--replication", f"study={trials}", "--replication-archive", f"study={archive}")
    assert code == 1
    c = {x["id"]: x for x in out["trials"]["claims"]}
    assert all(x["mode"] == "replicated" for x in c.values())
    # mini-2 -> mini-3 truly does not change: its Pchg of 0 replicates; the printed 15% P+ does not
    assert c["t3-chg-mini-3-arith"]["verdict"] == "replicates"
    assert c["t3-plus-mini-3-arith"]["verdict"] == "does not replicate"
    # an accuracy printed 15 points too high does not replicate; the correctly printed ones do
    assert c["t1-acc-mini-2-arith"]["verdict"] == "does not replicate"
    assert c["t1-acc-mini-2-arith"]["p_value"] < 1e-4
    assert c["t1-acc-mini-1-arith"]["verdict"] == "replicates"
    # the true change mini-1 -> mini-2: its mean shift replicates, and the intervals hold the truth
    assert c["t2-delta-arith"]["verdict"] == "replicates"
    for x in c.values():
        if x["interval"] is not None:
            assert x["interval"]["low"] <= x["interval"]["high"]
    # a count printed off by one is a typo, not a failed replication
    assert c["t3-regressed-logic"]["verdict"] != "does not replicate"
    rep = out["trials"]["replications"][0]
    assert rep["provenance"]["items"] == {"shared_items": 180, "only_in_release": {}, "only_in_fresh": {}}
    assert rep["provenance"]["archive"]["config"]["collection"]["models"] == ["mini-1", "mini-2", "mini-3"]
    assert KEY not in json.dumps(out)
    changed = {(a["source"], a["target"], a["benchmark"]): a for a in rep["agreement"]}
    assert changed[("mini-1", "mini-2", "arith")]["changed_again"] > 0
    assert changed[("mini-2", "mini-3", "arith")]["significant_in_release"] == 0
    note = tmp_path / "note.md"
    r = runner.invoke(app, ["verify", str(FIX / "claims.toml"), "--root", str(FIX), "--replication",
                            f"study={trials}", "--out", str(note), "--no-fail", "--date", "2026-12-02"])
    assert r.exit_code == 0, r.output
    text = note.read_text()
    assert "## Replication: `study`" in text and "### Item-level agreement" in text
    assert f"--replication study={trials}" in text and "replicate fetch" not in text
