"""The trials column store: counts from codes against a hand-counted table, and every bad row named by file and
line wherever the chunk boundaries fall (chunks are made a few lines long here, so each path runs across them)."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.trials import load
from replicate.trials.counts import aggregate, unit_metadata
from replicate.trials.load import CATEGORIES, read_trials
from replicate.trials.snapshots import split_by_snapshot, table_snapshot_changes
from replicate.trials.usage import read_usage

# A small table counted by hand: (model, benchmark, item, categories of its trials in order).
HAND = [
    ("new", "math", "q2", ["correct", "wrong", "api_error"]),
    ("old", "math", "q1", ["correct", "correct", "refusal", "api_error"]),
    ("old", "math", "q2", ["wrong", "truncation"]),
    ("new", "math", "q1", ["correct", "correct", "correct"]),
    ("old", "code", "q1", ["api_error", "api_error"]),
    ("new", "code", "q1", ["format_failure", "correct"]),
    ("old", "code", 7, ["correct"]),
]
# Per model (new, old) and unit in sorted order (code/7, code/q1, math/q1, math/q2):
# (correct, valid = trials - API errors, trials)
EXPECTED = {
    "new": [(0, 0, 0), (1, 2, 2), (3, 3, 3), (1, 2, 3)],
    "old": [(1, 1, 1), (0, 0, 2), (2, 3, 4), (0, 2, 2)],
}


def hand_rows() -> list[dict]:
    rows = []
    for model, bench, item, cats in HAND:
        for trial, cat in enumerate(cats):
            rows.append({"model": model, "item": item, "trial": trial, "benchmark": bench, "category": cat})
    # interleave the models' rows, so a unit's trials are spread over chunks
    return rows[::2] + rows[1::2]


def write(path, rows, *, tail=b"\n"):
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + tail)
    return path


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Chunks of about two lines (JSONL) and two records (CSV)."""
    monkeypatch.setattr(load, "CHUNK_BYTES", 150)
    monkeypatch.setattr(load, "CSV_CHUNK_ROWS", 2)


@pytest.mark.parametrize("chunked", [False, True])
def test_counts_from_the_columns_match_the_hand_count(tmp_path, monkeypatch, chunked):
    if chunked:
        monkeypatch.setattr(load, "CHUNK_BYTES", 100)
    table = read_trials(write(tmp_path / "t.jsonl", hand_rows()))
    assert table.models == ("new", "old") and table.benchmarks == ("code", "math")
    assert table.items == ("7", "q1", "q2")
    counts, row_unit = aggregate(table)
    assert [(counts.benchmarks[b], i) for b, i in zip(counts.unit_benchmark, counts.unit_item)] == [
        ("code", "7"), ("code", "q1"), ("math", "q1"), ("math", "q2")]
    for m, model in enumerate(counts.models):
        got = list(zip(counts.correct[m].tolist(), counts.valid[m].tolist(), counts.trials[m].tolist()))
        assert got == EXPECTED[model], model
    # every category, summed over units, as written
    for m, model in enumerate(counts.models):
        written = [c for mm, _, _, cats in HAND if mm == model for c in cats]
        assert counts.categories[m].sum(axis=0).tolist() == [written.count(c) for c in CATEGORIES]
    # each row's unit is the one its benchmark and item name
    units = list(zip(counts.unit_benchmark.tolist(), counts.unit_item))
    for r in range(table.n_rows):
        assert units[row_unit[r]] == (table.benchmark[r], table.items[table.item[r]])


def test_codes_are_small_integers_not_objects(tmp_path):
    rows = hand_rows()
    rows[0]["trial"] = 300  # needs two bytes
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    assert t.model.dtype == np.int8 and t.benchmark.dtype == np.int8 and t.item.dtype == np.int8
    assert t.category.dtype == np.int8 and t.trial.dtype == np.int16 and t.line.dtype == np.int8
    assert t.trial[0] == 300 and t.line.tolist() == list(range(1, len(rows) + 1))


