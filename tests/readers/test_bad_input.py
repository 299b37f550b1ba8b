"""Bad input for every reader names file and line; odd encodings are read or refused clearly."""

from __future__ import annotations

import gzip
import json

import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run

QRELS = "q1 0 p1 3\nq1 0 p2 0\n"
UMBRELA = "".join(json.dumps({"qid": "q1", "docid": f"p{i}", "query": "q", "passage": f"t{i}",
                              "prediction": "##final score: 1", "judgment": 1}) + "\n" for i in (1, 2))
JSONL = "".join(json.dumps({"query_id": "q1", "corpus_id": f"p{i}", "original_qrel_score": 1,
                            "model_output": "##final score: 1"}) + "\n" for i in (1, 2))


def _load(tmp_path, name, data: bytes | str, reader=None):
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return load_run("r", p, diagnostics=(diag := Diagnostics()), reader=reader), diag


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 p1 3\nq1 0 p2\n", r"q.txt:2: expected 4 whitespace-separated columns 'qid iter docid grade' .*got 3"),
        ("q1 0 p1 3\nq1 0 p2 1 extra\n", r"q.txt:2: expected 4 whitespace-separated columns .*got 5"),
        ("q1 0 p1 3\nq1 0 p2 high\n", r"q.txt:2: grade 'high' is not a whole number"),
        ("q1 0 p1 3\nq1 0 p2 1.5\n", r"q.txt:2: grade '1.5' is not a whole number"),
        ("q1 0 p1 3\nq1 0 p2 -2\n", r"q.txt:2: grade -2 is negative"),
        ("q1 0 p1 3\nq1 0 p1 2\n", r"q.txt:2: duplicate item q1 / p1 with different content \(first at .*q.txt:1\)"),
        ("q1 0 p1 3\nq1 0 p2", r"q.txt:2: torn last line: the file ends in the middle of a judgment"),
    ],
)
def test_qrels_problems_name_file_and_line(tmp_path, text, message):
    with pytest.raises(BadInput, match=message):
        _load(tmp_path, "q.txt", text, "trec-qrels@1")


def test_qrels_odd_encodings(tmp_path):
    run, diag = _load(tmp_path, "bom.txt", b"\xef\xbb\xbf" + QRELS.encode())
    assert run.reader == "trec-qrels@1" and len(run) == 2 and diag.counts() == {"bom": 1}
    run, _ = _load(tmp_path, "crlf.txt", QRELS.replace("\n", "\r\n"))
    assert run.labels.tolist() == [3, 0] and run.keys.tolist() == ["q1\x1fp1", "q1\x1fp2"]
    run, _ = _load(tmp_path, "q.txt.gz", gzip.compress(QRELS.encode()))
    assert run.reader == "trec-qrels@1" and len(run) == 2
    run, diag = _load(tmp_path, "dup.txt", QRELS + "q1 0 p1 3\n\n")
    assert len(run) == 2 and diag.counts() == {"duplicate-identical": 1, "blank-line": 1}
    assert run.files[0].skipped == 2 and run.files[0].lines == 4
    run, _ = _load(tmp_path, "no-newline.txt", QRELS.rstrip("\n"))  # a complete last line without newline
    assert len(run) == 2
    with pytest.raises(BadInput, match=r"u16.txt: file is UTF-16 .*convert it first"):
        _load(tmp_path, "u16.txt", QRELS.encode("utf-16"))
    with pytest.raises(BadInput, match=r"bad.txt:2: not valid UTF-8"):
        _load(tmp_path, "bad.txt", b"q1 0 p1 3\nq1 0 p\xff 1\n", "trec-qrels@1")


@pytest.mark.parametrize(("name", "text", "reader"), [("u.jsonl", UMBRELA, "umbrela-judge@1"), ("j.jsonl", JSONL, "judge-jsonl@1")])
def test_jsonl_readers_odd_encodings_and_torn_lines(tmp_path, name, text, reader):
    run, diag = _load(tmp_path, "bom-" + name, b"\xef\xbb\xbf" + text.encode())
    assert run.reader == reader and len(run) == 2 and diag.counts() == {"bom": 1}
    run, _ = _load(tmp_path, "crlf-" + name, text.replace("\n", "\r\n"))
    assert run.reader == reader and len(run) == 2
    with pytest.raises(BadInput, match=r"file is UTF-16"):
        _load(tmp_path, "u16-" + name, text.encode("utf-16"))
    with pytest.raises(BadInput, match=r"torn-" + name.replace(".", r"\.") + r":2: torn last line"):
        _load(tmp_path, "torn-" + name, text[:-20])
    lines = text.splitlines()
    changed = json.loads(lines[1])
    changed["prediction" if reader.startswith("umbrela") else "model_output"] = "##final score: 0"
    with pytest.raises(BadInput, match=r"dup-" + name.replace(".", r"\.") + r":3: duplicate item q1 / p2 with different content"):
        _load(tmp_path, "dup-" + name, text + json.dumps(changed) + "\n")


def test_unknown_extra_fields_are_ignored(tmp_path):
    rows = [json.loads(line) | {"new_field": {"nested": [1, None]}, "score_v2": "x"} for line in UMBRELA.splitlines()]
    run, diag = _load(tmp_path, "extra.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert run.reader == "umbrela-judge@1" and len(run) == 2 and len(diag) == 0
