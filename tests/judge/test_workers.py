"""Reading runs in worker processes (``--jobs``): the same runs, output, warnings and errors as reading serially."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput, UsageError
from replicate.judge.api import load_runs
from replicate.judge.labelcache import LabelCache
from replicate.judge.load import workers
from replicate.judge.select import runs_from_toml
from support.paths import ROOT

PARSER = "umbrela-fallback@1"


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input)


@pytest.fixture
def release(example_copy):
    """The example release with a blank line in one run and a BOM in another (warnings to merge in order)."""
    f = example_copy / "results" / "alpha-2024-08_annotations.jsonl"
    lines = f.read_bytes().splitlines(keepends=True)
    f.write_bytes(b"".join(lines[:3] + [b"\n"] + lines[3:]))
    g = example_copy / "results_2020" / "alpha-2025-04_annotations.jsonl"
    g.write_bytes(b"\xef\xbb\xbf" + g.read_bytes())
    return example_copy


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_matrix_prints_the_same_bytes_for_one_and_two_workers(release, fmt):
    outs = [run("matrix", "--runs", release / "runs.toml", "-p", PARSER, "-f", fmt, "--replicates", "50", "--jobs", j) for j in ("1", "2")]
    assert [o.exit_code for o in outs] == [0, 0], outs[1].output
    assert outs[0].stdout == outs[1].stdout
    assert outs[0].stderr == outs[1].stderr
    if fmt == "json":
        body = json.loads(outs[1].stdout)
        assert body["warnings"]["by_code"] == {"blank-line": 1, "bom": 1}
        assert len(body["pairs"]) == 4 * 3


QRELS = ROOT / "tests" / "readers" / "data"  # two qrels runs and their gold (test_qrels.py)


@pytest.mark.parametrize("stdin", ["gold", "run"])
def test_standard_input_is_read_the_same_with_two_workers(stdin):
    """A worker's standard input is empty: ``--gold -`` and a run given as ``-`` are read in this process."""
    gold, old = QRELS / "gold.txt", QRELS / "old.txt"
    given = gold if stdin == "gold" else old
    args = ["compare", "-" if stdin == "run" else old, QRELS / "new.txt", "--reader", "trec-qrels@1",
            "--gold", "-" if stdin == "gold" else gold, "-f", "json", "--replicates", "0", "--no-cache"]
    outs = [run(*args, "--jobs", j, input=given.read_bytes()) for j in ("1", "2")]
    assert [o.exit_code for o in outs] == [0, 0], outs[1].output
    assert outs[0].stdout == outs[1].stdout
    assert outs[0].stderr == outs[1].stderr
    assert json.loads(outs[1].stdout)["n"] == 6  # the 6 items of both runs with gold (test_gold_jsonl.py)


def test_verify_prints_the_same_bytes_for_one_and_two_workers(release):
    args = ["verify", release / "claims.toml", "--root", release, "--no-plots", "--date", "2026-01-01", "--no-fail", "--replicates", "50",
            "-p", PARSER, "-p", "umbrela-strict@1"]
    for fmt in ("json", "table"):
        outs = [run(*args, "-f", fmt, "--jobs", j) for j in ("1", "2")]
        assert [o.exit_code for o in outs] == [0, 0], outs[1].output
        assert outs[0].stdout == outs[1].stdout
        assert outs[0].stderr == outs[1].stderr


def test_parsers_audit_reads_texts_the_same_with_workers(release):
    args = ["parsers", "audit", "-p", "umbrela-strict@1", "-p", PARSER, "--runs", release / "runs.toml", "-f", "json"]
    one, two = (run(*args, "--jobs", j) for j in ("1", "2"))
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout


def _break(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "torn":  # the file ends mid-record
        path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 20])
    else:  # a line that is not JSON, at line 5
        lines = data.splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:4] + [b"{not json\n"] + lines[5:]))


def test_an_error_in_a_worker_is_the_serial_error_and_the_earliest_run_wins(example_copy):
    # the third run's file is torn, the fourth's has a bad line: serially the third's error is met first
    _break(example_copy / "results_2020" / "alpha-2025-01_annotations.jsonl", "torn")
    _break(example_copy / "results" / "alpha-2025-04_annotations.jsonl", "bad")
    outs = [run("matrix", "--runs", example_copy / "runs.toml", "-p", PARSER, "--jobs", j) for j in ("1", "2")]
    assert [o.exit_code for o in outs] == [2, 2]
    assert outs[0].stderr == outs[1].stderr
    assert "alpha-2025-01_annotations.jsonl" in outs[1].stderr and "torn" in outs[1].stderr


def test_strict_raises_the_first_warning_of_the_first_run_that_has_one(release):
    outs = [run("matrix", "--runs", release / "runs.toml", "-p", PARSER, "--strict", "--jobs", j) for j in ("1", "2")]
    assert [o.exit_code for o in outs] == [2, 2]
    assert outs[0].stderr == outs[1].stderr
    assert "alpha-2024-08_annotations.jsonl:4" in outs[1].stderr and "--strict" in outs[1].stderr


