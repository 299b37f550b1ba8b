"""Reading trials tables: JSONL, gzip, CSV, and every kind of bad input with file:line."""

from __future__ import annotations

import gzip

import numpy as np
import orjson
import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.trials.counts import aggregate, unit_metadata
from replicate.trials.load import read_trials
from support.synth.trials import synthetic_rows, write_csv, write_jsonl


def row(model="m1", item="i1", trial=0, benchmark="b", category="correct", **kw):
    return {"model": model, "item": item, "trial": trial, "benchmark": benchmark, "category": category, **kw}


def write(path, rows):
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_jsonl_and_csv_read_to_the_same_counts(tmp_path):
    rows = synthetic_rows({"a": [0.2, 0.7, 0.5], "b": [0.9, 0.1, 0.5]}, k=6, seed=1, api_error_rate=0.2,
                          loose_bonus=0.3, metadata={"difficulty": ["easy", "hard", "easy"]})
    write_jsonl(rows, tmp_path / "t.jsonl")
    write_csv(rows, tmp_path / "t.csv")
    with gzip.open(tmp_path / "t.jsonl.gz", "wb") as fh:
        fh.write((tmp_path / "t.jsonl").read_bytes())
    tables = [read_trials(tmp_path / n) for n in ("t.jsonl", "t.csv", "t.jsonl.gz")]
    counts = [aggregate(t)[0] for t in tables]
    for c in counts[1:]:
        assert c.correct.tolist() == counts[0].correct.tolist()
        assert c.api_errors.tolist() == counts[0].api_errors.tolist()
        assert c.loose_correct.tolist() == counts[0].loose_correct.tolist()
        assert c.unit_item == counts[0].unit_item
    # hand count of one cell
    ok = sum(1 for r in rows if r["model"] == "a" and r["item"] == "q0001" and r["category"] == "correct")
    assert counts[0].correct[0, 1] == ok
    assert tables[0].metadata_columns == ("difficulty",)
    assert tables[0].provenance.sha256 and tables[0].has_loose
    t, (c, ru) = tables[1], aggregate(tables[1])
    assert unit_metadata(t, ru, c.n_units, "difficulty") == ["easy", "hard", "easy"]


def test_item_ids_compare_as_strings_and_belong_to_their_benchmark(tmp_path):
    p = write(tmp_path / "t.jsonl", [row(item=7), row(item="7", trial=1), row(item="7", benchmark="other")])
    t = read_trials(p)
    counts, _ = aggregate(t)
    assert counts.unit_item == ("7", "7")
    assert counts.trials.tolist() == [[2, 1]]


def test_missing_column(tmp_path):
    p = write(tmp_path / "t.jsonl", [{"model": "m", "item": "i", "trial": 0, "category": "correct"}])
    with pytest.raises(BadInput, match=r"t\.jsonl:1: missing required column\(s\): benchmark \(required: model, item, trial, benchmark, category\)"):
        read_trials(p)


def test_column_missing_on_one_line(tmp_path):
    rows = [row(), row(trial=1)]
    del rows[1]["model"]
    p = write(tmp_path / "t.jsonl", rows)
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'model' is missing"):
        read_trials(p)


def test_unknown_category_names_line_and_allowed(tmp_path):
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1), row(trial=2, category="timeout")])
    with pytest.raises(
        BadInput,
        match=r"t\.jsonl:3: unknown category 'timeout'; allowed: correct, wrong, format_failure, refusal, truncation, api_error",
    ):
        read_trials(p)


def test_duplicate_trial_names_both_lines(tmp_path):
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1), row(model="m2"), row(trial=1, category="wrong")])
    with pytest.raises(
        BadInput,
        match=r"t\.jsonl:4: duplicate trial: model='m1', benchmark='b', item='i1', trial=1 also at line 2",
    ):
        read_trials(p)


def test_torn_last_line(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(orjson.dumps(row()) + b"\n" + orjson.dumps(row(trial=1)) + b"\n" + b'{"model": "m1", "ite')
    with pytest.raises(BadInput, match=r"t\.jsonl:3: invalid JSON \(torn last line: the file ends in the middle of a row\)"):
        read_trials(p)


def test_bad_json_in_the_middle(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(orjson.dumps(row()) + b"\n{nope}\n" + orjson.dumps(row(trial=1)) + b"\n")
    with pytest.raises(BadInput, match=r"t\.jsonl:2: invalid JSON: "):
        read_trials(p)


def test_non_object_line_and_bad_values(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(orjson.dumps(row()) + b"\n[1, 2]\n")
    with pytest.raises(BadInput, match=r"t\.jsonl:2: expected a JSON object per line, got list"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial="1")])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'trial' is not an integer: '1'"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=-1)])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'trial' must be >= 0, got -1"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1, correct_loose="yes")])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'correct_loose' must be true, false or null, got 'yes'"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1, model=["x"])])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'model' must be a string, got list"):
        read_trials(p)


