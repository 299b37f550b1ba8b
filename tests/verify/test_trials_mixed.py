"""One claims file with judge runs and a trials table: one note covers both; the Reproduce block works as
written when the files were not fetched; what the endpoint reported about the model reaches the note."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.trials.fresh import collection_provenance, shared_items
from replicate.trials.load import read_trials
from replicate.verify.claims_file import parse_claims
from replicate.verify.trials_check import check_trials
from support.synth.trials import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"
STUDY = ROOT / "fixtures" / "trials-study"
runner = CliRunner()

TRIAL_CLAIMS = '''
[trials]
study = ["release/trials.jsonl.gz"]

[[claims]]
id = "tr-acc"
metric = "accuracy"
trials = "study"
model = "mini-1"
benchmark = "arith"
value = "44.3"
unit = "percent"

[[claims]]
id = "tr-plus"
metric = "items.p_plus"
trials = "study"
edge = "mini-2:mini-3"
benchmark = "arith"
value = "15.0"
unit = "percent"
'''


def _mixed_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(EXAMPLE, root)
    (root / "release").mkdir()
    shutil.copy(STUDY / TRIAL_CLAIMS.split('"')[1], root / "release" / "trials.jsonl.gz")
    text = (EXAMPLE / "claims.toml").read_text()
    # the study names a release, but these files were not fetched: no fetch command may be given
    text = text.replace('parser = "umbrela-fallback@1"', 'parser = "umbrela-fallback@1"\n'
                        'release = "org/alpha"\ncommit = "0123456789abcdef0123456789abcdef01234567"', 1)
    (root / "claims.toml").write_text(text.replace("\n[runs]", TRIAL_CLAIMS + "\n[runs]", 1))
    return root


def test_one_note_covers_judge_and_trial_claims(tmp_path):
    root = _mixed_root(tmp_path)
    note = tmp_path / "note.md"
    r = runner.invoke(app, ["verify", str(root / "claims.toml"), "--root", str(root), "--out", str(note),
                            "--no-plots", "--date", "2026-12-02"])
    assert r.exit_code == 1  # the example's own misprint, and the invented P+
    assert "tr-plus" in r.stderr and "tr-acc" not in r.stderr
    text = note.read_text()
    for heading in ("## Claims", "## Trial claims", "### Settings", "## Edges", "## Trials tables", "## Sources"):
        assert f"\n{heading}\n" in text, heading
    summary = re.search(r"## Summary\n\n\*\*(.*?)\.\*\*", text, re.S)[1].replace("\n", " ")
    assert summary.endswith("; 1 of 2 recomputed trial claims match")
    assert "Check failed: 1 trial claim(s) mismatch or do not replicate: tr-plus." in text
    block = re.search(r"## Reproduce\n\n```sh\n(.*?)```", text, re.S)[1]
    assert "replicate fetch" not in block and block.startswith("replicate verify ")
    out = json.loads(runner.invoke(app, ["verify", str(root / "claims.toml"), "--root", str(root), "-f", "json",
                                         "--no-plots"]).stdout)
    assert out["ok"] is False and {c["mode"] for c in out["claims"]} == {"recomputed"}
    assert [c["verdict"] for c in out["trials"]["claims"]] == ["match", "mismatch"]


def test_reported_snapshots_are_listed_per_model(tmp_path):
    rows = [{"model": m, "item": "i", "trial": t, "benchmark": "B", "category": "correct",
             "system_fingerprint": f"fp-{m}-{t % 2}"} for m in ("a", "b") for t in range(3)]
    write_jsonl(rows, tmp_path / "t.jsonl")
    table = read_trials(tmp_path / "t.jsonl")
    _, diff = shared_items(table, table)
    prov = collection_provenance("s", table, diff, None)
    assert prov.snapshots == {"system_fingerprint": {"a": ["fp-a-0", "fp-a-1"], "b": ["fp-b-0", "fp-b-1"]}}
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": [
        {"id": "x", "metric": "accuracy", "trials": "s", "model": "a", "benchmark": "B", "value": "100",
         "unit": "percent"}]}, path="c.toml")
    tv = check_trials(cf.trials, {"s": table}, {"s": table})
    assert tv.results[0].verdict == "replicates"
    from replicate.verify.sources.trials import trial_sections

    assert "| Reported `system_fingerprint` | a: fp-a-0, fp-a-1; b: fp-b-0, fp-b-1" in "\n".join(trial_sections(tv))


def test_a_fetched_trials_table_is_fetched_again_in_the_reproduce_block(tmp_path):
    import hashlib

    rel = tmp_path / "release"
    (rel / "trials").mkdir(parents=True)
    data = (STUDY / "release" / "trials.jsonl.gz").read_bytes()
    (rel / "trials" / "t.jsonl.gz").write_bytes(data)
    commit = "ab" * 20
    (rel / "replicate-manifest.json").write_text(json.dumps({
        "schema_version": 1, "source": "org/study", "commit": commit, "via": "http",
        "fetched_at": "2026-01-01T00:00:00Z",
        "files": [{"path": "trials/t.jsonl.gz", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}],
        "repository": {"licence": "MIT", "default_branch": "main"}}))
    claims = TRIAL_CLAIMS.replace("release/trials.jsonl.gz", "trials/t.jsonl.gz")
    (tmp_path / "claims.toml").write_text(claims)
    note = tmp_path / "note.md"
    r = runner.invoke(app, ["verify", str(tmp_path / "claims.toml"), "--root", str(rel), "--out", str(note),
                            "--no-fail", "--date", "2026-12-02"])
    assert r.exit_code == 0, r.output
    text = note.read_text()
    assert f"org/study at commit `{commit}`, fetched into `{rel}`" in text
    assert "| `trials/t.jsonl.gz` |" in text and "matches manifest" in text
    assert f"replicate fetch org/study --rev {commit} --include 'trials/**' --dest {rel}\n" in text


def test_engine_warnings_reach_the_note(tmp_path):
    # item q2 has only API errors for model b: the engine leaves it out of the cell and says so
    # (a's q2 is wrong once, so a's accuracy interval over items is not of zero width, another warning)
    rows = [{"model": m, "item": i, "trial": t, "benchmark": "B",
             "category": "api_error" if (m, i) == ("b", "q2") else "wrong" if (m, i, t) == ("a", "q2", 0)
             else "correct"}
            for m in ("a", "b") for i in ("q1", "q2") for t in range(3)]
    write_jsonl(rows, tmp_path / "t.jsonl")
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": [
        {"id": "x", "metric": "items.n", "trials": "s", "edge": "a:b", "benchmark": "B", "value": "1",
         "unit": "count"}]}, path="c.toml")
    tv = check_trials(cf.trials, {"s": read_trials(tmp_path / "t.jsonl")})
    assert tv.results[0].verdict == "match"
    from replicate.verify.sources.trials import trial_sections

    text = "\n".join(trial_sections(tv))
    assert "Warnings while reading and computing the trials tables: 1 (items-excluded: 1)." in text
    assert "1 with only API errors on a side" in text