def test_workers_fill_and_then_read_the_caches(release, tmp_path):
    specs = runs_from_toml(release / "runs.toml")
    cache = tmp_path / "cache"
    cold = load_runs(specs, label_cache=LabelCache(cache), jobs=2, parsers=[PARSER])
    labels = [lr.labels for lr in cold.labelled(PARSER)]
    assert [e.event for e in cold.label_cache.events] == ["miss"] * 4
    assert len(list((cache / "labels").glob("*/*.labels"))) == 4
    assert len(list((cache / "runs").glob("*/*.run"))) == 2  # the two runs read with a warning are not cached
    warm = load_runs(specs, label_cache=LabelCache(cache), jobs=2, parsers=[PARSER])
    assert [[lr.labels.tolist() for lr in warm.labelled(PARSER)]] == [[a.tolist() for a in labels]]
    assert [e.event for e in warm.label_cache.events] == ["hit"] * 4
    assert [e.event for e in warm.run_cache.events] == ["hit", "miss", "hit", "miss"]
    serial = load_runs(specs, label_cache=LabelCache(cache), jobs=1)
    serial.labelled(PARSER)
    assert serial.label_cache.events == warm.label_cache.events
    assert serial.run_cache.events == warm.run_cache.events
    assert serial.label_keys() == warm.label_keys() == cold.label_keys()
    assert [w.code for w in warm.diagnostics.warnings] == [w.code for w in serial.diagnostics.warnings]


def test_runs_read_under_spawn_equal_runs_read_serially(release, monkeypatch):
    """Workers take nothing from the parent but their task: they give the same runs when started fresh."""
    monkeypatch.setattr(workers, "_context", lambda: multiprocessing.get_context("spawn"))
    specs = runs_from_toml(release / "runs.toml")
    serial = load_runs(specs, jobs=1)
    spawned = load_runs(specs, jobs=2, parsers=[PARSER])
    assert spawned.diagnostics.warnings == serial.diagnostics.warnings
    for a, b in zip(serial.runs, spawned.runs):
        assert a.name == b.name and a.files == b.files
        assert (a.keys == b.keys).all() and (a.gold == b.gold).all() and (a.splits == b.splits).all()
        assert (a.origins.line == b.origins.line).all() and (a.origins.file_index == b.origins.file_index).all()
    for a, b in zip(serial.labelled(PARSER), spawned.labelled(PARSER)):
        assert np.array_equal(a.labels, b.labels) and a.labels.dtype == b.labels.dtype
    assert serial.label_keys() == spawned.label_keys()


def test_texts_of_runs_read_by_workers_are_read_on_first_use(release):
    specs = runs_from_toml(release / "runs.toml")
    serial = load_runs(specs, jobs=1)
    parallel = load_runs(specs, jobs=2)  # no parser named: the parent labels, reading the texts again
    assert [tuple(r.outputs) for r in parallel.runs] == [tuple(r.outputs) for r in serial.runs]
    assert [lr.labels.tolist() for lr in parallel.labelled(PARSER)] == [lr.labels.tolist() for lr in serial.labelled(PARSER)]
    texts = load_runs(specs, jobs=2, texts=True)
    assert [type(r.outputs) for r in texts.runs] == [tuple] * 4


def test_a_file_changed_before_its_texts_are_read_again_is_refused(example_copy):
    specs = runs_from_toml(example_copy / "runs.toml")
    loaded = load_runs(specs, jobs=2)
    f = example_copy / "results" / "alpha-2024-05_annotations.jsonl"
    shutil.copy(example_copy / "results" / "alpha-2024-08_annotations.jsonl", f)
    with pytest.raises(BadInput, match="changed while it was being read"):
        list(loaded.runs[0].outputs)


def test_how_many_workers(example_copy, monkeypatch):
    specs = runs_from_toml(example_copy / "runs.toml")
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    assert workers.jobs_for(specs, "auto") == 1  # a few hundred kB: not worth starting processes
    monkeypatch.setattr(workers, "AUTO_MIN_BYTES", 1)
    assert workers.jobs_for(specs, "auto") == 2
    assert workers.jobs_for(specs[:1], "auto") == 1
    monkeypatch.setattr(workers, "cpus", lambda: 1)
    assert workers.jobs_for(specs, "auto") == 1
    assert workers.jobs_for(specs, 3) == 3 and workers.jobs_for(specs, 9) == 4 and workers.jobs_for(specs, 1) == 1
    for bad in (0, -1, True, "2", 1.5):
        with pytest.raises(UsageError, match="jobs must be a positive number or 'auto'"):
            workers.jobs_for(specs, bad)
    out = run("matrix", "--runs", example_copy / "runs.toml", "-p", PARSER, "--jobs", "0")
    assert out.exit_code == 2 and "--jobs must be a positive number or 'auto'; got 0" in out.stderr