def test_a_chunked_read_equals_a_whole_read(tmp_path, monkeypatch):
    rows = hand_rows()
    for j, r in enumerate(rows):
        if j % 3 == 0:
            r["difficulty"] = ["easy", 1, True, 1.0][j % 4]  # true and 1 stay two values
        if j >= 9:
            r["late"] = j  # a column only later rows have
    path = write(tmp_path / "t.jsonl", rows)
    whole = read_trials(path)
    monkeypatch.setattr(load, "CHUNK_BYTES", 100)
    chunked = read_trials(path)
    for col in ("model", "benchmark", "item", "trial", "category", "loose", "line"):
        assert getattr(whole, col).tolist() == getattr(chunked, col).tolist(), col
    assert chunked.metadata_columns == ("difficulty", "late")
    for t in (whole, chunked):
        assert t.column("difficulty") == [r.get("difficulty") for r in rows]
        assert [type(v) for v in t.column("difficulty")] == [type(r.get("difficulty")) for r in rows]
        assert t.column("late") == [r.get("late") for r in rows]
    assert whole.provenance.sha256 == chunked.provenance.sha256
    assert whole.provenance.size == path.stat().st_size


def test_bad_rows_in_later_chunks_name_their_line(tmp_path, tiny_chunks):
    good = [{"model": "m", "item": f"i{j}", "trial": 0, "benchmark": "b", "category": "correct"} for j in range(12)]

    def refused(rows, match, *, raw=None, tail=b"\n"):
        p = tmp_path / "t.jsonl"
        if raw is not None:
            p.write_bytes(raw)
        else:
            write(p, rows, tail=tail)
        with pytest.raises(BadInput, match=match):
            read_trials(p)

    rows = [dict(r) for r in good]
    rows[8]["category"] = "timeout"
    refused(rows, r"t\.jsonl:9: unknown category 'timeout'")
    rows = [dict(r) for r in good]
    del rows[10]["model"]
    refused(rows, r"t\.jsonl:11: column 'model' is missing")
    rows = [dict(r) for r in good]
    rows[7]["trial"] = -2
    refused(rows, r"t\.jsonl:8: column 'trial' must be >= 0, got -2")
    rows = [dict(r) for r in good]
    rows[11]["item"] = "i3"  # the same trial as line 4, three chunks earlier
    refused(rows, r"t\.jsonl:12: duplicate trial: model='m', benchmark='b', item='i3', trial=0 also at line 4")
    lines = [orjson.dumps(r) for r in good]
    refused(None, r"t\.jsonl:7: invalid JSON: ", raw=b"\n".join(lines[:6] + [b"{nope"] + lines[6:]) + b"\n")
    refused(None, r"t\.jsonl:10: expected a JSON object per line, got list",
            raw=b"\n".join(lines[:9] + [b"[1]"] + lines[9:]) + b"\n")
    refused(None, r"t\.jsonl:13: invalid JSON \(torn last line: the file ends in the middle of a row\)",
            raw=b"\n".join(lines) + b'\n{"model": "m"')
    twice = lines[:9] + [lines[9][:-1] + b', "category": "wrong"}'] + lines[10:]
    refused(None, r"t\.jsonl:10: key 'category' appears 2 times in one record, with different values",
            raw=b"\n".join(twice) + b"\n")


def test_blank_lines_in_later_chunks_are_counted_at_their_line(tmp_path, tiny_chunks):
    lines = [orjson.dumps({"model": "m", "item": f"i{j}", "trial": 0, "benchmark": "b", "category": "wrong"})
             for j in range(8)]
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"\n".join(lines[:5] + [b"", b"  "] + lines[5:]) + b"\n")
    diag = Diagnostics()
    t = read_trials(p, diagnostics=diag)
    assert [(w.code, w.line) for w in diag.warnings] == [("blank-line", 6), ("blank-line", 7)]
    assert t.line.tolist() == [1, 2, 3, 4, 5, 8, 9, 10]
    with pytest.raises(BadInput, match=r"t\.jsonl:6: blank line skipped \[blank-line; strict\]"):
        read_trials(p, diagnostics=Diagnostics(strict=True))


