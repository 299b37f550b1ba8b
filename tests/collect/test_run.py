"""Collections over real HTTP against the simulated endpoint on 127.0.0.1."""

from __future__ import annotations

import fcntl
import io
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import ArchiveLock, lock_path, read_archive
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import CollectionStopped, Progress, collect
from replicate.collect.simserver import SimConfig, SimModel, load_sim_config, start_sim_server
from replicate.errors import BadInput, UsageError

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
KEY = "sk-test-PLANTED-7f3a9c"  # must never appear in any output
ENV = "REPLICATE_TEST_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)


@pytest.fixture
def items():
    return load_items(FIX / "items.jsonl")


def sim_config(**faults) -> SimConfig:
    base = load_sim_config(FIX / "sim.toml")
    return replace(base, hang_seconds=1.0, retry_after=0.01,
                   faults=MappingProxyType(faults) if faults else base.faults)


@pytest.fixture
def server():
    srv = start_sim_server(sim_config(), api_key=KEY)
    yield srv
    srv.stop()


def config_for(url: str, **over):
    cfg = load_config(FIX / "config.toml")
    c = dict(base_url=url, timeout=0.3, api_key_env=ENV, concurrency=6)
    c.update(over)
    cfg = replace(cfg, **{k: v for k, v in c.items() if k != "backoff"})
    return replace(cfg, retry=replace(cfg.retry, backoff_base=0.001, backoff_max=0.01))


def trial_records(path):
    return [r for _, r in read_archive(path).records]


