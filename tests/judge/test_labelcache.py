"""The label cache: reruns read labels, damaged entries are rebuilt, concurrent writers are safe, --no-cache skips it.

The command tests run the command over a copy of the bundled example_copy, with
REPLICATE_CACHE_DIR pointing at a temporary folder: the first in fresh
interpreters, the rest in this one (``invoke``: the cache is on disk either way;
two processes filling it at once are in test_runcache).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replicate.cachedir import keyed, unkeyed
from replicate.judge.labelcache import LabelCache, decode, encode, label_key
from replicate.judge.load import FieldSpec
from replicate.reading.contract import ReadOptions
from support.cachecli import MATRIX, invoke, replicate


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "labels").glob("*/*.labels"))


def test_a_rerun_reads_labels_and_prints_the_same_bytes(example_copy, tmp_path):
    cache = tmp_path / "cache"
    cold = replicate(example_copy, cache, "--verbose", *MATRIX)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count("label cache: miss") == 4 and "hit" not in cold.stderr
    assert len(entries(cache)) == 4
    warm = replicate(example_copy, cache, "--verbose", *MATRIX)
    assert warm.stderr.count("label cache: hit") == 4 and "label cache: miss" not in warm.stderr
    assert warm.stdout == cold.stdout
    block = json.loads(warm.stdout)["label_cache"]
    assert block["format"] == 1 and {e["parser"] for e in block["entries"]} == {"umbrela-fallback@1"}
    assert sorted(p.stem for p in entries(cache)) == sorted(e["key"] for e in block["entries"])
    # without the cache: the same bytes (the keys are provenance: what the labels are a function of),
    # no entry read or written
    fresh = tmp_path / "unused"
    plain = invoke(example_copy, fresh, "--no-cache", "--verbose", *MATRIX)
    assert plain.returncode == 0 and "cache" not in plain.stderr and not fresh.exists()
    assert plain.stdout == cold.stdout


def test_the_cached_labels_are_the_parsed_ones(example_copy, tmp_path):
    # a warm run must give what parsing gives: poison one entry with other (valid) labels and see it used
    cache = tmp_path / "cache"
    cold = json.loads(invoke(example_copy, cache, *MATRIX).stdout)
    name, key = (cold["label_cache"]["entries"][0][k] for k in ("run", "key"))
    path = LabelCache(cache).path(key)
    body = unkeyed(path.read_bytes())
    labels = decode(body, len(body) - 48)
    assert labels is not None
    path.write_bytes(keyed(key, encode(np.where(labels >= 0, 3, labels))))  # well-formed, under its key: trusted
    warm = json.loads(invoke(example_copy, cache, *MATRIX).stdout)
    assert warm["runs"][0]["name"] == name and warm["runs"][0] != cold["runs"][0]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "wrong-length"])
def test_a_damaged_entry_is_detected_rebuilt_and_never_trusted(example_copy, tmp_path, damage):
    cache = tmp_path / "cache"
    cold = invoke(example_copy, cache, *MATRIX)
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
        first.write_bytes(keyed(first.stem, encode(np.zeros(3, np.int8))))  # intact, but not this run's length
    warm = invoke(example_copy, cache, *MATRIX)
    assert warm.returncode == 0
    assert warm.stderr.count("was damaged; parsed again and rewritten") == 1
    assert warm.stdout == cold.stdout
    assert first.read_bytes() == data  # rewritten whole
    again = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert again.stderr.count("label cache: hit") == 4 and "damaged" not in again.stderr


def test_an_edited_file_misses():
    # the key covers each file's sha256 and reader, the parser and the field options
    fs = FieldSpec()
    base = label_key([("aa", "judge-jsonl@1")], "umbrela@1", fs, None)
    assert base != label_key([("ab", "judge-jsonl@1")], "umbrela@1", fs, None)
    assert base != label_key([("aa", "judge-jsonl@2")], "umbrela@1", fs, None)
    assert base != label_key([("aa", "judge-jsonl@1")], "umbrela@2", fs, None)
    assert base != label_key([("aa", "judge-jsonl@1")], "umbrela@1", FieldSpec(key_fields=("qid",)), None)
    assert base != label_key([("aa", "judge-jsonl@1")], "umbrela@1", fs, ReadOptions(extra={"x": 1}))


def test_editing_a_run_file_gives_a_new_entry(example_copy, tmp_path):
    cache = tmp_path / "cache"
    invoke(example_copy, cache, *MATRIX)
    f = example_copy / "results" / "alpha-2024-05_annotations.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["model_output"] = "##final score: 3" if rec["model_output"] != "##final score: 3" else "##final score: 0"
    f.write_text(json.dumps(rec) + "\n" + "".join(lines[1:]), encoding="utf-8")
    warm = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert "label cache: miss for run alpha-2024-05" in warm.stderr
    assert warm.stderr.count("label cache: hit") == 3
    assert len(entries(cache)) == 5
