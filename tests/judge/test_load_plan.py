"""The load plan (replicate.judge.load.plan): what is wrong with a spec as such is refused before any file is
read, and the run cache's key stays the one users' caches were written under."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.judge.load import plan as load_plan, workers
from replicate.reading.contract import ReadOptions
from replicate.reading.jsonl import FieldSpec
from support.paths import ROOT

RUN = ROOT / "fixtures" / "example" / "results" / "alpha-2024-05_annotations.jsonl"
GOLD_JSONL = ROOT / "tests" / "readers" / "data" / "gold.jsonl"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def nothing_read(tmp_path, monkeypatch):
    """A bad run file (read first, it would be the error) and a loader that fails the test if it reads a run."""

    def read(plan, *args, **kwargs):
        raise AssertionError(f"run {plan.name!r} was read")

    monkeypatch.setattr(workers, "run_of", read)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "1"\n', encoding="utf-8")
    return bad


def test_a_gold_only_reader_named_for_a_run_is_refused_before_reading(nothing_read, tmp_path):
    runs = tmp_path / "runs.toml"
    runs.write_text(f'[runs]\nA = ["{nothing_read.name}"]\nB = {{ files = ["{GOLD_JSONL}"], reader = "gold-jsonl@1" }}\n',
                    encoding="utf-8")
    res = _run("matrix", "--runs", runs, "-p", "umbrela-fallback@1", "--no-cache")
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1] == (
        f"Error: run 'B': {GOLD_JSONL} holds gold labels only (gold-jsonl@1), not a judge's reading; "
        "give it with --gold FILE")


def test_an_unknown_gold_reader_is_refused_before_reading(nothing_read, tmp_path):
    res = _run("compare", nothing_read, RUN, "--gold", GOLD_JSONL, "--gold-reader", "nope@1", "--no-cache")
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].startswith("Error: unknown reader 'nope@1'; registered readers: ")


def test_a_directory_no_reader_reads_is_refused_before_earlier_runs_are_read(nothing_read, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "x.bin").write_bytes(b"")
    res = _run("compare", nothing_read, folder, "--no-cache")
    assert res.exit_code == 2, res.output
    last = res.stderr.splitlines()[-1]
    assert last.startswith(f"Error: {folder}: is a directory holding none of the files a reader reads a directory "
                           "through (helm-run@1: per_instance_stats.json or display_predictions.json")
    assert last.endswith("it holds: x.bin")


# A fixed stat of two files (size, mtime_ns, ctime_ns, inode, device) and the keys run_key gave for them before
# the load plan moved it (replicate/judge/load/runcache.py at commit 2db4405, run in a scratch clone of that
# commit with os.stat faked to these values and the version "0.1.0"). A change to the key silently leaves every
# user's run cache unread: change these values only on purpose (and say so in the release notes).
STATS = {"/data/run/a.jsonl": (1234, 1700000000123456789, 1700000001987654321, 424242, 2049),
         "/data/run/b.jsonl.gz": (99, 1690000000000000000, 1690000000000000001, 7, 66306)}
KEY_DEFAULT = "5ff9f4fe8ed60351e6dd3e926918e1ff316ed46d3f874e072bfc3f570351317f"
KEY_NAMED = "ce3c01b0bd1fcad7ed0a431cb536dd0e4474f65679ef1cab53f467f8a30dd9e2"


def test_the_run_cache_key_is_the_one_caches_were_written_under(monkeypatch):
    def fake_stat(p):
        size, mtime, ctime, ino, dev = STATS[os.fspath(p)]
        return SimpleNamespace(st_mode=0o100644, st_size=size, st_mtime_ns=mtime, st_ctime_ns=ctime, st_ino=ino,
                               st_dev=dev)

    monkeypatch.setattr(load_plan, "_version", lambda: "0.1.0")
    monkeypatch.setattr(os, "stat", fake_stat)
    paths = [Path(p) for p in STATS]
    default = load_plan.run_key(paths, None, FieldSpec(), None)
    fields = FieldSpec(key_fields=("question_id",), gold_field="label", output_fields=("judgment",))
    named = load_plan.run_key(paths[:1], "judge-jsonl@1", fields,
                              ReadOptions(fields=fields, extra={"filter": "strict-match", "n": 3}))
    monkeypatch.undo()
    assert (default, named) == (KEY_DEFAULT, KEY_NAMED)