def test_blank_lines_are_counted_not_silent(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(orjson.dumps(row()) + b"\n\n" + orjson.dumps(row(trial=1)) + b"\n")
    diag = Diagnostics()
    t = read_trials(p, diagnostics=diag)
    assert t.n_rows == 2 and t.line.tolist() == [1, 3]
    assert diag.counts() == {"blank-line": 1}
    with pytest.raises(BadInput, match=r"t\.jsonl:2: blank line skipped \[blank-line; strict\]"):
        read_trials(p, diagnostics=Diagnostics(strict=True))
    # CSV too (its blank lines used to be skipped without a warning)
    c = tmp_path / "t.csv"
    c.write_text("model,item,trial,benchmark,category\nm,i,0,b,correct\n\n \nm,i,1,b,wrong\n")
    diag = Diagnostics()
    t = read_trials(c, diagnostics=diag)
    assert t.n_rows == 2 and t.line.tolist() == [2, 5]
    assert [(w.code, w.line) for w in diag.warnings] == [("blank-line", 3), ("blank-line", 4)]
    with pytest.raises(BadInput, match=r"t\.csv:3: blank line skipped \[blank-line; strict\]"):
        read_trials(c, diagnostics=Diagnostics(strict=True))


def test_bad_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,item,trial,benchmark,category\nm,i,0,b,correct\nm,i,1,b\n")
    with pytest.raises(BadInput, match=r"t\.csv:3: bad CSV: expected 5 fields \(as in the header\), got 4"):
        read_trials(p)
    p.write_text('model,item,trial,benchmark,category\nm,"i"x,0,b,correct\n')
    with pytest.raises(BadInput, match=r"t\.csv:2: bad CSV: "):
        read_trials(p)
    p.write_text("model,item,trial,benchmark,category\nm,i,zero,b,correct\n")
    with pytest.raises(BadInput, match=r"t\.csv:2: column 'trial' is not an integer: 'zero'"):
        read_trials(p)
    p.write_text("")
    with pytest.raises(BadInput, match=r"t\.csv:1: empty CSV file: no header row"):
        read_trials(p)


def test_empty_and_unreadable(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"")
    with pytest.raises(BadInput, match=r"t\.jsonl: the trials table has no rows"):
        read_trials(p)
    with pytest.raises(BadInput, match=r"nope\.jsonl: trials table not found$"):
        read_trials(tmp_path / "nope.jsonl")
    with pytest.raises(BadInput, match=rf"{tmp_path.name}: trials table is a directory, not a file$"):
        read_trials(tmp_path)


def test_metadata_must_be_constant_per_item(tmp_path):
    p = write(tmp_path / "t.jsonl", [row(difficulty="easy"), row(trial=1, difficulty="hard")])
    t = read_trials(p)
    c, ru = aggregate(t)
    with pytest.raises(BadInput, match=r"t\.jsonl:2: metadata column 'difficulty' is not constant for item 'i1': 'hard' here, 'easy' at line 1"):
        unit_metadata(t, ru, c.n_units, "difficulty")
    with pytest.raises(BadInput, match=r"no column 'level' in the trials table; metadata columns: difficulty"):
        t.column("level")


def test_arrays_are_read_only(tmp_path):
    t = read_trials(write(tmp_path / "t.jsonl", [row()]))
    with pytest.raises(ValueError):
        t.trial[0] = 5
    assert isinstance(t.category, np.ndarray)


def test_types_are_checked_by_type_not_equality(tmp_path):
    # Python's True == 1: a 1 in correct_loose or a true as item id must not pass as the other.
    p = write(tmp_path / "t.jsonl", [row(correct_loose=True), row(trial=1, correct_loose=1)])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'correct_loose' must be true, false or null, got 1$"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(item=1), row(item=True, trial=1)])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'item' must be a string, got bool: True"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=True)])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'trial' is not an integer: True"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1, category=["correct"])])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: unknown category \['correct'\]; allowed: correct,"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1, benchmark="  ")])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'benchmark' is empty"):
        read_trials(p)
    p = write(tmp_path / "t.jsonl", [row(), row(trial=1, model=None)])
    with pytest.raises(BadInput, match=r"t\.jsonl:2: column 'model' is empty"):
        read_trials(p)


