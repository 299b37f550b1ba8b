"""The run cache: a rerun over unchanged files neither reads nor hashes them, and prints the same bytes.

The command tests run the command over a copy of the bundled example_copy (4
runs of 2 files each in ``[runs]``), with REPLICATE_CACHE_DIR pointing at a
temporary folder: the first and the concurrent one in fresh interpreters, the
rest in this one (``invoke``: the cache is on disk either way, and a second an
interpreter is saved).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from replicate.cachedir import keyed, unkeyed
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.api import load_runs
from replicate.judge.labelcache import LabelCache, decode as label_decode
from replicate.judge.load import load_run, plan
from replicate.judge.load.plan import run_key
from replicate.judge.load.runcache import LazyOutputs, RunCache, decode, encode
from replicate.judge.select import runs_from_toml
from replicate.reading.contract import ReadOptions
from support.cachecli import MATRIX, at_once, invoke, replicate

RUN = "alpha-2024-05"
FILE = Path("results") / f"{RUN}_annotations.jsonl"


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "runs").glob("*/*.run"))


def test_cold_warm_and_no_cache_print_the_same_bytes(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = replicate(example_copy, cache, "--verbose", *MATRIX)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count("run cache: miss") == 4 and "run cache: hit" not in cold.stderr
    assert len(entries(cache)) == 4
    warm = replicate(example_copy, cache, "--verbose", *MATRIX)
    assert warm.stderr.count("run cache: hit") == 4 and "run cache: miss" not in warm.stderr
    plain = replicate(example_copy, tmp_path / "unused", "--no-cache", *MATRIX)
    assert plain.returncode == 0 and not (tmp_path / "unused").exists()
    assert cold.stdout == warm.stdout == plain.stdout
    # in this interpreter (how the other tests run it): the same bytes on both streams
    here = invoke(example_copy, tmp_path / "here", "--verbose", *MATRIX)
    assert here.stdout == cold.stdout and here.stderr == cold.stderr
    # chain's JSON names every file with its sha256 and size: from the entry on a warm run
    chain = ["chain", *MATRIX[1:]]
    outs = [invoke(example_copy, cache, *args) for args in (chain, chain, ["--no-cache", *chain])]
    assert outs[0].stdout.count('"sha256"') >= 8
    assert outs[0].stdout == outs[1].stdout == outs[2].stdout


def test_a_changed_stat_misses_and_the_same_bytes_keep_their_labels(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = invoke(example_copy, cache, *MATRIX)
    st = (example_copy / FILE).stat()
    os.utime(example_copy / FILE, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    warm = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert f"run cache: miss for run {RUN}" in warm.stderr
    assert warm.stderr.count("run cache: hit") == 3
    assert warm.stderr.count("label cache: hit") == 4  # same bytes: the same labels
    assert warm.stdout == cold.stdout
    assert len(entries(cache)) == 5


def test_an_edited_file_is_read_again(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = invoke(example_copy, cache, *MATRIX)
    f = example_copy / FILE
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    f.write_text("".join(lines[1:]), encoding="utf-8")  # one item fewer
    warm = invoke(example_copy, cache, "--verbose", *MATRIX)
    fresh = invoke(example_copy, tmp_path / "other", *MATRIX)
    assert f"run cache: miss for run {RUN}" in warm.stderr and warm.stdout == fresh.stdout
    items = json.loads(cold.stdout)["runs"][0]["items"]
    assert json.loads(warm.stdout)["runs"][0]["items"] == items - 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "magic"])
def test_a_damaged_entry_is_detected_rebuilt_and_never_trusted(example_copy, tmp_path, damage):
    cache = tmp_path / "cache"
    cold = invoke(example_copy, cache, *MATRIX)
    first = entries(cache)[0]
    data = first.read_bytes()
    if damage == "truncate":
        first.write_bytes(data[:-5])
    elif damage == "flip":
        b = bytearray(data)
        b[-3] ^= 0x01  # one byte of a line number altered: the checksum no longer matches
        first.write_bytes(bytes(b))
    elif damage == "empty":
        first.write_bytes(b"")
    else:
        first.write_bytes(keyed(first.stem, b"RPLRUN0\n" + unkeyed(data)[8:]))  # under its key, another magic
    warm = invoke(example_copy, cache, *MATRIX)
    assert warm.returncode == 0
    assert warm.stderr.count("was damaged; read again and rewritten") == 1
    assert warm.stdout == cold.stdout
    assert first.read_bytes() == data  # rewritten whole
    again = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert again.stderr.count("run cache: hit") == 4 and "damaged" not in again.stderr


def test_two_processes_filling_both_caches_at_once_leave_whole_entries(example_copy, tmp_path):
    cache = tmp_path / "cache"
    outs = at_once(example_copy, cache, *MATRIX)
    assert [code for code, _, _ in outs] == [0, 0]
    assert outs[0][1] == outs[1][1]
    runs, labels = entries(cache), sorted((cache / "labels").glob("*/*.labels"))
    assert len(runs) == len(labels) == 4
    assert not list(cache.glob("*/*/*.tmp"))  # no temporary file left behind
    for p in runs:
        assert decode(unkeyed(p.read_bytes()), "x", lambda d: None) is not None  # type: ignore[arg-type, return-value]
    for p in labels:
        data = unkeyed(p.read_bytes())
        assert label_decode(data, len(data) - 48) is not None
    warm = replicate(example_copy, cache, "--verbose", *MATRIX)
    assert warm.stderr.count("run cache: hit") == warm.stderr.count("label cache: hit") == 4
    assert warm.stdout == outs[0][1]


def test_a_run_read_with_a_warning_is_not_cached(example_copy, tmp_path):
    cache = tmp_path / "cache"
    f = example_copy / FILE
    first = f.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    with f.open("a", encoding="utf-8") as fh:
        fh.write(first)  # the same item twice, same gold and output: a warning
    cold = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert cold.returncode == 0, cold.stderr
    assert len(entries(cache)) == 3
    warm = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert f"run cache: miss for run {RUN}" in warm.stderr
    assert warm.stdout == cold.stdout and json.loads(warm.stdout)["warnings"] == json.loads(cold.stdout)["warnings"]
    strict = invoke(example_copy, cache, "matrix", "--strict", *MATRIX[1:])
    assert strict.returncode == 2  # --strict still sees the warning on a warm run


def _load(example_copy: Path, cache: Path, *, label: bool = True):
    loaded = load_runs(runs_from_toml(example_copy / "runs.toml"), label_cache=LabelCache(cache))
    if label:
        loaded.labelled("umbrela-fallback@1")
    return loaded


def test_outputs_of_a_cached_run_are_read_on_first_use_and_equal_reading(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = _load(example_copy, cache)
    warm = _load(example_copy, cache, label=False)
    assert [e.event for e in warm.run_cache.events] == ["hit"] * 4
    outs = warm.runs[0].outputs
    assert isinstance(outs, LazyOutputs) and not outs.loaded
    assert len(outs) == len(cold.runs[0])  # the length is known without reading
    assert not outs.loaded
    assert list(outs) == list(cold.runs[0].outputs) and outs.loaded
    for a, b in zip(cold.runs, warm.runs):
        assert (a.keys == b.keys).all() and (a.gold == b.gold).all() and (a.splits == b.splits).all()
        assert (a.origins.line == b.origins.line).all() and a.files == b.files
    # a label-cache miss on a run-cache hit parses the outputs read on first use: the same labels
    shutil.rmtree(cache / "labels")
    again = _load(example_copy, cache, label=False)
    got = again.labelled("umbrela-fallback@1")
    want = cold.labelled("umbrela-fallback@1")
    assert all((g.labels == w.labels).all() for g, w in zip(got, want))
    assert [e.event for e in again.label_cache.events] == ["miss"] * 4


def test_outputs_read_later_from_a_changed_file_are_refused(example_copy, tmp_path, monkeypatch):
    # a file changed in a way its stat does not show: the recorded sha256 is trusted for the
    # labels, but outputs read later are checked against it and refused
    cache = tmp_path / "cache"
    _load(example_copy, cache)
    keys: dict[str, str] = {}

    def stat_blind(paths, reader, fields, options):
        return keys.setdefault(str(paths), run_key(paths, reader, fields, options))

    monkeypatch.setattr(plan, "run_key", stat_blind)
    shutil.rmtree(cache / "runs")
    _load(example_copy, cache)  # entries under the stat-blind keys
    f = example_copy / FILE
    text = f.read_text(encoding="utf-8")
    f.write_text(text.replace("final score: 1", "final score: 2", 1), encoding="utf-8")
    shutil.rmtree(cache / "labels")
    warm = _load(example_copy, cache, label=False)
    assert warm.run_cache.events[0][2] == "hit"
    with pytest.raises(BadInput, match="its files changed while it was being read"):
        warm.labelled("umbrela-fallback@1")


def test_an_entry_round_trips_and_a_run_it_cannot_hold_is_not_cached(example_copy):
    paths = [example_copy / FILE]
    r = load_run(RUN, paths, diagnostics=Diagnostics())
    data = encode(r)
    assert data is not None
    back = decode(data, RUN, lambda d: r)
    assert back is not None and (back.keys == r.keys).all() and back.files == r.files
    assert list(back.outputs) == list(r.outputs)
    assert decode(data[:-1], RUN, lambda d: r) is None
    exam = load_run("e", [example_copy / "exam" / "exam-beta-1.jsonl.gz"], diagnostics=Diagnostics())
    assert encode(exam) is None  # pre-labelled: nothing to read later, and the labels are the run


def test_the_key_covers_reader_options_and_every_file(example_copy):
    paths = [example_copy / FILE]
    base = run_key(paths, None, ("a",), None)
    assert base == run_key(paths, None, ("a",), None)
    assert base != run_key(paths, "judge-jsonl@1", ("a",), None)
    assert base != run_key(paths, None, ("b",), None)
    assert base != run_key(paths, None, ("a",), ReadOptions(extra={"x": 1}))
    assert base != run_key([*paths, example_copy / "results_2020" / FILE.name], None, ("a",), None)
    assert run_key([example_copy / "missing.jsonl"], None, ("a",), None) is None
    # a run directory (HELM) is not cached: rewriting a file in it leaves the directory's stat as it was
    assert run_key([example_copy / "results"], None, ("a",), None) is None


def test_an_unwritable_cache_is_skipped(example_copy, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    out = invoke(example_copy, blocked, *MATRIX)
    plain = invoke(example_copy, tmp_path / "unused", "--no-cache", *MATRIX)
    assert out.returncode == 0 and out.stdout == plain.stdout
    assert RunCache(blocked).events == []
