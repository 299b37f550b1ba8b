from __future__ import annotations

import pytest

from replicate.command_input import json_lines, read_input
from replicate.errors import BadInput


def test_reads_bytes(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"x": 1}\n')
    assert read_input(p) == b'{"x": 1}\n'


def test_missing_and_directory_name_the_file_and_its_role(tmp_path):
    with pytest.raises(BadInput, match=r"gone\.jsonl: archive not found$"):
        read_input(tmp_path / "gone.jsonl", what="archive")
    with pytest.raises(BadInput, match=rf"{tmp_path.name}: items file is a directory, not a file$"):
        read_input(tmp_path, what="items file")


def test_json_lines_skips_blank_lines_and_counts_every_line():
    data = b'{"a": 1}\n\n  \r\n[2]\r\n3'
    assert list(json_lines(data, path="x.jsonl")) == [(1, {"a": 1}), (4, [2]), (5, 3)]


def test_json_lines_names_file_line_and_record_kind():
    data = b'{"a": 1}\n\n{"a": \n'
    with pytest.raises(BadInput, match=r"^r\.jsonl:3: not valid JSON: "):
        list(json_lines(data, path="r.jsonl"))
    with pytest.raises(BadInput, match=r"^r\.jsonl:3: archive record is not valid JSON: "):
        list(json_lines(data, path="r.jsonl", record="archive record"))
