"""The archive reader's duplicate-trial check (issue 43, item 13: it was caught only by tests/adversarial)."""

from __future__ import annotations

import orjson
import pytest

from replicate.collect.archive import read_archive
from replicate.errors import BadInput

HEADER = {"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x", "items": {}}


def _trial(trial: int, text: str = "Final answer: 4", error_kind: str | None = None, item: str = "q1") -> dict:
    return {"type": "trial", "model": "m", "item": item, "trial": trial, "text": text, "finish_reason": "stop",
            "refusal": None, "usage": {}, "error_kind": error_kind}


def _write(tmp_path, records) -> object:
    p = tmp_path / "a.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return p


def test_a_trial_recorded_twice_is_bad_input_naming_both_lines(tmp_path):
    arch = _write(tmp_path, [HEADER, _trial(0), _trial(1), _trial(0, "Final answer: 5")])
    with pytest.raises(BadInput, match=r"a\.jsonl:4: duplicate trial \('m', 'q1', 0\) \(also on line 2\)$"):
        read_archive(arch)


def test_the_same_trial_number_of_another_item_or_model_is_no_duplicate(tmp_path):
    other_model = {**_trial(0), "model": "n"}
    contents = read_archive(_write(tmp_path, [HEADER, _trial(0), _trial(0, item="q2"), other_model]))
    assert contents.done == {("m", "q1", 0), ("m", "q2", 0), ("n", "q1", 0)}


def test_a_retried_api_error_is_superseded_not_a_duplicate(tmp_path):
    contents = read_archive(_write(tmp_path, [HEADER, _trial(0, "", "http_500"), _trial(0)]))
    assert [r["text"] for _, r in contents.records] == ["Final answer: 4"] and not contents.errors
    # an answer recorded first is never superseded by a later record
    with pytest.raises(BadInput, match="duplicate trial"):
        read_archive(_write(tmp_path, [HEADER, _trial(0), _trial(0, "", "http_500")]))
