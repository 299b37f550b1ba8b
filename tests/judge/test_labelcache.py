"""The label cache: reruns read labels, damaged entries are rebuilt, concurrent writers are safe, --no-cache skips it.

Every test runs the real command in a fresh interpreter over a copy of the
bundled example, with REPLICATE_CACHE_DIR pointing at a temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from replicate.judge.labelcache import LabelCache, decode, encode, label_key
from support.paths import ROOT

MATRIX = ["matrix", "--runs", "runs.toml", "-p", "umbrela-fallback@1", "-f", "json"]


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "fixtures" / "example", tmp_path / "example")
    return tmp_path / "example"


def run(example: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REPLICATE_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "replicate", *args], cwd=example, env=env, capture_output=True, text=True)


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "labels").glob("*/*.labels"))


def test_a_rerun_reads_labels_and_prints_the_same_bytes(example, tmp_path):
    cache = tmp_path / "cache"
    cold = run(example, cache, "--verbose", *MATRIX)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count("label cache: miss") == 4 and "hit" not in cold.stderr
    assert len(entries(cache)) == 4
    warm = run(example, cache, "--verbose", *MATRIX)
    assert warm.stderr.count("label cache: hit") == 4 and "miss" not in warm.stderr
    assert warm.stdout == cold.stdout
    keys = json.loads(warm.stdout)["label_cache"]["keys"]
    assert sorted(p.stem for p in entries(cache)) == sorted(keys.values())
    # without the cache: the same figures, no entry read or written, no label_cache key
    fresh = tmp_path / "unused"
    plain = run(example, fresh, "--no-cache", "--verbose", *MATRIX)
    assert plain.returncode == 0 and "label cache" not in plain.stderr and not fresh.exists()
    with_key = json.loads(cold.stdout)
    del with_key["label_cache"]
    assert json.loads(plain.stdout) == with_key


def test_the_cached_labels_are_the_parsed_ones(example, tmp_path):
    # a warm run must give what parsing gives: poison one entry with other (valid) labels and see it used
    cache = tmp_path / "cache"
    cold = json.loads(run(example, cache, *MATRIX).stdout)
    name, key = next(iter(cold["label_cache"]["keys"].items()))
    path = LabelCache(cache).path(key)
    labels = decode(path.read_bytes(), len(path.read_bytes()) - 48)
    assert labels is not None
    path.write_bytes(encode(np.where(labels >= 0, 3, labels)))  # a well-formed entry: trusted
    warm = json.loads(run(example, cache, *MATRIX).stdout)
    assert warm["runs"][0]["name"] == name and warm["runs"][0] != cold["runs"][0]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "wrong-length"])
def test_a_damaged_entry_is_detected_rebuilt_and_never_trusted(example, tmp_path, damage):
    cache = tmp_path / "cache"
    cold = run(example, cache, *MATRIX)
    first = entries(cache)[0]
    data = first.read_bytes()
    if damage == "truncate":
        first.write_bytes(data[:-5])
    elif damage == "flip":
        b = bytearray(data)
        b[-1] ^= 0x01  # one label altered: the checksum no longer matches
        first.write_bytes(bytes(b))
    elif damage == "empty":
        first.write_bytes(b"")
    else:
        first.write_bytes(encode(np.zeros(3, np.int8)))  # intact, but not this run's length
    warm = run(example, cache, *MATRIX)
    assert warm.returncode == 0
    assert warm.stderr.count("was damaged; parsed again and rewritten") == 1
    assert warm.stdout == cold.stdout
    assert first.read_bytes() == data  # rewritten whole
    again = run(example, cache, "--verbose", *MATRIX)
    assert again.stderr.count("label cache: hit") == 4 and "damaged" not in again.stderr


def test_two_processes_filling_the_cache_at_once_leave_whole_entries(example, tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "REPLICATE_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-m", "replicate", *MATRIX], cwd=example, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs[0][0] == outs[1][0]
    found = entries(cache)
    assert len(found) == 4
    assert not list((cache / "labels").glob("*/*.tmp"))  # no temporary file left behind
    for p in found:
        data = p.read_bytes()
        assert decode(data, len(data) - 48) is not None
    warm = run(example, cache, "--verbose", *MATRIX)
    assert warm.stderr.count("label cache: hit") == 4 and warm.stdout == outs[0][0]


def test_an_edited_file_misses():
    # the key covers each file's sha256 and reader, the parser and the field options
    base = label_key([("aa", "judge-jsonl@1")], "umbrela@1", ("query_id",), None)
    assert base != label_key([("ab", "judge-jsonl@1")], "umbrela@1", ("query_id",), None)
    assert base != label_key([("aa", "judge-jsonl@2")], "umbrela@1", ("query_id",), None)
    assert base != label_key([("aa", "judge-jsonl@1")], "umbrela@2", ("query_id",), None)
    assert base != label_key([("aa", "judge-jsonl@1")], "umbrela@1", ("qid",), None)
    assert base != label_key([("aa", "judge-jsonl@1")], "umbrela@1", ("query_id",), {"x": 1})


def test_editing_a_run_file_gives_a_new_entry(example, tmp_path):
    cache = tmp_path / "cache"
    run(example, cache, *MATRIX)
    f = example / "results" / "alpha-2024-05_annotations.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["model_output"] = "##final score: 3" if rec["model_output"] != "##final score: 3" else "##final score: 0"
    f.write_text(json.dumps(rec) + "\n" + "".join(lines[1:]), encoding="utf-8")
    warm = run(example, cache, "--verbose", *MATRIX)
    assert "label cache: miss for run alpha-2024-05" in warm.stderr
    assert warm.stderr.count("label cache: hit") == 3
    assert len(entries(cache)) == 5
