"""Keys held as bytes (KeyTable), columns made on first read, labels read with the files: same values as before."""

from __future__ import annotations

import json
import mmap
import pickle
import random
from types import SimpleNamespace

import numpy as np
import pytest

from replicate.diagnostics import Diagnostics
from replicate.judge.api import load_runs
from replicate.judge.keytable import Blocks, GrowingBytes, KeysBuilder, KeyTable, Runs, raw_keys
from replicate.judge.load import load_run
from replicate.judge.model import KEY_SEP, evolve
from replicate.judge.parsed import clusters_of
from replicate.judge.select import RunSpec
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import PARSERS
from replicate.stats.bootstrap import Clusters

P = "umbrela-fallback@1"


def _table(keys: list[str], chunk: int = 3) -> KeyTable | np.ndarray:
    b = KeysBuilder()
    for i in range(0, len(keys), chunk):
        if i % 2:
            for k in keys[i : i + chunk]:
                b.append(k)
        else:
            b.extend(keys[i : i + chunk])
    return b.build()


KEYS = ["q2\x1fd1", "q1\x1fd9", "é\x1fz", "q1\x1f", "q10", "q2\x1fd2\x1fx", "", "\u4e2d\x1f1", "Z\x1fa"]


def test_keys_come_back_exactly_and_clusters_are_the_string_ranks():
    table = _table(KEYS)
    assert isinstance(table, KeyTable) and len(table) == len(KEYS)
    assert table.strings() == KEYS and table.array().tolist() == KEYS
    codes, count = table.first_field_codes(KEY_SEP)
    ref = Clusters.from_keys(np.array(KEYS, dtype=object), field=0, name="q", sep=KEY_SEP)
    assert codes.tolist() == ref.codes.tolist() and count == ref.count


@pytest.mark.parametrize("block", [None, (64, 16), (4096, 8)])
def test_clusters_of_many_keys_grouped_or_shuffled(block, monkeypatch):
    import replicate.judge.keytable as keytable

    if block is not None:  # many blocks of bytes: runs of one cluster cross them, a key longer than the searched tail
        monkeypatch.setattr(keytable, "_BLOCK_BYTES", block[0])
        monkeypatch.setattr(keytable, "_TAIL_BYTES", block[1])
    keys = [f"{1000 + i // 7}{KEY_SEP}{i}" for i in range(3000)] + [f"999{KEY_SEP}{'x' * 100}", f"2{KEY_SEP}"]
    for order in (keys, random.Random(0).sample(keys, len(keys))):
        table = _table(order, chunk=250)
        codes, count = table.first_field_codes(KEY_SEP)
        ref = Clusters.from_keys(np.array(order, dtype=object), field=0, name="q", sep=KEY_SEP)
        assert np.array_equal(codes, ref.codes) and count == ref.count


def test_a_long_first_field_is_left_to_the_strings():
    table = _table(["x" * 40 + KEY_SEP + "1", "a" + KEY_SEP + "2"])
    assert table.first_field_codes(KEY_SEP) is None


def test_a_key_holding_nul_keeps_strings():
    keys = ["a", "b\x00c", "d"]
    got = _table(keys, chunk=1)
    assert isinstance(got, np.ndarray) and got.tolist() == keys


def test_columns_pickle_and_make_their_arrays():
    runs = Runs([(0, "dl19"), (3, "dl20")], 5)
    assert runs.array().tolist() == ["dl19"] * 3 + ["dl20"] * 2
    blocks = [(0, 2, 0, None), (2, 4, 1, np.array([7, 9], np.int32))]
    assert Blocks(blocks, {4: (1, 12)}, 5, "line").array().tolist() == [1, 2, 7, 9, 12]
    assert Blocks(blocks, {4: (1, 12)}, 5, "file").array().tolist() == [0, 0, 1, 1, 1]
    table = _table(KEYS)
    assert pickle.loads(pickle.dumps(table)).strings() == KEYS
    assert pickle.loads(pickle.dumps(runs)).array().tolist() == runs.array().tolist()


class _NoRemap(mmap.mmap):
    """A memory map that cannot grow in place (as where the system has no mremap)."""

    def resize(self, newsize):
        raise SystemError("mmap: resizing not available--no mremap()")


