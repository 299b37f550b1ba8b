"""align() tells runs that read the same items in the same order from their keys' bytes, without making strings."""

from __future__ import annotations

import json
import mmap
import random

import numpy as np
import pytest

from replicate.judge import keytable
from replicate.judge.align import align
from replicate.judge.api import load_runs
from replicate.judge.keytable import KeyTable, raw_keys
from replicate.judge.select import RunSpec

P = "umbrela-fallback@1"


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("mapped", [False, True])
def test_same_order_keeps_bytes_and_other_orders_align_by_key(tmp_path, monkeypatch, mapped):
    """``mapped``: the key bytes held in memory maps (as a large file's are), compared by content."""
    if mapped:
        monkeypatch.setattr(keytable, "MAP_FROM", 0)
    rng = random.Random(3)
    rows = [{"query_id": str(i // 4), "corpus_id": f"d{i}", "original_qrel_score": i % 4,
             "model_output": f"##final score: {rng.randrange(4)}"} for i in range(40)]
    other = [dict(r, model_output=f"##final score: {rng.randrange(4)}") for r in rows]
    shuffled = [dict(r, model_output=f"##final score: {rng.randrange(4)}") for r in rows[1:]]  # item 0 missing
    rng.shuffle(shuffled)
    for name, rs in (("a", rows), ("b", other), ("c", shuffled)):
        _write(tmp_path / f"{name}.jsonl", rs)
    loaded = load_runs([RunSpec(n, [tmp_path / f"{n}.jsonl"]) for n in "abc"], parsers=[P])
    runs = loaded.labelled(P)
    assert all(isinstance(raw_keys(r), KeyTable) for r in runs)
    assert all(isinstance(raw_keys(r).blob, mmap.mmap) == mapped for r in runs)
    al = align(runs)
    assert isinstance(raw_keys(runs[1]), KeyTable)  # the same items in the same order: no strings made
    # the reference: each run's label by its key string, over the first run's keys that every run has
    by_key = [dict(zip(r.keys.tolist(), r.labels.tolist())) for r in runs]
    keys = [k for k in runs[0].keys.tolist() if all(k in d for d in by_key)]
    assert al.keys.tolist() == keys and len(keys) == 39
    assert al.labels.tolist() == [[d[k] for k in keys] for d in by_key]
    assert np.array_equal(al.gold, [r["original_qrel_score"] for r in rows[1:]])
