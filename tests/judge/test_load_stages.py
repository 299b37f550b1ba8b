"""The stages of reading one file, each on its own: the stream stage's text (one place for a BOM, UTF-16 and an
empty file, whichever way the text is read), the head a sniff sees, and the coding of a decided label."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load.readfile import read_file
from replicate.labels import LabelSet, decided_code

BOM = b"\xef\xbb\xbf"


def _warned(diag: Diagnostics) -> list[tuple[str, int | None]]:
    return [(w.code, w.line) for w in diag.warnings]


@pytest.mark.parametrize("content", [BOM + b'{"a": 1}\n{"a": 2}\n', b'{"a": 1}\n', BOM, b""])
@pytest.mark.parametrize("gz", [False, True])
def test_whole_streamed_and_chunked_text_agree(tmp_path: Path, content: bytes, gz: bool) -> None:
    path = tmp_path / ("f.jsonl.gz" if gz else "f.jsonl")
    path.write_bytes(gzip.compress(content) if gz else content)
    text = content[len(BOM):] if content.startswith(BOM) else content
    expected = ([("bom", 1)] if content.startswith(BOM) else []) + ([] if text else [("empty-file", None)])
    readings = []
    for read in ("text", "text_blocks", "chunks"):
        f = read_file(path)
        diag = Diagnostics()
        got = f.text(diag) if read == "text" else b"".join(getattr(f, read)(diag))
        readings.append((read, got, _warned(diag)))
        assert f.provenance().size == path.stat().st_size
    assert readings == [(read, text, expected) for read in ("text", "text_blocks", "chunks")]


def test_the_head_a_sniff_sees_has_no_bom_and_utf16_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(BOM + b'{"query_id": "1"}\n')
    assert read_file(path, sniff=True).sniffed == b'{"query_id": "1"}\n'
    assert read_file(path).sniffed is None  # a named reader: no head read at opening
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(b"\xff\xfe" + '{"a": 1}\n'.encode("utf-16-le"))
    with pytest.raises(BadInput, match="file is UTF-16") as err:
        read_file(wide, sniff=True)
    assert err.value.path == str(wide)


def test_decided_code_by_hand() -> None:
    grades = LabelSet.ordinal(0, 3)
    assert decided_code(2, grades) == (2, None, None)
    assert decided_code("3", grades) == (3, None, None)
    code, problem, warning = decided_code(5, grades)
    assert (code, problem) == (5, None) and warning is not None and "label 5 lies outside" in warning
    assert decided_code(2.5, grades) == (None, "label must be a whole-number grade 0-127, got 2.5", None)
    verdicts = LabelSet.categorical("A", "B", "tie")
    assert decided_code("tie", verdicts) == (2, None, None)
    assert decided_code("C", verdicts) == (None, "label 'C' is not one of A, B, tie", None)


def _qrels_through_records(path: Path, diag: Diagnostics, reads: list[int] | None = None):
    """``path`` read by trec-qrels@1's records (the record stage, no bulk path), every opening counted."""
    from replicate.judge.load.items import Items
    from replicate.judge.load.records import load_records
    from replicate.reading.contract import READERS, ReadOptions

    f = read_file(path)
    if reads is not None:
        source = f.source

        def counted(*args, **kw):
            reads.append(1)
            return source(*args, **kw)

        f.source = counted  # type: ignore[method-assign]
    acc = Items.empty()
    rf = load_records(READERS.get("trec-qrels@1"), f, 0, ReadOptions(), acc, [f], diag, "data")
    return rf, acc


def test_a_file_with_a_repeated_item_is_read_once_its_warnings_in_the_order_met(tmp_path: Path) -> None:
    # line 2 is outside the grades, line 4 repeats line 1 (same grade), line 5 is outside the grades again,
    # line 6 repeats line 2: the warnings come in line order, as a reading item by item meets them
    path = tmp_path / "q.txt"
    path.write_bytes(BOM + b"q1 0 a 1\nq1 0 b 7\nq1 0 c 2\nq1 0 a 1\nq2 0 d 9\nq1 0 b 7\n")
    diag, reads = Diagnostics(), []
    rf, acc = _qrels_through_records(path, diag, reads)
    assert reads == [1]
    assert _warned(diag) == [("bom", 1), ("label-outside-set", 2), ("duplicate-identical", 4),
                             ("label-outside-set", 5), ("label-outside-set", 6), ("duplicate-identical", 6)]
    assert (rf.lines, rf.records, rf.skipped) == (6, 4, 2)
    assert acc.keys.tolist() == ["q1\x1fa", "q1\x1fb", "q1\x1fc", "q2\x1fd"]
    assert [acc.where(i) for i in range(4)] == [(0, 1), (0, 2), (0, 3), (0, 5)]


