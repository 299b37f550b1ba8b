"""Loading released judge files: every kind of bad input is an error or a counted warning."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.align import align
from replicate.judge.load import FieldSpec, load_run
from replicate.judge.load.flat import bulk_records, careful_records
from replicate.judge.load.items import Items
from replicate.judge.load.readfile import RawFile
from replicate.parsing import PARSERS, Parser
from replicate.reading.stream import lines_of
from replicate_parsers.exam import exam_label

TOY = Parser("toy-digit@1", "the first digit 0-3 in the text", lambda t: next((int(c) for c in t if c in "0123"), None))


@pytest.fixture(autouse=True)
def toy_parser():
    # registered for each test and removed after it, so that no other test (a
    # listing of the installed parsers) sees it in the same process
    added = "toy-digit@1" not in PARSERS
    if added:
        PARSERS.register(TOY)
    yield
    if added:
        PARSERS.unregister(TOY.name)


def rec(q="q1", d="d1", gold=1.0, out="final score: 1", **extra):
    r = {"query_id": q, "corpus_id": d, "original_qrel_score": gold, "query_text": "x", "model_output": out}
    r.update(extra)
    return r


def write(path: Path, lines: list, *, end: str = "\n") -> Path:
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + end
    path.write_text(text, encoding="utf-8")
    return path


def load(*paths, strict=False, **kw):
    diag = Diagnostics(strict=strict)
    run = load_run("r", list(paths), diagnostics=diag, **kw)
    return run, diag


# -- the good path -------------------------------------------------------------------------


def test_flat_jsonl_keys_gold_outputs_and_counts(tmp_path):
    p = write(
        tmp_path / "m.jsonl",
        [
            rec("19335", "1082489", 0.0, "##final score: 1"),
            rec(19335, "7", 3, "O: 3", model_thought="hmm"),
            rec("2", "8", 2.0, "final score: 2", original_output="I refuse"),
        ],
    )
    run, diag = load(p)
    assert run.keys.tolist() == ["19335\x1f1082489", "19335\x1f7", "2\x1f8"]
    assert run.gold.tolist() == [0, 3, 2] and run.gold.dtype == np.int16
    assert run.outputs == ("##final score: 1", "O: 3", "final score: 2")
    (f,) = run.files
    assert (f.lines, f.records, f.rewritten, f.thoughts, f.skipped, f.output_field) == (3, 3, 1, 1, 0, "model_output")
    assert f.format == "jsonl" and len(f.provenance.sha256) == 64
    assert run.splits.tolist() == [tmp_path.name] * 3
    assert len(diag) == 0


def test_numeric_and_string_query_ids_are_the_same_key(tmp_path):
    a = load(write(tmp_path / "a.jsonl", [rec(19335, "1"), rec(7, "2")]))[0]
    b = load(write(tmp_path / "b.jsonl", [rec("19335", "1"), rec("7", "2")]))[0]
    assert a.keys.tolist() == b.keys.tolist()


def test_gemini_output_field_and_gzip(tmp_path):
    lines = [json.dumps({"query_id": "1", "corpus_id": "2", "original_qrel_score": 1, "gemini_output": "1", "gemini_thought": "t"})]
    p = tmp_path / "g.jsonl.gz"
    p.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    run, _ = load(p)
    assert run.outputs == ("1",) and run.files[0].output_field == "gemini_output" and run.files[0].thoughts == 1


def test_configurable_fields(tmp_path):
    p = write(tmp_path / "c.jsonl", [{"qid": "a", "grade": 2, "reply": "2"}, {"qid": "b", "grade": 0, "reply": "0"}])
    run, _ = load(p, fields=FieldSpec(key_fields=("qid",), gold_field="grade", output_fields=("reply",)))
    assert run.keys.tolist() == ["a", "b"] and run.gold.tolist() == [2, 0]
    with pytest.raises(BadInput, match=r"c.jsonl:1: record lacks key field 'query_id'"):
        load(p)


def test_pooled_files_keep_order(tmp_path):
    a = write(tmp_path / "results" / "m.jsonl", [rec("1", "1"), rec("1", "2")]) if (tmp_path / "results").mkdir() is None else None
    (tmp_path / "results_2020").mkdir()
    b = write(tmp_path / "results_2020" / "m.jsonl", [rec("9", "1")])
    run, _ = load(a, b)
    assert run.keys.tolist() == ["1\x1f1", "1\x1f2", "9\x1f1"]
    assert run.splits.tolist() == ["results", "results", "results_2020"]
    assert [f.records for f in run.files] == [2, 1]


@pytest.mark.parametrize("pad", [0, 800], ids=["short-lines", "long-lines"])
def test_fast_and_careful_paths_agree(tmp_path, pad):
    rows = [
        rec(i if i % 3 else str(i), str(i * 3), float(i % 4) if i % 2 else i % 4, "x" * pad + f"final score: {i % 4}",
            **({"original_output": "x"} if i % 5 == 0 else {}), **({"model_thought": "t"} if i % 7 == 0 else {}))
        for i in range(50)
    ]
    lines = [json.dumps(r).encode() for r in rows]
    fields = FieldSpec()
    fast = bulk_records(b"\n".join(lines) + b"\n", fields)
    assert fast is not None
    acc = Items.empty()
    f = RawFile(tmp_path / "x", b"", b"")
    _, records, skipped, thoughts, rewritten, field = careful_records(
        f, 0, lines_of([b"\n".join(lines) + b"\n"]), fields, acc, [f], Diagnostics(), "s")
    keys, key_hashes, gold, hashes, out_field, n_lines, n_thoughts, n_rewritten, kept, parsed = fast
    assert kept is None and parsed == {}  # no budget given: every output is read again when parsed; no parser
    assert keys.tolist() == acc.keys.tolist() and gold.tolist() == acc.gold_array().tolist()
    assert key_hashes.tolist() == sorted(hash(k) for k in keys.tolist())
    assert hashes.tolist() == [acc.hash_at(i) for i in range(50)] == [hash(r["model_output"]) for r in rows]
    assert out_field == field == "model_output" and n_lines == records == 50
    assert (n_thoughts, n_rewritten) == (thoughts, rewritten) == (8, 10)


@pytest.mark.parametrize("careful", [False, True], ids=["bulk", "careful"])
def test_only_non_empty_thoughts_count(tmp_path, careful):
    # A release whose every record has model_thought = "" has no thoughts (it used to count them all).
    empty = ["", "   \n", None, [], {}]
    rows = [rec(str(i), "1", 1, "final score: 1", model_thought=empty[i % len(empty)]) for i in range(10)]
    rows += [rec("t1", "1", 1, "1", model_thought="because"), rec("t2", "1", 1, "1", gemini_thought=["step"])]
    if careful:
        rows.append(rec("t3", "1", 1, "1", model_thought=" ", gemini_thought="also"))
    lines = [json.dumps(r).encode() for r in rows]
    fields = FieldSpec()
    if careful:
        f = RawFile(tmp_path / "x", b"", b"")
        thoughts = careful_records(f, 0, lines_of([b"\n".join(lines)]), fields, Items.empty(), [f], Diagnostics(), "s")[3]
        assert thoughts == 3
    else:
        fast = bulk_records(b"\n".join(lines) + b"\n", fields)
        assert fast is not None and fast[6] == 2


def test_bulk_path_in_small_chunks_gives_the_same_result():
    rows = [json.dumps(rec(i if i > 30 else str(i), str(i), i % 4, f"final score: {i % 4}")).encode() for i in range(60)]
    data = b"\n".join(rows) + b"\n"
    small = bulk_records(data, FieldSpec(), chunk=100)  # about one line per chunk
    big = bulk_records(data, FieldSpec())
    assert small is not None and big is not None
    assert small[0].tolist() == big[0].tolist() and small[1].tolist() == big[1].tolist() and small[2].tolist() == big[2].tolist()
    assert small[3].tolist() == big[3].tolist() and small[4:9] == big[4:9]
    # with a budget the outputs are kept from the one pass, all of them or none (read again when parsed)
    outputs = [f"final score: {i % 4}" for i in range(60)]
    assert bulk_records(data, FieldSpec(), chunk=100, keep_below=len(data)).outputs == outputs
    assert bulk_records(data, FieldSpec(), chunk=100, keep_below=len(data) - 1).outputs is None
    # a file stored larger than the budget keeps none from the start (the same labels and keys either way)
    stored_over = bulk_records(data, FieldSpec(), chunk=100, keep_below=len(data), size=len(data) + 1)
    assert stored_over is not None and stored_over.outputs is None and stored_over[0].tolist() == big[0].tolist()
    assert bulk_records(data, FieldSpec(), chunk=100, keep_below=len(data), size=len(data)).outputs == outputs
    # a key repeated in a later chunk sends the file to the careful path
    assert bulk_records(data + rows[5] + b"\n", FieldSpec(), chunk=100) is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"query_id": "1", "corpus_id": "2", "original_qrel_score": 1, "model_output": "1"}\n\n',  # trailing blank
        b'{"query_id": "1", "corpus_id": "2", "original_qrel_score": 1, "model_output": "1"}, {"a": 1}\n',  # two on a line
        b'{"query_id": "1", "corpus_id": "2", "original_qrel_score": true, "model_output": "1"}\n',
        b'{"query_id": "1", "corpus_id": "2", "original_qrel_score": 1e400, "model_output": "1"}\n',
        b'{"query_id": 1.0, "corpus_id": "2", "original_qrel_score": 1, "model_output": "1"}\n',
        b'{"query_id": "1", "corpus_id": "2", "original_qrel_score": -1, "model_output": "1"}\n',
    ],
)
def test_fast_path_declines_anything_unusual(data):
    assert bulk_records(data, FieldSpec()) is None


# -- bad input: errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"bad.jsonl:2: not JSON"),
        ("[1, 2]", r"bad.jsonl:2: expected a JSON object, got a JSON array"),
        ("42", r"bad.jsonl:2: expected a JSON object, got a JSON int \(42\)"),
        ('"text"', r"bad.jsonl:2: expected a JSON object, got a JSON str"),
        (json.dumps({"query_id": "1", "original_qrel_score": 1, "model_output": "1"}), r"bad.jsonl:2: record lacks key field 'corpus_id'"),
        (json.dumps({"query_id": "1", "corpus_id": "3", "model_output": "1"}), r"bad.jsonl:2: record lacks gold field 'original_qrel_score'"),
        (json.dumps({"query_id": "1", "corpus_id": "3", "original_qrel_score": 1}), r"bad.jsonl:2: record lacks output field 'model_output'"),
        (json.dumps(rec("1", "3", 2.5)), r"bad.jsonl:2: gold field 'original_qrel_score' must be a non-negative integer grade \(2 or 2.0, at most 32767\), got a JSON float \(2.5\)"),
        (json.dumps(rec("1", "3", 40000)), r"bad.jsonl:2: gold field .* at most 32767\), got a JSON int \(40000\)"),
        (json.dumps(rec("1", "3", -2)), r"bad.jsonl:2: gold field .* got a JSON int \(-2\)"),
        (json.dumps(rec("1", "3", "abc")), r"bad.jsonl:2: gold field .* got a JSON str \(\"abc\"\)"),
        (json.dumps(rec("1", "3", None)), r"bad.jsonl:2: gold field .* got null"),
        (json.dumps(rec("1", "3", True)), r"bad.jsonl:2: gold field .* got a JSON bool"),
        (json.dumps(rec(1.5, "3")), r"bad.jsonl:2: key field 'query_id' must be a string or an integer, got a JSON float"),
        (json.dumps(rec("1", "3", out=7)), r"bad.jsonl:2: output field 'model_output' must be a string, got a JSON int"),
        (json.dumps(rec("q1", "d1", 2.0, "other")), r"bad.jsonl:2: duplicate item q1 / d1 with different content \(first at .*bad.jsonl:1\)"),
    ],
)
def test_bad_lines_are_errors_naming_file_and_line(tmp_path, line, message):
    p = write(tmp_path / "bad.jsonl", [rec("q1", "d1"), line, rec("q2", "d2")])
    with pytest.raises(BadInput, match=message):
        load(p)


def test_first_record_without_any_output_field(tmp_path):
    p = write(tmp_path / "o.jsonl", [{"query_id": "1", "corpus_id": "2", "original_qrel_score": 1, "answer": "1"}])
    with pytest.raises(BadInput, match=r"o.jsonl:1: record has no output field: looked for 'model_output', 'gemini_output'"):
        load(p)


def test_invalid_utf8_is_an_error(tmp_path):
    p = tmp_path / "u.jsonl"
    good = json.dumps(rec()).encode()
    p.write_bytes(good + b"\n" + b'{"query_id": "\xff\xfe", "corpus_id": "1"}\n')
    with pytest.raises(BadInput, match=r"u.jsonl:2: not valid UTF-8"):
        load(p)


def test_utf16_file_is_an_error_that_says_so(tmp_path):
    p = tmp_path / "w.jsonl"
    p.write_text(json.dumps(rec()) + "\n", encoding="utf-16")
    with pytest.raises(BadInput, match=r"w.jsonl: file is UTF-16 .*must be UTF-8"):
        load(p)


def test_torn_last_line_is_an_error(tmp_path):
    full = json.dumps(rec("q2", "d2"))
    p = write(tmp_path / "t.jsonl", [rec(), full[: len(full) // 2]], end="")
    with pytest.raises(BadInput, match=r"t.jsonl:2: torn last line: the file ends in the middle of a record"):
        load(p)


def test_last_line_without_newline_is_fine(tmp_path):
    p = write(tmp_path / "n.jsonl", [rec(), rec("q2")], end="")
    run, diag = load(p)
    assert len(run) == 2 and len(diag) == 0


def test_truncated_gzip_is_an_error(tmp_path):
    data = gzip.compress(("\n".join(json.dumps(rec(str(i))) for i in range(200)) + "\n").encode())
    p = tmp_path / "z.jsonl.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInput, match=r"z.jsonl.gz: truncated gzip"):
        load(p)


def test_gz_name_without_gzip_content(tmp_path):
    p = write(tmp_path / "plain.jsonl.gz", [rec()])
    with pytest.raises(BadInput, match=r"plain.jsonl.gz: name ends in .gz but the file is not gzip-compressed"):
        load(p)


def test_missing_file(tmp_path):
    with pytest.raises(BadInput, match=r"nope.jsonl: file not found"):
        load(tmp_path / "nope.jsonl")


def test_duplicate_across_pooled_files_with_different_content(tmp_path):
    a = write(tmp_path / "a.jsonl", [rec("1", "1", 1, "1")])
    b = write(tmp_path / "b.jsonl", [rec("2", "2"), rec("1", "1", 1, "2")])
    with pytest.raises(BadInput, match=r"b.jsonl:2: duplicate item 1 / 1 with different content \(first at .*a.jsonl:1\)"):
        load(a, b)


def test_run_with_no_records_is_an_error(tmp_path):
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"")
    with pytest.raises(BadInput, match=r"run 'r' has no records"):
        load(p)


def test_gold_disagreeing_between_runs_names_both_places(tmp_path):
    a, _ = load(write(tmp_path / "a.jsonl", [rec("1", "1", 1), rec("2", "2", 2)]))  # read in bulk
    b, _ = load(write(tmp_path / "b.jsonl", [rec("1", "1", 1), "", rec("2", "2", 3)]))  # line by line (blank line)
    a = a.label_with(TOY)
    b = b.label_with(TOY)
    b = type(b)("b", b.keys, b.gold, b.labels, b.parser, b.files, b.origins)
    with pytest.raises(
        BadInput,
        match=r"b.jsonl: gold grades disagree between runs on 1 shared item\(s\): "
        r"item 2 / 2: r says 2, b says 3 \(.*a.jsonl:2, .*b.jsonl:3\)",
    ):
        align([a, b])


def test_origins_name_file_and_line_of_every_item(tmp_path):
    a = write(tmp_path / "a.jsonl", [rec("1"), rec("2")])  # bulk
    b = write(tmp_path / "b.jsonl", [rec("3"), "", rec("4")])  # line by line
    run, _ = load(a, b)
    assert [run.label_with(TOY).where(i) for i in range(4)] == [f"{a}:1", f"{a}:2", f"{b}:1", f"{b}:3"]


# -- bad input: counted warnings -----------------------------------------------------------


def test_blank_lines_are_counted_warnings(tmp_path):
    p = write(tmp_path / "b.jsonl", [rec("1"), "", "   ", rec("2")])
    run, diag = load(p)
    assert len(run) == 2
    assert [(w.code, w.line) for w in diag.warnings] == [("blank-line", 2), ("blank-line", 3)]
    assert run.files[0].skipped == 2 and run.files[0].lines == 4
    assert str(diag.warnings[0]).endswith("b.jsonl:2: blank line (skipped) [blank-line]")


def test_bom_is_a_counted_warning(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(rec()).encode() + b"\n")
    run, diag = load(p)
    assert len(run) == 1 and diag.counts() == {"bom": 1}


def test_empty_file_in_a_pooled_run_is_a_warning(tmp_path):
    a = write(tmp_path / "a.jsonl", [rec()])
    e = tmp_path / "e.jsonl"
    e.write_bytes(b"")
    run, diag = load(a, e)
    assert len(run) == 1 and diag.counts() == {"empty-file": 1}
    assert run.files[1].records == 0


def test_identical_duplicate_is_a_warning_and_first_is_kept(tmp_path):
    p = write(tmp_path / "d.jsonl", [rec("1", "1", 1, "x"), rec("2", "2"), rec("1", "1", 1.0, "x")])
    run, diag = load(p)
    assert len(run) == 2 and run.files[0].skipped == 1
    (w,) = diag.warnings
    assert (w.code, w.line) == ("duplicate-identical", 3) and "first kept" in w.message


def test_identical_duplicate_of_a_bulk_read_file_in_a_later_file(tmp_path):
    # a.jsonl is clean (read in bulk); b.jsonl repeats its second item, gold written as 2 vs 2.0
    a = write(tmp_path / "a.jsonl", [rec("1", "1", 1, "x"), rec("2", "2", 2.0, "y")])
    b = write(tmp_path / "b.jsonl", [rec("3", "3", 0, "z"), rec("2", "2", 2, "y"), rec("4", "4", 3, "w")])
    run, diag = load(a, b)
    assert run.keys.tolist() == ["1\x1f1", "2\x1f2", "3\x1f3", "4\x1f4"]
    assert run.gold.tolist() == [1, 2, 0, 3] and run.gold.dtype == np.int16
    (w,) = diag.warnings
    assert str(w).endswith("b.jsonl:2: duplicate item 2 / 2 (same content as " + str(a) + ":2; first kept) [duplicate-identical]")
    assert [f.skipped for f in run.files] == [0, 1]


def test_exam_duplicates_identical_warned_different_an_error(tmp_path):
    same = _para("p", 1, {"self_ratings": [4]})
    p = write_exam(tmp_path / "e.jsonl.gz", [["q", [same, _para("r", 0, {"self_ratings": [1]})]], ["q", [same]]])
    run, diag = load(p)
    assert run.keys.tolist() == ["q\x1fp", "q\x1fr"] and run.labels.tolist() == [3, 0]
    assert [(w.code, w.line) for w in diag.warnings] == [("duplicate-identical", 2)]
    other = _para("p", 1, {"self_ratings": [1]})  # same gold, other label
    p = write_exam(tmp_path / "f.jsonl.gz", [["q", [same]], ["q", [other]]])
    with pytest.raises(BadInput, match=r"f.jsonl.gz:2: duplicate item q / p with different content \(first at .*f.jsonl.gz:1\)"):
        load(p)


def test_null_output_is_a_warning_and_reads_unparsed(tmp_path):
    p = write(tmp_path / "n.jsonl", [rec("1"), rec("2", out=None)])
    run, diag = load(p)
    assert run.outputs == ("final score: 1", None)
    assert diag.counts() == {"null-output": 1}
    assert run.label_with(TOY).labels.tolist() == [1, -1]


@pytest.mark.parametrize(
    "lines, code",
    [
        ([rec("1"), "", rec("2")], "blank-line"),
        ([rec("1"), rec("1")], "duplicate-identical"),
        ([rec("1"), rec("2", out=None)], "null-output"),
    ],
)
def test_strict_turns_warnings_into_errors(tmp_path, lines, code):
    p = write(tmp_path / "s.jsonl", lines)
    with pytest.raises(BadInput, match=rf"s.jsonl:2: .*\[{code}; strict\]"):
        load(p, strict=True)


def test_unknown_format_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="format must be one of auto, jsonl, exam; got 'csv'"):
        load(tmp_path / "x", format="csv")


# -- grouped EXAM --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "covered,total,label",
    [(0, 4, 0), (1, 6, 0), (1, 2, 2), (5, 6, 2), (1, 4, 1), (2, 3, 2), (3, 4, 2), (4, 4, 3), (0, 0, None)],
)
def test_exam_label_is_pythons_round(covered, total, label):
    # 1/6 -> 0.5 -> 0 and 5/6 -> 2.5 -> 2 (ties to even), 1/2 -> 1.5 -> 2
    assert exam_label(covered, total) == label
    if total:
        assert exam_label(covered, total) == round(3 * covered / total)


def _para(pid, rel, grade, q="q"):
    return {"paragraph_id": pid, "paragraph_data": {"judgments": [{"query": q, "relevance": rel}]}, "exam_grades": [grade]}


def write_exam(path, lines):
    path.write_bytes(gzip.compress(("\n".join(json.dumps(x) for x in lines) + "\n").encode()))
    return path


def test_exam_file_labels_from_grades(tmp_path):
    p = write_exam(
        tmp_path / "e.jsonl.gz",
        [
            ["q1", [_para("p1", 2, {"correctAnswered": ["a", "b"], "wrongAnswered": ["c"]}, "q1"),  # 3*2/3 = 2
                    _para("p2", 0, {"correctAnswered": [], "wrongAnswered": ["a", "b"]}, "q1")]],  # 0
            [7, [_para(11, 3.0, {"self_ratings": [{"question_id": "a", "self_rating": 5}, {"question_id": "b", "self_rating": 4}, {"question_id": "c", "self_rating": 3}, {"question_id": "d", "self_rating": 0}]}, 7),  # 3*2/4=1.5 -> 2
                 _para("p4", 1, {"self_ratings": [4, 1, 2, 0, 0, 0]}, "7"),  # 3/6 = 0.5 -> 0
                 _para("p5", 1, {"correctAnswered": [], "wrongAnswered": []}, "7")]],  # no questions
        ],
    )
    run, diag = load(p)
    assert run.keys.tolist() == ["q1\x1fp1", "q1\x1fp2", "7\x1f11", "7\x1fp4", "7\x1fp5"]
    assert run.gold.tolist() == [2, 0, 3, 1, 1]
    assert run.labels.tolist() == [2, 0, 2, 0, -1]
    assert run.files[0].format == "exam" and run.files[0].records == 5 and run.files[0].lines == 2
    assert diag.counts() == {"exam-no-questions": 1}
    labelled = run.label_with(None)
    assert labelled.parser == "exam-grades" and labelled.unparsed == 1


@pytest.mark.parametrize(
    "line, message",
    [
        ({"query_id": "q"}, r"e.jsonl.gz:1: expected an EXAM line \[query_id, \[paragraph, ...\]\], got a JSON object"),
        (["q", [{"text": "no id"}]], r"e.jsonl.gz:1: paragraph 1: expected an object with a 'paragraph_id'"),
        (["q", [{"paragraph_id": "p", "exam_grades": [{}]}]], r"e.jsonl.gz:1: paragraph 'p': lacks paragraph_data.judgments\[0\].relevance"),
        (["q", [_para("p", 2, {"verdict": 1})]], r"e.jsonl.gz:1: paragraph 'p': exam_grades\[0\] has neither"),
        (["q", [_para("p", 2.5, {"self_ratings": [1]})]], r"e.jsonl.gz:1: paragraph 'p': relevance must be a non-negative integer grade"),
    ],
)
def test_exam_bad_input(tmp_path, line, message):
    p = write_exam(tmp_path / "e.jsonl.gz", [line])
    with pytest.raises(BadInput, match=message):
        load(p, format="exam")


def test_exam_query_mismatch_is_a_counted_warning(tmp_path):
    para = _para("p", 1, {"self_ratings": [4]})  # its judgment says query "q"
    p = write_exam(tmp_path / "e.jsonl.gz", [["other", [para]]])
    run, diag = load(p)
    assert run.keys.tolist() == ["other\x1fp"]
    (w,) = diag.warnings
    assert (w.code, w.line) == ("exam-query-mismatch", 1)
    assert "judgments[0].query is 'q' but the line's query id is 'other'" in w.message


def test_mixing_exam_and_raw_files_in_one_run(tmp_path):
    e = write_exam(tmp_path / "e.jsonl.gz", [["q", [_para("p", 1, {"self_ratings": [4]})]]])
    f = write(tmp_path / "f.jsonl", [rec()])
    with pytest.raises(BadInput, match=r"run 'r' mixes EXAM-graded and raw-output files"):
        load(e, f)


def test_counting_thoughts_in_bulk_equals_asking_each_record():
    from replicate.judge.load.flat import _count_thoughts, has_thought

    values = ["", " \n", "x", None, [], {}, 0, False, [1], {"a": 1}, 2.5, "  y "]
    one = [{"k": i, **({"model_thought": v} if i % 13 else {})} for i, v in enumerate(values * 3)]
    two = [dict(o, gemini_thought=values[i % 5]) for i, o in enumerate(one)]
    for objs in (one, two, [{"k": 1}]):
        names = ("model_thought", "gemini_thought")
        assert _count_thoughts(objs, names) == sum(has_thought(o, names) for o in objs)
    # 7 thoughts in each 12 values ("x", 0, False, [1], {"a": 1}, 2.5, "  y "), 3 times, less record 26 ("x") left out
    assert _count_thoughts(one, ("model_thought",)) == 20
