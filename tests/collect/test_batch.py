"""Batch mode over real HTTP against sim-server's Files and Batches endpoints: submit, poll, import; a
collector killed after submitting finds its batch and never submits again; failed, expired and partially
completed batches leave the missing triples for the next run; splitting past the per-batch limits."""

from __future__ import annotations

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
from replicate.collect.archive import read_archive
from replicate.collect.batch import collect_batch, split_lines
from replicate.collect.config import load_config
from replicate.collect.simbatch import SimBatchFaults
from replicate.collect.simserver import load_sim_config, start_sim_server
from replicate.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
ENV = "REPLICATE_TEST_KEY"
KEY = "sk-test-batch-5150"



def sim():
    return replace(load_sim_config(FIX / "sim.toml"), faults=MappingProxyType({}))


def cfg_for(url, **batch):
    cfg = load_config(FIX / "config.toml", base_url=url)
    b = replace(cfg.batch, enabled=True, poll=0.01, **batch)
    return replace(cfg, api_key_env=ENV, batch=b)


def per_pair(arch):
    return Counter((r["model"], r["item"]) for _, r in read_archive(arch).records)


def test_batch_run_records_exactly_k_per_model_and_item(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        srv.batch.faults = SimBatchFaults(polls=2)
        s = collect_batch(cfg_for(srv.url), items, arch)
        assert srv.batch.created == 1
        again = collect_batch(cfg_for(srv.url), items, arch)  # complete: nothing to submit
        assert srv.batch.created == 1 and again.submitted == []
    assert set(per_pair(arch).values()) == {5} and len(per_pair(arch)) == len(items) * 2
    assert s.recorded == len(items) * 10 and s.api_errors == 2 * 5  # q13 is too long: a request-specific 400
    kinds = [b["type"] for b in read_archive(arch).batches]
    assert kinds == ["batch_upload", "batch", "batch_done"]


def test_splits_past_the_line_and_byte_limits(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        s = collect_batch(cfg_for(srv.url, max_lines=40), items, arch)
        assert srv.batch.created == len(s.submitted) == -(-len(items) * 10 // 40)
    assert set(per_pair(arch).values()) == {5}
    chunks = split_lines([b"x" * 10 + b"\n"] * 10, max_lines=100, max_bytes=35)
    assert [len(c) for c in chunks] == [3, 3, 3, 1]


@pytest.mark.parametrize("faults, missing", [
    (SimBatchFaults(fail=True), "all"),
    (SimBatchFaults(expire_after=25), "rest"),
    (SimBatchFaults(partial=0.1), "some"),
])
def test_failed_expired_partial_batches_leave_the_rest_for_the_next_run(items, tmp_path, faults, missing):
    arch = tmp_path / "a.jsonl"
    total = len(items) * 10
    with start_sim_server(sim(), api_key=KEY) as srv:
        srv.batch.faults = faults
        first = collect_batch(cfg_for(srv.url), items, arch)
        got = len(read_archive(arch).records)
        if missing == "all":
            assert got == 0 and first.statuses == {first.submitted[0]: "failed"}
        elif missing == "rest":
            assert got == 25 and list(first.statuses.values()) == ["expired"]
        else:
            assert 0 < total - got <= total // 10 + 1
        assert first.left_missing == total - got
        srv.batch.faults = SimBatchFaults()
        second = collect_batch(cfg_for(srv.url), items, arch)
        assert len(second.submitted) == 1 and srv.batch.created == 2
        lines = srv.batch.files[srv.batch.batches[second.submitted[0]]["input_file_id"]].count(b"\n")
        assert lines == total - got  # only the missing triples are asked again
    assert set(per_pair(arch).values()) == {5}


def test_killed_collector_finds_its_batch_and_never_submits_twice(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        srv.batch.faults = SimBatchFaults(polls=10**6)  # in progress until the test says otherwise
        cfg = tmp_path / "c.toml"
        cfg.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", srv.url)
                       .replace('"SIM_API_KEY"', f'"{ENV}"').replace("k = 5", 'k = 5\nmode = "batch"\nbatch_poll = 0.02'))
        proc = subprocess.Popen([sys.executable, "-m", "replicate.cli.app", "collect", str(cfg), "--items",
                                 str(FIX / "items.jsonl"), "--archive", str(arch)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if arch.exists() and b'"type":"batch"' in arch.read_bytes():
                break
            time.sleep(0.05)
        time.sleep(0.2)  # it is polling now
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert srv.batch.created == 1 and len(read_archive(arch).records) == 0
        srv.batch.faults = SimBatchFaults(polls=1)
        res = CliRunner().invoke(app, ["collect", str(cfg), "--items", str(FIX / "items.jsonl"), "--archive",
                                       str(arch), "--format", "json"])
        assert res.exit_code == 0, res.output
        assert srv.batch.created == 1  # no second submission
    assert set(per_pair(arch).values()) == {5} and len(per_pair(arch)) == len(items) * 2


def test_killed_between_upload_and_create_adopts_or_creates_once(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg = cfg_for(srv.url)
        collect_batch(cfg, items, arch)
        # an archive whose last run died after its upload was recorded: the batch exists on the server
        lines = arch.read_bytes().splitlines(keepends=True)
        head = [x for x in lines if b'"type":"trial"' not in x and b'"type":"batch"' not in x
                and b'"type":"batch_done"' not in x]
        arch.write_bytes(b"".join(head))
        s = collect_batch(cfg, items, arch)
        assert srv.batch.created == 1 and s.submitted == [] and len(s.resumed) == 1
    assert set(per_pair(arch).values()) == {5}


def _cli_cfg(tmp_path, url, extra=""):
    cfg = tmp_path / "c.toml"
    cfg.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", url)
                   .replace('"SIM_API_KEY"', f'"{ENV}"').replace("k = 5", f"k = 5\nbatch_poll = 0.01\n{extra}"))
    return cfg


def test_cli_failed_batch_says_why_and_how_many_are_missing_and_exits_1(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        srv.batch.faults = SimBatchFaults(fail=True)
        cfg = _cli_cfg(tmp_path, srv.url)
        args = ["collect", str(cfg), "--items", str(FIX / "items.jsonl"), "--archive", str(arch), "--batch"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1
        assert "failed (invalid_request: sim: batch failed)" in res.stdout
        assert f"{len(items) * 10} triples are still missing" in res.stderr
        srv.batch.faults = SimBatchFaults()
        res = CliRunner().invoke(app, [*args, "--format", "json"])
        assert res.exit_code == 0, res.output
        out = orjson.loads(res.stdout)
        assert out["missing"] == 0 and out["trials_recorded"] == len(items) * 10 and srv.batch.created == 2
    assert set(per_pair(arch).values()) == {5}


def test_resume_after_a_kill_between_chunks_submits_the_rest_once_and_finishes(items, tmp_path):
    """Killed after the first of several batches was created: one resume waits for that one, submits every
    chunk not yet submitted (no triple twice) and ends with nothing missing."""
    arch = tmp_path / "a.jsonl"
    total = len(items) * 10
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg = cfg_for(srv.url, max_lines=40)
        first = collect_batch(cfg, items, arch)
        bid = first.submitted[0]
        fid = srv.batch.batches[bid]["input_file_id"]
        lines = arch.read_bytes().splitlines(keepends=True)
        quoted = b'"' + fid.encode() + b'"'
        keep = [x for x in lines if b'"type":"header"' in x] + [  # the first batch's upload and create only
            x for x in lines if b'"type":"batch_done"' not in x and b'"type":"trial"' not in x and quoted in x]
        arch.write_bytes(b"".join(keep))
        created = srv.batch.created
        s = collect_batch(cfg, items, arch)
        assert s.resumed == [bid] and srv.batch.created == created + len(s.submitted) == created + 4
        sent = sum(srv.batch.files[srv.batch.batches[b]["input_file_id"]].count(b"\n") for b in s.submitted)
        assert sent == total - 40 and s.recorded == total and s.missing == 0
    assert set(per_pair(arch).values()) == {5} and len(per_pair(arch)) == len(items) * 2


def test_sigkill_between_chunk_submissions_one_resume_finishes(items, tmp_path):
    """A real kill -9 while the second batch is being created (the provider creates it anyway): the resume
    adopts that batch by its input file, submits the chunks never submitted, and finishes in one run.
    The sim holds the second creation until the client is dead, so the kill lands there on any machine."""
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        faults = srv.batch.faults = SimBatchFaults(polls=1, hold_create=2)
        cfg = _cli_cfg(tmp_path, srv.url, "batch_max_lines = 40")
        args = ["collect", str(cfg), "--items", str(FIX / "items.jsonl"), "--archive", str(arch), "--batch"]
        proc = subprocess.Popen([sys.executable, "-m", "replicate.cli.app", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**os.environ})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and srv.batch.create_requests < 2 and proc.poll() is None:
            time.sleep(0.02)
        assert srv.batch.create_requests == 2, proc.communicate(timeout=10)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        faults.release.set()
        while time.monotonic() < deadline and srv.batch.created < 2:  # the provider finishes the create
            time.sleep(0.02)
        book = read_archive(arch).batches
        assert [b["type"] for b in book] == ["batch_upload", "batch", "batch_upload"] and srv.batch.created == 2
        srv.batch.faults = SimBatchFaults(polls=1)
        res = CliRunner().invoke(app, [*args, "--format", "json"])
        assert res.exit_code == 0, res.output
        out = orjson.loads(res.stdout)
        assert len(out["resumed"]) == 2 and len(out["submitted"]) == 3 and srv.batch.created == 5
        assert out["missing"] == 0
    assert set(per_pair(arch).values()) == {5} and len(per_pair(arch)) == len(items) * 2


def test_a_bad_result_line_is_bad_input_naming_the_batch_file_and_line(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg = cfg_for(srv.url)
        first = collect_batch(cfg, items, arch)
        out_id = srv.batch.batches[first.submitted[0]]["output_file_id"]
        rows = srv.batch.files[out_id].splitlines(keepends=True)
        srv.batch.files[out_id] = b"".join([rows[0], b'{"custom_id": "sim-a|q01|0", "resp\n', *rows[1:]])
        arch.write_bytes(b"".join(x for x in arch.read_bytes().splitlines(keepends=True)
                                  if b'"type":"trial"' not in x and b'"type":"batch_done"' not in x))
        with pytest.raises(BadInput) as exc:
            collect_batch(cfg, items, arch)
    assert exc.value.line == 2 and out_id in str(exc.value.path) and "not JSON" in str(exc.value)
    assert len(read_archive(arch).records) == 0  # nothing of that batch recorded


def test_a_model_whose_batch_trials_are_mostly_api_errors_exits_1_naming_it_until_retried(items, tmp_path):
    """As online: every triple recorded, but a model's replies mostly API errors is not a finished collection.
    The summary names the model and its error kinds; --retry-errors against a healthy provider ends it."""
    arch = tmp_path / "a.jsonl"
    args = ["collect", "--items", str(FIX / "items.jsonl"), "--archive", str(arch), "--batch", "--format", "json"]
    n = len(items) * 5
    with start_sim_server(replace(sim(), too_long=frozenset(it.id for it in items)), api_key=KEY) as srv:
        cfg = _cli_cfg(tmp_path, srv.url)
        res = CliRunner().invoke(app, [args[0], str(cfg), *args[1:]])
    assert res.exit_code == 1, res.output
    out = orjson.loads(res.stdout)
    assert out["missing"] == 0 and out["api_errors"] == 2 * n
    assert out["mostly_api_errors"] == ["sim-a", "sim-b"]
    assert out["models"]["sim-a"] == {"trials": n, "api_errors": n, "error_kinds": {"http_400": n}}
    assert f"error: model sim-b: {n} of {n} recorded trials are api_error (http_400 {n})" in res.stderr
    with start_sim_server(sim(), api_key=KEY) as srv:  # only q13 is too long now: 5 errors per model
        cfg = _cli_cfg(tmp_path, srv.url)
        plain = CliRunner().invoke(app, [args[0], str(cfg), *args[1:]])
        assert plain.exit_code == 1 and srv.batch.created == 0  # nothing left to ask: still mostly errors
        res = CliRunner().invoke(app, [args[0], str(cfg), *args[1:], "--retry-errors"])
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert out["mostly_api_errors"] == [] and out["retried_errors"] == 2 * n
    assert out["models"]["sim-a"] == {"trials": n, "api_errors": 5, "error_kinds": {"http_400": 5}}
