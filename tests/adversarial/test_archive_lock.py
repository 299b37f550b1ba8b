"""Issue 30, item 1: one collector per archive file, whatever name reaches it; and the repair of an archive
that two collectors wrote at once."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import ArchiveLock, read_archive
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import collect
from replicate.collect.simserver import load_sim_config, start_sim_server
from replicate.errors import BadInput, UsageError
from support.paths import ROOT

FIX = ROOT / "fixtures" / "collect"
KEY = "sk-test-PLANTED-adv1"
ENV = "REPLICATE_ADV_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)


def _config(url: str, **over):
    cfg = replace(load_config(FIX / "config.toml"), base_url=url, timeout=5.0, api_key_env=ENV, concurrency=2, **over)
    return replace(cfg, retry=replace(cfg.retry, backoff_base=0.001, backoff_max=0.01))


@pytest.fixture(scope="module")
def server():
    sim = replace(load_sim_config(FIX / "sim.toml"), faults={})
    with start_sim_server(sim, api_key=KEY) as srv:
        yield srv


@pytest.fixture(scope="module")
def items():
    return load_items(FIX / "items.jsonl")[:3]


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_second_collector_through_another_name_is_refused(how, server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    collect(_config(server.url, k=2), items, arch)
    arch.write_bytes(arch.read_bytes().splitlines(keepends=True)[0])  # the header only: a hard link needs a file
    other = tmp_path / "other.jsonl"
    if how == "symlink":
        other.symlink_to(arch)
    else:
        os.link(arch, other)
    before = arch.read_bytes()
    with ArchiveLock(arch):
        with pytest.raises(UsageError, match="another collector is writing"):
            collect(_config(server.url, k=2), items, other)
        with pytest.raises(UsageError, match="another collector is writing"):
            ArchiveLock(other).acquire()
    assert arch.read_bytes() == before  # nothing written beside the holder
    collect(_config(server.url, k=2), items, other)  # once the first is done, the other name works
    c = read_archive(arch)
    assert len(c.records) == 2 * len(items) * 2


def test_symlink_to_a_missing_archive_shares_the_lock_file(tmp_path):
    arch = tmp_path / "a.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(arch)  # dangling until the first collector creates the archive
    with ArchiveLock(link):
        assert arch.exists()  # created through the link, so a hard link made now shares the inode's lock
        with pytest.raises(UsageError, match="another collector is writing"):
            ArchiveLock(arch).acquire()
    assert not arch.exists() and link.is_symlink()  # the empty file made only for the lock is gone, the link kept


def test_archive_that_is_not_a_regular_file_is_refused(tmp_path):
    fifo = tmp_path / "a.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match=r"a\.jsonl: not a regular file"):
        ArchiveLock(fifo).acquire()


def _duplicate(arch: Path) -> tuple[bytes, list[int]]:
    """Append a copy of every other trial record (as two collectors at once would), one of them changed."""
    lines = arch.read_bytes().splitlines(keepends=True)
    extra, dup_lines = [], []
    trials = [ln for ln in lines if orjson.loads(ln)["type"] == "trial"]
    for i, ln in enumerate(trials[::2]):
        rec = orjson.loads(ln)
        if i == 0:
            rec["content"] = "another reply"
        extra.append(orjson.dumps(rec) + b"\n")
        dup_lines.append(len(lines) + len(extra))
    arch.write_bytes(b"".join(lines + extra))
    return arch.read_bytes(), dup_lines


def test_repair_keeps_first_record_backs_up_and_reports(server, items, tmp_path):
    arch = tmp_path / "a.jsonl"
    collect(_config(server.url, k=2), items, arch)
    clean = arch.read_bytes()
    n_trials = len(read_archive(arch).records)
    damaged, dup_lines = _duplicate(arch)
    with pytest.raises(BadInput, match="duplicate trial"):
        read_archive(arch)
    res = CliRunner().invoke(app, ["repair-archive", str(arch), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = orjson.loads(res.stdout)
    assert [d["line"] for d in rep["dropped"]] == dup_lines
    assert Counter(d["differs"] for d in rep["dropped"]) == Counter({True: 1, False: len(dup_lines) - 1})
    assert rep["trials_kept"] == n_trials
    assert Path(rep["backup"]) == tmp_path / "a.jsonl.bak"
    assert (tmp_path / "a.jsonl.bak").read_bytes() == damaged
    assert arch.read_bytes() == clean  # the first record of each trial, every other line as it was
    assert len(read_archive(arch).records) == n_trials
    # nothing left to do: reported, nothing written, no second backup
    res = CliRunner().invoke(app, ["repair-archive", str(arch)])
    assert res.exit_code == 0 and "no duplicate trials" in res.stdout
    assert not (tmp_path / "a.jsonl.bak.1").exists()
    collect(_config(server.url, k=2), items, arch)  # collect accepts it again (nothing missing)


def test_repair_keeps_a_retried_api_error(tmp_path):
    header = {"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x",
              "items": {}}
    err = {"type": "trial", "model": "m", "item": "i", "trial": 0, "error_kind": "http_400"}
    ok = {"type": "trial", "model": "m", "item": "i", "trial": 0, "content": "yes"}
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (header, err, ok, ok)))
    res = CliRunner().invoke(app, ["repair-archive", str(arch)])
    assert res.exit_code == 0, res.output
    assert "dropped 1 duplicate trial records" in res.stdout and "line 4:" in res.stdout
    c = read_archive(arch)
    assert [r for _, r in c.records] == [ok] and c.superseded == 1