def test_full_collection_with_faults(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    err = io.StringIO()
    s = collect(config_for(server.url), items, arch, progress=Progress(err, tty=False, interval=0))
    recs = trial_records(arch)
    per = Counter((r["model"], r["item"]) for r in recs)
    assert set(per.values()) == {5} and len(per) == 40
    assert len({(r["model"], r["item"], r["trial"]) for r in recs}) == 200
    # faults were injected and retried, counted by kind
    assert s.retries == dict(sum((Counter(r["retries"]) for r in recs), Counter()))
    assert {"http_429", "http_500"} <= set(s.retries)
    assert s.requests_sent == sum(r["attempts"] for r in recs) == 200 + sum(s.retries.values())
    # q13 is "too long" for the sim: a request-specific 400, recorded as api_error with the message
    errs = [r for r in recs if r["error_kind"]]
    assert {r["item"] for r in errs} == {"q13"} and len(errs) == 10
    assert all(r["error_kind"] == "http_400" and "maximum context length" in r["error_message"] for r in errs)
    assert s.api_errors == 10
    ok = [r for r in recs if not r["error_kind"]]
    assert {"text", "finish_reason", "refusal", "usage", "latency_s", "attempts", "params_hash", "ts"} <= set(ok[0])
    assert {r["finish_reason"] for r in ok} >= {"stop"}
    assert sum(s.tokens["sim-b"].values()) > 0 and s.tokens["sim-b"]["reasoning_tokens"] == 12 * sum(
        1 for r in ok if r["model"] == "sim-b")
    # phases in order: every sim-a record precedes every sim-b record
    models = [r["model"] for r in recs]
    assert models == sorted(models)
    assert "phase sim-a: 100 requests to send" in err.getvalue()


def test_outcomes_do_not_depend_on_concurrency(items, tmp_path):
    faults = dict(rate_429=0.05, rate_500=0.05, rate_drop=0.03, rate_malformed=0.03, rate_truncate=0.05,
                  rate_refusal=0.05, rate_no_answer=0.05)

    # No hang among these faults, so a long client timeout: with 0.3 s a loaded machine timed out a
    # fault-free answer now and then, and the retry drew the next answer (the server counts every request).
    def run(conc, name):
        with start_sim_server(sim_config(**faults), api_key=KEY) as srv:
            collect(config_for(srv.url, concurrency=conc, timeout=30.0), items[:10], tmp_path / name)
        return Counter((r["model"], r["item"], r["text"], r["refusal"], r["finish_reason"])
                       for r in trial_records(tmp_path / name))

    assert run(1, "one.jsonl") == run(12, "twelve.jsonl")


def test_resume_is_noop_when_complete_and_respects_seeded_order(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = config_for(server.url)
    collect(cfg, items, arch)
    before = arch.read_bytes()
    s = collect(cfg, items, arch)
    assert s.trials_recorded == 0 and s.already_done == 200 and s.resumed
    after = arch.read_bytes()
    assert after.startswith(before) and after[len(before):].count(b"\n") == 1  # only the resume record
    assert orjson.loads(after[len(before):])["type"] == "resume"


def test_torn_last_line_is_discarded_and_reported(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = config_for(server.url, k=2)
    collect(cfg, items, arch)
    lines = arch.read_bytes().splitlines(keepends=True)
    # drop the last two records, and leave half of one as a torn line
    torn = lines[-2][: len(lines[-2]) // 2]
    arch.write_bytes(b"".join(lines[:-2]) + torn)
    err = io.StringIO()
    s = collect(cfg, items, arch, progress=Progress(err, tty=False))
    assert s.torn_bytes_discarded == len(torn)
    assert f"discarded a torn last line ({len(torn)} bytes)" in err.getvalue()
    assert s.trials_recorded == 2
    recs = trial_records(arch)
    assert len(recs) == 80 and read_archive(arch).torn_bytes == 0


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(k=6), r"changed k: 5 -> 6"),
        (dict(models=("sim-b", "sim-a")), r"changed models: \['sim-a', 'sim-b'\] -> \['sim-b', 'sim-a'\]"),
        (dict(params=MappingProxyType({"reasoning_effort": "high", "temperature": 0})),
         r"changed params: reasoning_effort: 'medium' -> 'high'; temperature added \(0\)"),
    ],
)
def test_changed_config_is_refused(server, items, tmp_path, change, message):
    arch = tmp_path / "a.jsonl"
    cfg = config_for(server.url, k=5)
    collect(cfg.with_overrides(models=["sim-a"]) if "models" not in change else cfg, items[:2], arch)
    if "models" not in change:
        cfg = cfg.with_overrides(models=["sim-a"])
    size = arch.stat().st_size
    with pytest.raises(UsageError, match=r"refusing to resume\.\n" + message):
        collect(replace(cfg, **change), items[:2], arch)
    assert arch.stat().st_size == size


def test_changed_items_are_refused(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = config_for(server.url, k=1)
    collect(cfg, items[:3], arch)
    other = (items[0], replace(items[1], messages=({"role": "user", "content": "changed"},)), items[4])
    with pytest.raises(UsageError, match=r"changed items: 1 added \(q05\); 1 removed \(q03\); "
                                          r"1 with other messages \(q02\)"):
        collect(cfg, other, arch)


def test_changed_operational_settings_are_allowed(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = config_for(server.url, k=1)
    collect(cfg, items[:3], arch)
    s = collect(config_for(server.url, k=1, concurrency=2, timeout=0.5, seed=99), items[:3], arch)
    assert s.resumed and s.trials_recorded == 0
    # the resume records the operational settings it ran with; the header keeps the first run's
    c = read_archive(arch)
    assert c.header["config"]["collection"]["concurrency"] == 6 and c.header["seed"] == 20260730
    (res,) = c.resumes
    assert res["config"]["collection"]["concurrency"] == 2 and res["config"]["collection"]["timeout"] == 0.5
    assert res["seed"] == 99 and res["already_done"] == 6 and res["torn_bytes_discarded"] == 0
    assert res["config"]["endpoint"] == {"base_url": server.url, "api_key_env": ENV}


def test_records_outside_the_collection_are_bad_input(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = config_for(server.url, k=1, models=("sim-a",))
    collect(cfg, items[:2], arch)
    lines = arch.read_bytes().splitlines(keepends=True)
    rec = orjson.loads(lines[1])
    arch.write_bytes(lines[0] + orjson.dumps({**rec, "trial": 1}) + b"\n")
    with pytest.raises(BadInput, match=r"a\.jsonl:2: trial \('sim-a', 'q0[12]', 1\) is not part of this collection "
                                       r"\(models sim-a; k=1; 2 items\)"):
        collect(cfg, items[:2], arch)
    arch.write_bytes(lines[0] + orjson.dumps({**rec, "trial": 0.5}) + b"\n")
    with pytest.raises(BadInput, match=r"a\.jsonl:2: a trial record needs model, item and trial \(an integer >= 0\)"):
        read_archive(arch)


def test_lock_file_does_not_outlive_the_run(tmp_path):
    arch = tmp_path / "a.jsonl"
    with ArchiveLock(arch):
        assert lock_path(arch).read_text() == f"{os.getpid()}\n"
    assert not lock_path(arch).exists()
    lock_path(arch).write_text("12345\n")  # left behind by a collector killed with -9: no lock held
    with ArchiveLock(arch):
        assert lock_path(arch).read_text() == f"{os.getpid()}\n"
    assert not lock_path(arch).exists()


def test_lock_taken_on_a_removed_file_is_taken_again(tmp_path, monkeypatch):
    # The holder removes the file as it lets go; a second collector that opened the old
    # file just before must not count its lock on that removed file as the lock.
    arch = tmp_path / "a.jsonl"
    import replicate.collect.archive as archive_mod

    real_flock, calls = archive_mod.fcntl.flock, []

    def flock(fd, op):
        real_flock(fd, op)
        if op & fcntl.LOCK_EX and not calls:
            calls.append(fd)
            os.unlink(lock_path(arch))  # the previous holder finished in between

    monkeypatch.setattr(archive_mod.fcntl, "flock", flock)
    lock = ArchiveLock(arch).acquire()
    assert os.fstat(lock._fd).st_ino == os.stat(lock_path(arch)).st_ino
    lock.release()


def test_lock_refuses_second_collector(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with ArchiveLock(arch):
        with pytest.raises(UsageError, match=r"another collector is writing a\.jsonl \(it holds the lock "):
            collect(config_for(server.url), items, arch)
    assert not arch.exists()


def test_wrong_key_stops_cleanly_and_records_nothing(server, items, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, "sk-wrong-key-123")
    arch = tmp_path / "a.jsonl"
    with pytest.raises(CollectionStopped, match=r"^collection stopped: HTTP 401: Incorrect API key provided: \[API key\]\. "
                       r"\[invalid_api_key\] \(model sim-a, http://127\.0\.0\.1:\d+/v1/chat/completions\) — "
                       r"nothing was recorded for that request; 0 trials recorded") as ei:
        collect(config_for(server.url), items, arch)
    assert len(str(ei.value).splitlines()) == 1 and "sk-wrong-key-123" not in str(ei.value)
    assert ei.value.summary.trials_recorded == 0
    assert not lock_path(arch).exists()  # a stopped run leaves no lock file either
    c = read_archive(arch)
    assert c.header is not None and c.records == ()
    assert server.stats["401"] >= 1 and server.stats["ok"] == 0


def test_unknown_model_stops_after_first_phase_then_resumes_after_fix(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    sim = replace(sim_config(), faults=MappingProxyType({}))
    with start_sim_server(sim, api_key=KEY) as srv:
        cfg = config_for(srv.url, models=("sim-a", "sim-z"), k=2)
        with pytest.raises(CollectionStopped, match=r"HTTP 404: The model `sim-z` does not exist"):
            collect(cfg, items, arch)
    recs = trial_records(arch)
    assert Counter(r["model"] for r in recs) == {"sim-a": 40}
    fixed = replace(sim, models=MappingProxyType({**sim.models, "sim-z": SimModel("sim-z", 0.3)}))
    with start_sim_server(fixed, api_key=KEY) as srv:
        s = collect(replace(cfg, base_url=srv.url), items, arch)
    assert s.trials_recorded == 40 and s.already_done == 40
    assert Counter(r["model"] for r in trial_records(arch)) == {"sim-a": 40, "sim-z": 40}


def test_missing_key_variable_is_named_not_leaked(server, items, tmp_path, monkeypatch):
    monkeypatch.delenv(ENV)
    with pytest.raises(CollectionStopped, match=f"the environment variable {ENV} \\(api_key_env\\) is not set"):
        collect(config_for(server.url), items, tmp_path / "a.jsonl")


def test_retry_cap_records_api_error(items, tmp_path):
    with start_sim_server(sim_config(rate_500=1.0), api_key=KEY) as srv:
        cfg = config_for(srv.url, k=1, models=("sim-a",))
        cfg = replace(cfg, retry=replace(cfg.retry, max_retries=2))
        s = collect(cfg, items[:2], tmp_path / "a.jsonl")
    recs = trial_records(tmp_path / "a.jsonl")
    assert [r["attempts"] for r in recs] == [3, 3]
    assert all(r["error_kind"] == "http_500" and r["error_message"].startswith(
        "gave up after 3 attempts (max_retries=2); last: HTTP 500: The server had an error") for r in recs)
    assert s.retries == {"http_500": 4}


def test_hangs_past_timeout_are_retried(items, tmp_path):
    with start_sim_server(sim_config(rate_hang=0.5), api_key=KEY) as srv:
        s = collect(config_for(srv.url, k=2, models=("sim-a",), timeout=0.2), items[:4], tmp_path / "a.jsonl")
    assert s.retries.get("timeout", 0) >= 1 and s.trials_recorded == 8 and s.api_errors == 0


def test_api_key_appears_nowhere(server, items, tmp_path, monkeypatch):
    arch = tmp_path / "a.jsonl"
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", server.url)
                        .replace('"SIM_API_KEY"', f'"{ENV}"').replace("timeout = 2.0", "timeout = 0.3")
                        .replace("backoff_base = 0.05", "backoff_base = 0.001"))
    runner = CliRunner()
    r1 = runner.invoke(app, ["collect", str(cfg_path), "--items", str(FIX / "items.jsonl"), "--archive", str(arch)])
    assert r1.exit_code == 0, r1.stderr
    r2 = runner.invoke(app, ["score", str(arch), "--items", str(FIX / "items.jsonl"), "--out", str(tmp_path / "t.csv"),
                             "--format", "json"])
    assert r2.exit_code == 0, r2.stderr
    monkeypatch.setenv(ENV, KEY + "-but-wrong")  # a failing run: the error message must not leak either key
    r3 = runner.invoke(app, ["collect", str(cfg_path), "--items", str(FIX / "items.jsonl"),
                             "--archive", str(tmp_path / "b.jsonl")])
    assert r3.exit_code == 2 and r3.stderr.count("Error: collection stopped: HTTP 401") == 1
    outputs = [r.stdout + r.stderr for r in (r1, r2, r3)]
    files = [p.read_bytes().decode() for p in tmp_path.iterdir() if p.is_file()]
    assert {p.name for p in tmp_path.iterdir() if p.is_file()} >= {"c.toml", "a.jsonl", "t.csv"}
    for text in outputs + files:
        assert KEY not in text


def test_collect_cli_summary_and_dry_run(server, tmp_path):
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", server.url)
                        .replace('"SIM_API_KEY"', f'"{ENV}"').replace("timeout = 2.0", "timeout = 0.3"))
    arch = tmp_path / "a.jsonl"
    runner = CliRunner()
    args = ["collect", str(cfg_path), "--items", str(FIX / "items.jsonl"), "--archive", str(arch), "--k", "1"]
    dry = runner.invoke(app, args + ["--dry-run"])
    assert dry.exit_code == 0 and not arch.exists()
    assert dry.stdout.splitlines()[0] == (
        "Plan (dry run, nothing sent): 20 items x K=1 per model, seed 20260730, concurrency 8, "
        "params sha256:eb946d32405d")
    assert "total requests: 40" in dry.stdout and server.stats["ok"] == 0
    run = runner.invoke(app, args + ["--format", "json", "--no-progress"])
    assert run.exit_code == 0, run.stderr
    summary = orjson.loads(run.stdout)
    assert summary["trials_recorded"] == 40 and summary["api_errors"] == 2 and run.stderr == ""
    dry2 = runner.invoke(app, args + ["--dry-run", "--format", "json"])
    assert [p["already_done"] for p in orjson.loads(dry2.stdout)["phases"]] == [20, 20]


def test_kill_9_mid_run_then_resume(items, tmp_path):
    sim = replace(sim_config(), latency=0.01)
    with start_sim_server(sim, api_key=KEY) as srv:
        cfg_path = tmp_path / "c.toml"
        cfg_path.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", srv.url)
                            .replace('"SIM_API_KEY"', f'"{ENV}"').replace("timeout = 2.0", "timeout = 0.3")
                            .replace("concurrency = 8", "concurrency = 4")
                            .replace("backoff_base = 0.05", "backoff_base = 0.001"))
        arch = tmp_path / "a.jsonl"
        proc = subprocess.Popen(
            [sys.executable, "-m", "replicate", "collect", str(cfg_path), "--items", str(FIX / "items.jsonl"),
             "--archive", str(arch), "--no-progress"],
            env={**os.environ, ENV: KEY}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if arch.exists() and arch.read_bytes().count(b"\n") > 60:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        partial = read_archive(arch)
        assert 60 <= len(partial.records) < 200
        s = collect(config_for(srv.url), items, arch)
    recs = trial_records(arch)
    assert s.trials_recorded == 200 - len(partial.records)
    assert len(recs) == 200
    triples = Counter((r["model"], r["item"], r["trial"]) for r in recs)
    assert max(triples.values()) == 1
    assert set(Counter((m, i) for m, i, _ in triples).values()) == {5}
