from __future__ import annotations

import pytest

from replicate.errors import BadInput
from replicate.tomlfile import read_toml


def test_reads_a_document(tmp_path):
    p = tmp_path / "ok.toml"
    p.write_text('[runs]\n"a" = ["x.jsonl"]\n', encoding="utf-8")
    assert read_toml(p) == {"runs": {"a": ["x.jsonl"]}}


def test_errors_name_file_line_and_what(tmp_path):
    with pytest.raises(BadInput, match=r"nope\.toml: claims file not found"):
        read_toml(tmp_path / "nope.toml", what="claims file")
    bad = tmp_path / "bad.toml"
    bad.write_text("a = 1\nb = \n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"bad\.toml:2: not valid TOML: Invalid value$"):
        read_toml(bad)
    latin = tmp_path / "latin.toml"
    latin.write_bytes('title = "caf\xe9"\n'.encode("latin-1"))
    # t-i-t-l-e, space, =, space, quote, c-a-f: the latin-1 é is byte 12 counted from 0
    with pytest.raises(BadInput, match=r"latin\.toml: not UTF-8 text \(invalid continuation byte at byte 12\)"):
        read_toml(latin)