@pytest.mark.parametrize("system", ["remap", "no remap", "no maps"])
def test_growing_bytes_hold_what_was_appended_across_the_map(monkeypatch, system):
    import replicate.judge.keytable as keytable

    monkeypatch.setattr(keytable, "MAP_FROM", 5000)
    if system == "no remap":
        monkeypatch.setattr(keytable, "mmap", SimpleNamespace(mmap=_NoRemap, PAGESIZE=mmap.PAGESIZE,
                                                              MAP_PRIVATE=mmap.MAP_PRIVATE))
    if system == "no maps":
        monkeypatch.setattr(keytable, "_MAPS", False)
    rng = random.Random(3)
    buf, ref = GrowingBytes(), bytearray()
    for i in range(300):  # bytes, arrays, views; from under the map's threshold to several doublings
        piece = rng.randbytes(rng.randrange(0, 900))
        part = piece if i % 3 else np.frombuffer(piece[: len(piece) // 8 * 8], dtype=np.int64)
        buf.extend(part)
        ref += memoryview(part).cast("B")
        assert len(buf) == len(ref)
        if i in (3, 150):
            with buf.view() as seen:
                assert bytes(seen) == bytes(ref)
    held = buf.take()
    assert isinstance(held, bytearray if system == "no maps" else mmap.mmap)
    assert bytes(held) == bytes(ref) and len(buf) == 0
    assert bytes(buf.take()) == b""


def test_a_table_in_a_map_reads_pickles_and_clusters_as_one_in_bytes(monkeypatch):
    import replicate.judge.keytable as keytable

    monkeypatch.setattr(keytable, "MAP_FROM", 64)
    keys = [f"{1000 + i // 7}{KEY_SEP}{i}" for i in range(3000)]
    table = _table(keys, chunk=250)
    assert isinstance(table, KeyTable) and isinstance(table.blob, mmap.mmap)
    plain = KeyTable(bytes(table.blob), len(keys))
    assert table.strings() == plain.strings() == keys
    assert pickle.loads(pickle.dumps(table)).strings() == keys
    got, ref = table.first_field_codes(KEY_SEP), plain.first_field_codes(KEY_SEP)
    assert got is not None and ref is not None and np.array_equal(got[0], ref[0]) and got[1] == ref[1]
    b = KeysBuilder()  # a file's keys taken whole, then another's appended; a NUL key after a map
    first, second = KeysBuilder(), KeysBuilder()
    first.extend(keys[:2000])
    second.extend(keys[2000:])
    b.absorb(first)
    b.absorb(second)
    assert b.tolist() == keys and len(first) == len(second) == 0
    b.extend(["a\x00b"])
    got_keys = b.build()
    assert isinstance(got_keys, np.ndarray) and got_keys.tolist() == [*keys, "a\x00b"]


def _judge_file(path, n=60, per=4):
    rng = random.Random(1)
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"query_id": str(500 - i // per), "corpus_id": str(i), "original_qrel_score": i % 4,
                                "model_output": rng.choice(["Final score: 2", "##final score: 3", "no idea", "1"])}) + "\n")
    return path


def test_a_run_read_holds_a_table_and_reads_as_before(tmp_path):
    path = _judge_file(tmp_path / "r.jsonl")
    run = load_run("r", path, diagnostics=Diagnostics())
    assert isinstance(raw_keys(run), KeyTable)
    assert len(run) == 60 and isinstance(raw_keys(evolve(run, name="s")), KeyTable)  # no strings made
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert run.keys.tolist() == [r["query_id"] + KEY_SEP + r["corpus_id"] for r in rows]
    assert run.splits.tolist() == [tmp_path.name] * 60 and run.origins.line.tolist() == list(range(1, 61))
    labelled = run.label_with(PARSERS.get(P))
    settings = Uncertainty(key_fields=("query_id", "corpus_id"))
    ref = settings.clusters(np.array(run.keys.tolist(), dtype=object))
    got = clusters_of(labelled, settings)
    assert np.array_equal(got.codes, ref.codes) and (got.count, got.name) == (ref.count, ref.name)


@pytest.mark.parametrize("reader", ["judge-jsonl@1", "umbrela-judge@1"])
def test_labels_read_with_the_file_equal_the_parsers(tmp_path, reader):
    if reader == "umbrela-judge@1":
        path = tmp_path / "u.jsonl"
        path.write_text("".join(json.dumps({"qid": str(i // 3), "docid": str(i), "prediction": f"##final score: {i % 5}"})
                                + "\n" for i in range(30)))
    else:
        path = _judge_file(tmp_path / "r.jsonl")
    parsed: dict = {}
    run = load_run("r", path, diagnostics=Diagnostics(), reader=reader, parsers=[PARSERS.get(P)], parsed=parsed)
    assert set(parsed) == {P}
    assert parsed[P].tolist() == PARSERS.get(P).parse_many(list(run.outputs)).tolist()
    loaded = load_runs([RunSpec("r", [path], reader=reader)], need_gold=False, parsers=[P])
    plain = load_runs([RunSpec("r", [path], reader=reader)], need_gold=False)
    assert loaded.labelled(P)[0].labels.tolist() == plain.labelled(P)[0].labels.tolist() == parsed[P].tolist()
    assert loaded.label_keys() == plain.label_keys()


def test_labels_are_not_read_with_a_file_read_line_by_line(tmp_path):
    path = _judge_file(tmp_path / "r.jsonl")
    path.write_text(path.read_text() + "\n")  # a blank line: the careful path reads this file
    parsed: dict = {}
    diag = Diagnostics()
    run = load_run("r", path, diagnostics=diag, parsers=[PARSERS.get(P)], parsed=parsed)
    assert parsed == {} and len(run) == 60 and diag.counts() == {"blank-line": 1}
