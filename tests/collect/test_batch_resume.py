"""Batch mode across runs, over real HTTP against sim-server: --retry-errors asks the api_error trials again
(superseding them, as online), a resume with other batch settings than its pending batches is refused naming
them, --batch-deadline stops polling and leaves the batches for the next run, --cancel-batches cancels them
and imports what they answered."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import orjson
import pytest
import requests
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from replicate.collect.batch import collect_batch
from replicate.collect.config import load_config
from replicate.collect.simbatch import SimBatchFaults
from replicate.collect.simserver import load_sim_config, start_sim_server
from replicate.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
ENV = "REPLICATE_TEST_KEY"
KEY = "sk-test-batch-resume-6171"
FOREVER = 10**6  # status checks a batch stays in progress for: until the test says otherwise


def sim(**kw):
    return replace(load_sim_config(FIX / "sim.toml"), faults=MappingProxyType({}), **kw)


def cfg_for(url, **batch):
    cfg = load_config(FIX / "config.toml", base_url=url)
    return replace(cfg, api_key_env=ENV, batch=replace(cfg.batch, enabled=True, poll=0.01, **batch))


def cli_cfg(tmp_path, url, extra=""):
    cfg = tmp_path / "c.toml"
    cfg.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", url)
                   .replace('"SIM_API_KEY"', f'"{ENV}"').replace("k = 5", f"k = 5\nbatch_poll = 0.01\n{extra}"))
    return cfg


def cli(cfg, arch, *extra):
    return CliRunner().invoke(app, ["collect", str(cfg), "--items", str(FIX / "items.jsonl"), "--archive", str(arch),
                                    "--batch", "--no-progress", *extra])


def lines_of(srv, batch_ids):
    return sum(srv.batch.files[srv.batch.batches[b]["input_file_id"]].count(b"\n") for b in batch_ids)


def complete(arch, items):
    c = read_archive(arch)
    return len(c.done) == len(items) * 10


def left_pending(srv, items, arch, **batch):
    """A first run whose batch never ends within its deadline: the batch stays pending in the archive."""
    srv.batch.faults = SimBatchFaults(polls=FOREVER)
    s = collect_batch(cfg_for(srv.url, deadline=0.2, **batch), items, arch)
    assert s.pending == s.submitted and len(s.pending) >= 1 and s.recorded == 0
    return s


# -- --retry-errors -------------------------------------------------------------------


def test_retry_errors_asks_the_api_error_trials_again_and_supersedes_them(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:  # q13 is too long: 2 models x K=5 http_400 trials
        first = collect_batch(cfg_for(srv.url), items, arch)
        assert first.api_errors == 10 and len(read_archive(arch).errors) == 10
        plain = collect_batch(cfg_for(srv.url), items, arch)  # without the option: nothing is asked again
        assert plain.submitted == [] and plain.retried_errors == 0
    with start_sim_server(sim(too_long=frozenset()), api_key=KEY) as srv:  # the cause is fixed
        s = collect_batch(cfg_for(srv.url), items, arch, retry_errors=True)
        assert len(s.submitted) == 1 and lines_of(srv, s.submitted) == 10
        assert s.retried_errors == 10 and s.recorded == 10 and s.api_errors == 0 and s.missing == 0
    c = read_archive(arch)
    assert c.superseded == 10 and c.errors == set() and len(c.done) == len(items) * 10


def test_cli_retry_errors_in_batch_mode(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg = cli_cfg(tmp_path, srv.url)
        assert cli(cfg, arch).exit_code == 0
    with start_sim_server(sim(too_long=frozenset()), api_key=KEY) as srv:
        cfg = cli_cfg(tmp_path, srv.url)
        res = cli(cfg, arch, "--retry-errors", "--format", "json")
        assert res.exit_code == 0, res.output
        out = orjson.loads(res.stdout)
        assert out["retried_errors"] == 10 and out["trials_recorded"] == 10 and out["missing"] == 0
        res = cli(cfg, arch, "--retry-errors")  # nothing left to retry: nothing submitted
        assert res.exit_code == 0 and srv.batch.created == 1
    assert read_archive(arch).errors == set()


# -- batch settings on resume ---------------------------------------------------------


@pytest.mark.parametrize("change, message", [
    ({"window": "1h"}, 'changed batch_window: "24h" -> "1h"'),
    ({"max_lines": 7}, "changed batch_max_lines: 50000 -> 7"),
    ({"max_bytes": 10**6}, "changed batch_max_bytes: 209715200 -> 1000000"),
])
def test_resume_with_other_batch_settings_than_its_pending_batches_is_refused(items, tmp_path, change, message):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        left_pending(srv, items, arch)
        with pytest.raises(UsageError) as exc:
            collect_batch(cfg_for(srv.url, **change), items, arch)
        text = str(exc.value)
        assert message in text and "refusing to mix" in text and "--cancel-batches" in text
        assert str(arch) in text and srv.batch.created == 1  # nothing submitted
        srv.batch.faults = SimBatchFaults(polls=1)
        s = collect_batch(cfg_for(srv.url), items, arch)  # the original settings: resumes
        assert s.missing == 0 and srv.batch.created == 1
        again = collect_batch(cfg_for(srv.url, **change), items, arch)  # nothing pending: any settings
        assert again.submitted == [] and again.missing == 0
    assert complete(arch, items)


def test_cli_other_settings_error_and_cancel_then_new_settings(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        left_pending(srv, items, arch)
        cfg = cli_cfg(tmp_path, srv.url, 'batch_window = "1h"')
        res = cli(cfg, arch)
        assert res.exit_code == 2 and 'changed batch_window: "24h" -> "1h"' in res.stderr, res.output
        assert cli(cfg, arch, "--cancel-batches").exit_code == 1  # cancelling needs no same settings
        srv.batch.faults = SimBatchFaults(polls=1)
        res = cli(cfg, arch, "--format", "json")
        assert res.exit_code == 0, res.output
        assert [srv.batch.batches[b]["completion_window"] for b in orjson.loads(res.stdout)["submitted"]] == ["1h"]
    assert complete(arch, items)


def test_an_older_upload_record_without_settings_is_said_unchecked(items, tmp_path, capsys):
    import sys

    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        left_pending(srv, items, arch)
        rows = [orjson.loads(x) for x in arch.read_bytes().splitlines()]
        for r in rows:
            if r["type"] == "batch_upload":
                del r["settings"], r["custom_ids"]  # as an older version wrote it
        arch.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
        srv.batch.faults = SimBatchFaults(polls=1)
        s = collect_batch(cfg_for(srv.url, window="1h"), items, arch, progress=sys.stderr)
        assert s.submitted == [] and s.missing == 0  # its triples were read back from the uploaded file
    assert "its batch settings are not recorded" in capsys.readouterr().err


# -- --batch-deadline -----------------------------------------------------------------


def test_deadline_stops_polling_and_the_next_run_waits_for_the_same_batch(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        srv.batch.faults = SimBatchFaults(polls=FOREVER)
        cfg = cli_cfg(tmp_path, srv.url)
        res = cli(cfg, arch, "--batch-deadline", "0.3", "--format", "json")
        assert res.exit_code == 1, res.output
        out = orjson.loads(res.stdout)
        bid = out["submitted"][0]
        assert out["pending"] == [bid] and out["statuses"] == {bid: "pending"} and out["missing"] == len(items) * 10
        assert "still in progress at the deadline" in res.stderr and bid in res.stderr
        assert [b["type"] for b in read_archive(arch).batches] == ["batch_upload", "batch"]  # still pending
        srv.batch.faults = SimBatchFaults(polls=1)
        res = cli(cfg, arch, "--format", "json")
        assert res.exit_code == 0, res.output
        assert orjson.loads(res.stdout)["resumed"] == [bid] and srv.batch.created == 1
    assert complete(arch, items)


def test_deadline_from_the_config_and_bad_values(items, tmp_path):
    with start_sim_server(sim(), api_key=KEY) as srv:
        srv.batch.faults = SimBatchFaults(polls=FOREVER)
        cfg = cli_cfg(tmp_path, srv.url, "batch_deadline = 0.2")
        assert cli(cfg, tmp_path / "a.jsonl").exit_code == 1
        res = cli(cli_cfg(tmp_path, srv.url), tmp_path / "b.jsonl", "--batch-deadline", "0")
        assert res.exit_code == 2 and "batch_deadline must be a number of seconds > 0, got 0.0" in res.stderr
        bad = cli_cfg(tmp_path, srv.url, 'batch_deadline = "soon"')
        res = cli(bad, tmp_path / "b.jsonl")
        assert res.exit_code == 2 and "batch_deadline must be a number of seconds > 0" in res.stderr
        assert "c.toml" in res.stderr


# -- --cancel-batches -----------------------------------------------------------------


def test_cancel_imports_what_the_batch_answered_and_leaves_the_rest(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    total = len(items) * 10
    with start_sim_server(sim(), api_key=KEY) as srv:
        bid = left_pending(srv, items, arch).submitted[0]
        srv.batch.faults = SimBatchFaults(polls=FOREVER, cancel_answers=30)
        s = collect_batch(cfg_for(srv.url), items, arch, cancel=True)
        assert s.cancelled == [bid] and s.submitted == [] and srv.batch.cancelled == 1
        assert s.statuses == {bid: "cancelled"} and s.recorded == 30 and s.missing == total - 30
        assert read_archive(arch).batches[-1]["status"] == "cancelled"
        nothing = collect_batch(cfg_for(srv.url), items, arch, cancel=True)  # nothing pending: no-op
        assert nothing.cancelled == [] and nothing.submitted == [] and srv.batch.created == 1
        srv.batch.faults = SimBatchFaults(polls=1)
        s = collect_batch(cfg_for(srv.url), items, arch)
        assert len(s.submitted) == 1 and lines_of(srv, s.submitted) == total - 30 and s.missing == 0
    assert complete(arch, items)


def test_a_cancel_stopped_at_its_deadline_is_taken_up_by_the_next_cancel(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        bid = left_pending(srv, items, arch).submitted[0]
        srv.batch.faults = SimBatchFaults(polls=FOREVER, cancel_polls=FOREVER, cancel_answers=10)
        s = collect_batch(cfg_for(srv.url, deadline=0.2), items, arch, cancel=True)
        assert s.pending == [bid] and s.cancelled == [bid] and s.recorded == 0
        srv.batch.faults = SimBatchFaults(polls=FOREVER, cancel_answers=10)
        s = collect_batch(cfg_for(srv.url), items, arch, cancel=True)  # still cancelling: refused, then polled
        assert s.statuses == {bid: "cancelled"} and s.recorded == 10 and srv.batch.cancelled == 1


def test_cancel_a_batch_that_ended_meanwhile_imports_it_whole(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        bid = left_pending(srv, items, arch).submitted[0]
        srv.batch.faults = SimBatchFaults(polls=0)
        r = requests.get(f"{srv.url}/batches/{bid}", headers={"Authorization": f"Bearer {KEY}"}, timeout=10)
        assert r.json()["status"] == "completed"  # ended at the provider, not yet imported
        s = collect_batch(cfg_for(srv.url), items, arch, cancel=True)
        assert s.statuses == {bid: "completed"} and s.missing == 0 and srv.batch.cancelled == 0
    assert complete(arch, items)


def test_cancel_drops_an_upload_no_batch_was_created_from(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        bid = left_pending(srv, items, arch).submitted[0]
        del srv.batch.batches[bid]  # killed before the create reached the provider
        arch.write_bytes(b"".join(x for x in arch.read_bytes().splitlines(keepends=True)
                                  if b'"type":"batch"' not in x))
        s = collect_batch(cfg_for(srv.url), items, arch, cancel=True)
        assert s.cancelled == [] and srv.batch.created == 1
        fid = read_archive(arch).batches[0]["input_file_id"]
        assert read_archive(arch).batches[-1] == {"type": "batch_done", "batch_id": None, "input_file_id": fid,
                                                  "status": "cancelled", "recorded": 0}
        srv.batch.faults = SimBatchFaults(polls=1)
        s = collect_batch(cfg_for(srv.url), items, arch)  # the dropped upload is not created: a fresh batch
        assert s.resumed == [] and len(s.submitted) == 1 and srv.batch.created == 2 and s.missing == 0
    assert complete(arch, items)


def test_cli_cancel(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        bid = left_pending(srv, items, arch).submitted[0]
        srv.batch.faults = SimBatchFaults(polls=FOREVER, cancel_answers=5)
        cfg = cli_cfg(tmp_path, srv.url)
        res = cli(cfg, arch, "--cancel-batches")
        assert res.exit_code == 1
        assert f"batch {bid}: cancelled" in res.stdout and "cancelled: 1" in res.stdout
        assert "rerun without --cancel-batches" in res.stderr


@pytest.mark.parametrize("args, message", [
    (["--cancel-batches", "--retry-errors"], "--cancel-batches submits nothing, so --retry-errors would do nothing"),
    (["--cancel-batches", "--dry-run"], "it does not go with --export-batch, --import-batch or --dry-run"),
])
def test_cli_cancel_refuses_options_it_would_ignore(tmp_path, args, message):
    res = cli(cli_cfg(tmp_path, "http://127.0.0.1:9/v1"), tmp_path / "a.jsonl", *args)
    assert res.exit_code == 2 and message in res.stderr


@pytest.mark.parametrize("flag", [["--cancel-batches"], ["--batch-deadline", "5"]])
def test_batch_options_need_batch_mode(tmp_path, flag):
    cfg = cli_cfg(tmp_path, "http://127.0.0.1:9/v1")
    res = CliRunner().invoke(app, ["collect", str(cfg), "--items", str(FIX / "items.jsonl"), "--archive",
                                   str(tmp_path / "a.jsonl"), *flag])
    assert res.exit_code == 2 and f"{flag[0]} applies to batch mode: add --batch" in res.stderr
    assert not (tmp_path / "a.jsonl").exists()


def test_the_batch_of_an_upload_is_found_past_the_first_page_of_the_providers_list():
    """A run killed between upload and create asks the provider's batch list before creating. With more than
    a page of newer batches (limit 100), the one made from the upload is on a later page: found, not made twice."""
    from replicate.collect.batchapi import BatchAPI
    from replicate.collect.client import ChatClient

    with start_sim_server(sim(), api_key=KEY) as srv:
        api = BatchAPI(ChatClient.from_config(cfg_for(srv.url)))
        target = api.upload(b'{"custom_id": "x"}\n')
        made = api.create(target, "24h")
        for _ in range(150):  # newer batches, listed before it
            api.create(api.upload(b'{"custom_id": "y"}\n'), "24h")
        listed = requests.get(f"{srv.url}/batches", params={"limit": 100},
                              headers={"Authorization": f"Bearer {KEY}"}, timeout=5).json()
        assert len(listed["data"]) == 100 and listed["has_more"]
        assert all(b["input_file_id"] != target for b in listed["data"])  # not on the first page
        assert api.find_by_input(target)["id"] == made["id"]
        assert api.find_by_input("file-never-uploaded") is None  # every page read, none matches
        assert srv.batch.created == 151
