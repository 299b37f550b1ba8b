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

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from replicate.collect.batch import collect_batch, split_lines
from replicate.collect.config import load_config, load_items
from replicate.collect.simbatch import SimBatchFaults
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
ENV = "REPLICATE_TEST_KEY"
KEY = "sk-test-batch-5150"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)


@pytest.fixture(scope="module")
def items():
    return load_items(FIX / "items.jsonl")


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
