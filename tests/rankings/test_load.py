"""Run files read line by line: every bad line named by file and line; qrels through trec-qrels@1."""

from __future__ import annotations

import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.rankings.load import read_qrels, read_run_file, read_runs

GOOD = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 -0.5 bm25\n"


def _write(tmp_path, text, name="run.txt"):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return p


def test_a_good_run(tmp_path):
    run = read_run_file(_write(tmp_path, GOOD), Diagnostics())
    assert run.name == "run" and run.lines == 3 and run.tags == ("bm25",)
    assert {q: dict(d) for q, d in run.results.items()} == {"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d1": -0.5}}
    import hashlib
    assert run.provenance.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("q1 Q0 d1 1 2.5\n", 1, "expected 6 whitespace-separated columns"),
    (GOOD + "q2 Q0 d2 2 1.0 bm25 extra\n", 4, "got 7"),
    ("q1 Q0 d1 one 2.5 bm25\n", 1, "rank 'one' is not a whole number"),
    ("q1 Q0 d1 1.5 2.5 bm25\n", 1, "rank '1.5' is not a whole number"),
    ("q1 Q0 d1 1 high bm25\n", 1, "score 'high' is not a finite number"),
    ("q1 Q0 d1 1 nan bm25\n", 1, "score 'nan' is not a finite number"),
    ("q1 Q0 d1 1 inf bm25\n", 1, "score 'inf' is not a finite number"),
    (GOOD + "q1 Q0 d1 3 0.5 bm25\n", 4, "docid 'd1' is retrieved twice for topic 'q1' (first at line 1)"),
    (b"q1 Q0 d\xff 1 2.5 bm25\n", 1, "not valid UTF-8"),
    ("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2", 2, "got 4"),  # a torn last line
])
def test_bad_lines_are_named(tmp_path, text, line, fragment):
    p = _write(tmp_path, text)
    with pytest.raises(BadInput) as exc:
        read_run_file(p, Diagnostics())
    assert str(exc.value).startswith(f"{p}:{line}: ")
    assert fragment in str(exc.value)


def test_blank_lines_and_bom_are_counted(tmp_path):
    diag = Diagnostics()
    run = read_run_file(_write(tmp_path, b"\xef\xbb\xbf" + GOOD.replace("\nq2", "\n\nq2").encode()), diag)
    assert run.lines == 3 and "q1" in run.results
    assert diag.counts() == {"bom": 1, "blank-line": 1}
    with pytest.raises(BadInput, match=r"run\.txt:1: UTF-8 byte-order mark"):
        read_run_file(tmp_path / "run.txt", Diagnostics(strict=True))


def test_an_empty_run_is_refused(tmp_path):
    with pytest.raises(BadInput, match="holds no results"):
        read_run_file(_write(tmp_path, "\n"), Diagnostics())


def test_directories_and_names(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    _write(d, GOOD, "b.txt")
    _write(d, GOOD, "a.txt")
    _write(d, "junk", ".hidden")
    assert [r.name for r in read_runs([d], Diagnostics())] == ["a", "b"]
    other = tmp_path / "other"
    other.mkdir()
    _write(other, GOOD, "a.txt")
    with pytest.raises(UsageError, match="two run files are named 'a'"):
        read_runs([d, other / "a.txt"], Diagnostics())
    with pytest.raises(BadInput, match="no such file"):
        read_runs([tmp_path / "missing.txt"], Diagnostics())


def test_qrels_through_the_trec_reader(tmp_path):
    q = read_qrels(_write(tmp_path, "q1 0 d1 2\nq1 0 d2 0\nq2 0 d9 1\n", "h.qrels"), Diagnostics())
    assert {k: dict(v) for k, v in q.judgments.items()} == {"q1": {"d1": 2, "d2": 0}, "q2": {"d9": 1}}
    assert q.reader == "trec-qrels@1" and q.topics == {"q1", "q2"}
    with pytest.raises(BadInput, match=r"h\.qrels:2: expected 4"):
        read_qrels(_write(tmp_path, "q1 0 d1 2\nq1 0 d2\n", "h.qrels"), Diagnostics())