def test_csv_in_chunks_keeps_its_lines_and_a_value_across_lines(tmp_path, tiny_chunks):
    p = tmp_path / "t.csv"
    p.write_text("model,item,trial,benchmark,category,note\n"
                 "m,i1,0,b,correct,plain\n"
                 "m,i2,0,b,wrong,\"two\nlines\"\n"
                 "m,i3,0,b,correct,\n"
                 "m,i4,0,b,refusal,x\n"
                 "m,i5,zero,b,correct,x\n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"t\.csv:7: column 'trial' is not an integer: 'zero'"):
        read_trials(p)
    p.write_text("\ufeffmodel,item,trial,benchmark,category,note\n"
                 "m,i1,0,b,correct,plain\n"
                 "m,i2,0,b,wrong,\"two\nlines\"\n"
                 "m,i3,0,b,correct,\n"
                 "m,i4,0,b,refusal,x\n", encoding="utf-8")
    t = read_trials(p)
    assert t.line.tolist() == [2, 4, 5, 6]
    assert t.column("note") == ["plain", "two\nlines", None, "x"]
    p.write_bytes(b"model,item,trial,benchmark,category\n" + b"m,i1,0,b,correct\n" * 3 + b"m,\xff,0,b,correct\n")
    with pytest.raises(BadInput, match=r"t\.csv: not UTF-8 text \(invalid start byte at byte 89\)"):
        read_trials(p)


def test_metadata_read_from_codes_is_checked_row_by_row(tmp_path, tiny_chunks):
    rows = hand_rows()
    level = {"q1": 1, "q2": 2.0, "7": True}
    for r in rows:
        r["level"] = level[str(r["item"])]
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    counts, row_unit = aggregate(t)
    # code/7, code/q1, math/q1, math/q2; 1 and 1.0 would be one value, true and 1 never
    assert unit_metadata(t, row_unit, counts.n_units, "level") == [True, 1, 1, 2.0]
    rows[9]["level"] = [1]
    rows[11]["level"] = 3
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    with pytest.raises(BadInput, match=r"t\.jsonl:10: metadata column 'level' holds a list \(\[1\]\)"):
        unit_metadata(t, row_unit, counts.n_units, "level")
    rows[9]["level"] = level[str(rows[9]["item"])]
    item = rows[11]["item"]
    first = next(j for j, r in enumerate(rows) if r["item"] == item and r["benchmark"] == rows[11]["benchmark"])
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    with pytest.raises(BadInput, match=rf"t\.jsonl:12: metadata column 'level' is not constant for item '{item}': "
                                       rf"3 here, {rows[first]['level']!r} at line {first + 1}"):
        unit_metadata(t, row_unit, counts.n_units, "level")


def test_usage_and_snapshots_from_codes(tmp_path, tiny_chunks):
    rows = hand_rows()
    for j, r in enumerate(rows):
        err = r["category"] == "api_error"
        r["completion_tokens"] = None if err else 10 + j % 3
        r["prompt_tokens"] = None if err else "7"
        r["snapshot"] = None if err else f"{r['model']}-{'a' if j < 10 else 'b'}" if r["model"] == "old" else "n"
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    u = read_usage(t)
    want = [np.nan if r["completion_tokens"] is None else float(r["completion_tokens"]) for r in rows]
    np.testing.assert_array_equal(u.tokens["completion"], want)
    assert np.nansum(u.tokens["prompt"]) == 7 * sum(r["prompt_tokens"] is not None for r in rows)
    old = [r["snapshot"] for r in rows if r["model"] == "old" and r["snapshot"]]
    assert table_snapshot_changes(t) == {
        "old": {"snapshot": {s: old.count(s) for s in sorted(set(old))}, "system_fingerprint": {}}}
    split = split_by_snapshot(t)
    assert split.models == ("new", "old@old-a", "old@old-b", "old@unknown")
    assert [split.models[m] for m in split.model] == [
        r["model"] if r["model"] == "new" else f"old@{r['snapshot'] or 'unknown'}" for r in rows]
    bad = rows.index(next(r for r in rows if r["category"] == "api_error"))
    rows[bad]["completion_tokens"] = 5
    rows[bad + 2]["completion_tokens"] = -1
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    with pytest.raises(BadInput, match=rf"t\.jsonl:{bad + 1}: an api_error trial reports usage \(completion_tokens = 5\)"):
        read_usage(t)
    rows[bad]["completion_tokens"] = None
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    with pytest.raises(BadInput, match=rf"t\.jsonl:{bad + 3}: column 'completion_tokens' must be >= 0, got -1"):
        read_usage(t)


def test_take_keeps_metadata_with_its_rows(tmp_path):
    rows = hand_rows()
    for j, r in enumerate(rows):
        r["n"] = j
    t = read_trials(write(tmp_path / "t.jsonl", rows))
    keep = np.array([5, 1, 9])
    sub = t.take(keep)
    assert sub.column("n") == [5, 1, 9] and sub.line.tolist() == [6, 2, 10]
    assert sub.models == t.models and not sub.trial.flags.writeable