def test_two_values_on_one_line_and_crlf(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(orjson.dumps(row()) + b"\n" + orjson.dumps(row(trial=1)) + b"," + orjson.dumps(row(trial=2)) + b"\n")
    with pytest.raises(BadInput, match=r"t\.jsonl:2: invalid JSON: "):
        read_trials(p)
    p.write_bytes(orjson.dumps(row()) + b"\r\n" + orjson.dumps(row(trial=1)) + b"\r\n")
    assert read_trials(p).trial.tolist() == [0, 1]


def test_codes_do_not_depend_on_row_order(tmp_path):
    rows = synthetic_rows({"b": [0.2, 0.7], "a": [0.9, 0.1]}, k=3, seed=1, benchmark=["y", "x"])
    t1 = read_trials(write_jsonl(rows, tmp_path / "one.jsonl") or tmp_path / "one.jsonl")
    rng = np.random.default_rng(0)
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    t2 = read_trials(write_jsonl(shuffled, tmp_path / "two.jsonl") or tmp_path / "two.jsonl")
    assert t1.models == t2.models == ("a", "b")
    assert t1.benchmarks == t2.benchmarks == ("x", "y")
    assert t1.items == t2.items == ("q0000", "q0001")
    c1, c2 = aggregate(t1)[0], aggregate(t2)[0]
    assert c1.correct.tolist() == c2.correct.tolist() and c1.unit_item == c2.unit_item


def test_a_column_twice_in_one_row_is_the_judge_readers_check(tmp_path):
    good = [orjson.dumps(row(item=f"i{i}")) + b"\n" for i in range(50)]
    differ = good[:]
    differ[30] = b'{"model": "m1", "item": "i30", "trial": 0, "benchmark": "b", "category": "correct", ' \
                 b'"category": "wrong"}\n'
    p = tmp_path / "differ.jsonl"
    p.write_bytes(b"".join(differ))
    with pytest.raises(BadInput) as err:
        read_trials(p)
    assert err.value.line == 31 and "key 'category' appears 2 times in one record, with different values" \
        in str(err.value)
    same = good[:]
    same[7] = b'{"model": "m1", "model": "m1", "item": "i7", "trial": 0, "benchmark": "b", "category": "correct"}\n'
    p = tmp_path / "same.jsonl"
    p.write_bytes(b"".join(same))
    diag = Diagnostics()
    assert read_trials(p, diagnostics=diag).n_rows == 50
    assert [(w.code, w.line) for w in diag.warnings] == [("repeated-key", 8)]
    with pytest.raises(BadInput, match="key 'model' appears 2 times in one record, with the same value"):
        read_trials(p, diagnostics=Diagnostics(strict=True))


def test_a_column_name_inside_a_value_or_a_metadata_key_twice_is_no_repeated_key(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(orjson.dumps(row(note='he wrote "category": wrong')) + b"\n"
                  + b'{"model": "m1", "item": "i2", "trial": 0, "benchmark": "b", "category": "correct", '
                    b'"note": "x", "note": "y"}\n')
    diag = Diagnostics(strict=True)
    assert read_trials(p, diagnostics=diag).n_rows == 2


def test_a_required_column_twice_in_one_row_and_missing_in_another_is_still_refused(tmp_path):
    rows = [orjson.dumps(row(item="i1")) + b"\n",
            b'{"model": "m1", "model": "m2", "item": "i2", "trial": 0, "benchmark": "b", "category": "wrong"}\n',
            b'{"item": "i3", "trial": 0, "benchmark": "b", "category": "wrong"}\n']
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"".join(rows))  # "model" occurs three times in three rows
    with pytest.raises(BadInput, match=r"t\.jsonl:3: column 'model' is missing"):
        read_trials(p)


def test_an_optional_column_twice_in_one_row_and_missing_in_another_is_found(tmp_path):
    rows = [orjson.dumps(row(item="i1")) + b"\n",
            b'{"model": "m1", "item": "i2", "trial": 0, "benchmark": "b", "category": "wrong", '
            b'"scorer": "a@1", "scorer": "b@1"}\n']
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"".join(rows))  # "scorer" occurs twice in two rows, both in the second
    with pytest.raises(BadInput, match=r"key 'scorer' appears 2 times in one record, with different values") as err:
        read_trials(p)
    assert err.value.line == 2
