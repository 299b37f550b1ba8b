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
