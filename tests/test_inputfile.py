from __future__ import annotations

import pytest

from replicate.errors import BadInput
from replicate.inputfile import read_input


def test_reads_bytes(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"x": 1}\n')
    assert read_input(p) == b'{"x": 1}\n'


def test_missing_and_directory_name_the_file_and_its_role(tmp_path):
    with pytest.raises(BadInput, match=r"gone\.jsonl: archive not found$"):
        read_input(tmp_path / "gone.jsonl", what="archive")
    with pytest.raises(BadInput, match=rf"{tmp_path.name}: items file is a directory, not a file$"):
        read_input(tmp_path, what="items file")