def test_a_problem_after_a_repeated_item_comes_after_it(tmp_path: Path) -> None:
    identical = tmp_path / "same.txt"
    identical.write_bytes(b"q1 0 a 1\nq1 0 a 1\nq1 0 b 7\nq1 0 c\n")
    diag, reads = Diagnostics(), []
    with pytest.raises(BadInput, match=r"same.txt:4: expected 4 whitespace-separated columns") as err:
        _qrels_through_records(identical, diag, reads)
    assert reads == [1] and err.value.line == 4
    assert _warned(diag) == [("duplicate-identical", 2), ("label-outside-set", 3)]
    other = tmp_path / "other.txt"
    other.write_bytes(b"q1 0 a 1\nq1 0 b 7\nq1 0 a 2\nq1 0 c\n")
    diag = Diagnostics()
    with pytest.raises(BadInput, match=r"duplicate item q1 / a with different content \(first at .*other.txt:1\)"):
        _qrels_through_records(other, diag)
    assert _warned(diag) == [("label-outside-set", 2)]
    with pytest.raises(BadInput, match=r"file starts with a UTF-8 byte-order mark"):
        strict = tmp_path / "strict.txt"
        strict.write_bytes(BOM + b"q1 0 a 1\nq1 0 a 1\nq1 0 c\n")
        _qrels_through_records(strict, Diagnostics(strict=True))


def test_warnings_met_after_the_last_item_of_a_file_with_a_repeat_come_last(tmp_path: Path) -> None:
    # a reading item by item meets line 2's repeat before the blank lines 3 and 4
    path = tmp_path / "q.txt"
    path.write_bytes(b"q1 0 a 1\nq1 0 a 1\n\n\n")
    diag = Diagnostics()
    rf, acc = _qrels_through_records(path, diag)
    assert _warned(diag) == [("duplicate-identical", 2), ("blank-line", 3), ("blank-line", 4)]
    assert (rf.records, rf.skipped) == (1, 1 + 2) and acc.keys.tolist() == ["q1\x1fa"]


def test_an_item_of_an_earlier_file_repeated_is_warned_or_refused_where_it_comes(tmp_path: Path) -> None:
    from replicate.judge.load.items import Items
    from replicate.judge.load.records import load_records
    from replicate.reading.contract import READERS, ReadOptions

    first, same, other = tmp_path / "a" / "1.txt", tmp_path / "b" / "2.txt", tmp_path / "c" / "3.txt"
    for path, text in ((first, b"q1 0 a 1\n"), (same, b"q2 0 b 7\nq1 0 a 1\n"), (other, b"q3 0 c 0\nq1 0 a 2\n")):
        path.parent.mkdir()
        path.write_bytes(text)
    reader = READERS.get("trec-qrels@1")

    def read(paths: list[Path], diag: Diagnostics) -> Items:
        acc, files = Items.empty(), [read_file(p) for p in paths]
        for i, f in enumerate(files):
            acc.last_file = i == len(files) - 1
            load_records(reader, f, i, ReadOptions(), acc, files, diag, f.path.parent.name)
        return acc

    diag = Diagnostics()
    acc = read([first, same], diag)
    assert _warned(diag) == [("label-outside-set", 1), ("duplicate-identical", 2)]
    assert acc.keys.tolist() == ["q1\x1fa", "q2\x1fb"] and [acc.where(i) for i in range(2)] == [(0, 1), (1, 1)]
    with pytest.raises(BadInput, match=r"3.txt:2: duplicate item q1 / a with different content \(first at .*1.txt:1\)"):
        read([first, other], Diagnostics())


def test_under_strict_a_repeat_before_a_reader_warning_is_the_error(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_bytes(b"q1 0 a 1\nq1 0 a 1\nq1 0 b 7\n")
    with pytest.raises(BadInput, match=r"q.txt:2: duplicate item q1 / a") as err:
        _qrels_through_records(path, Diagnostics(strict=True))
    assert "byte-order" not in str(err.value) and "outside" not in str(err.value)


def test_a_warning_a_reader_adds_to_the_list_itself_keeps_its_place(tmp_path: Path) -> None:
    # a plugin reader may append to the warnings instead of calling warn(): with a repeated item the file's
    # items are given one by one, and that warning comes where the reader added it, among the others
    from replicate.diagnostics import Warning_
    from replicate.judge.load import load_run
    from replicate.reading.contract import READERS, Reader, Record

    def records(src):
        for i, line in src.lines():
            if not line.strip():
                src.diagnostics.warnings.append(Warning_("blank", "blank line", str(src.path), i))
                continue
            if line.startswith(b"?"):
                src.warn("odd", "a line starting with ?", i)
                line = line[1:]
            k, g = line.decode().split()
            yield Record(key=(k,), gold=None, output=g, line=i)

    name = "test-appending@1"
    READERS.register(Reader(name, "test", sniff=lambda h, o: None, records=records, has_gold=False, streams=True))
    try:
        path = tmp_path / "toy.txt"
        path.write_text("a 1\n\n?b 2\na 1\n\n")
        diag = Diagnostics()
        run = load_run("t", [path], reader=name, diagnostics=diag)
    finally:
        READERS.unregister(name)
    assert list(run.keys) == ["a", "b"]
    assert _warned(diag) == [("blank", 2), ("odd", 3), ("duplicate-identical", 4), ("blank", 5)]
