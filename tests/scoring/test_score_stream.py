"""`replicate score` streams the archive (issue 39): rows kept as codes give back exactly the values they
were given, the table written in chunks is the table written whole, a retried API error's row and its
warnings are taken back."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import orjson
import pytest

from replicate.collect.archive_read import ARCHIVE_SCHEMA
from replicate.errors import BadInput
from replicate.scoring.pipeline import CORE_COLUMNS, score_archive_to_file, trials_chunks
from replicate.scoring.scored import Codes

HEADER = {"type": "header", "schema": ARCHIVE_SCHEMA, "config": {}, "seed": 0, "params_hash": "x", "items": {}}


def test_codes_give_back_every_value_as_json_tells_them_apart():
    values = [1, 1.0, True, 0.0, -0.0, None, "1", {"a": 1}, [1, 2], {"a": 1}, False, 0, ("m", 1, True, None, "s"),
              ("m", 1, 1, None, "s"), ("m", 1, 1.0, None, "s"), 1]
    c = Codes()
    for v in values:
        c.add(v)
    back = c.decoded()
    assert [orjson.dumps(v) for v in back] == [orjson.dumps(v) for v in values]
    assert [type(v) for v in back] == [type(v) for v in values]
    assert len(c.values) == 14  # the second {"a": 1} and the last 1 share a code


def _rows(n: int) -> list[dict]:
    return [{**dict.fromkeys(CORE_COLUMNS), "model": "m", "item": f"q{i}", "trial": i % 3, "category": "correct",
             **({"difficulty": "hard"} if i % 4 == 1 else {}), **({"extra,col": f'a "b"\n{i}'} if i == 5 else {})}
            for i in range(n)]


@pytest.mark.parametrize("batch", [1, 3, 1 << 13])
def test_the_table_written_in_chunks_is_the_table_written_whole(batch):
    rows = _rows(40)
    jsonl = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    assert b"".join(trials_chunks(rows, ".jsonl", batch=batch)) == jsonl
    assert b"".join(trials_chunks(rows, ".jsonl.gz", batch=batch)) == gzip.compress(jsonl, mtime=0)
    columns = list(CORE_COLUMNS) + ["difficulty", "extra,col"]  # in the order the rows bring them
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows({k: "" if r.get(k) is None else r[k] for k in columns} for r in rows)
    assert b"".join(trials_chunks(iter(rows), ".csv", batch=batch, columns=columns)) == buf.getvalue().encode()
    assert b"".join(trials_chunks(rows, ".csv", batch=batch)) == buf.getvalue().encode()
    assert b"".join(trials_chunks([], ".csv")) == (",".join(CORE_COLUMNS) + "\n").encode()
    assert b"".join(trials_chunks([], ".jsonl.gz")) == gzip.compress(b"", mtime=0)


def _items(tmp_path: Path) -> Path:
    p = tmp_path / "items.jsonl"
    p.write_text("".join(json.dumps({"id": i, "benchmark": "b", "prompt": "?", "reference": "4",
                                     "scorer": "final-answer-line@1", "metadata": meta}) + "\n"
                         for i, meta in (("q1", {}), ("q2", {"difficulty": "hard", "model": "x"}))))
    return p


def _trial(item: str, t: int, text: str | None = "Final answer: 4", error_kind: str | None = None, **kw) -> dict:
    return {"type": "trial", "model": "m", "item": item, "trial": t, "text": text, "finish_reason": "stop",
            "refusal": None, "usage": {"prompt_tokens": 5, "completion_tokens": 7}, "error_kind": error_kind, **kw}


def _archive(tmp_path: Path, *records: dict) -> Path:
    p = tmp_path / "a.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return p


def test_a_retried_api_error_of_an_unknown_item_is_said_once_at_the_record_that_stands(tmp_path):
    arch = _archive(tmp_path, HEADER, _trial("qX", 0, None, "http_500"), _trial("q1", 0),
                    _trial("q2", 0, None, "http_500"), _trial("qX", 0, "Final answer: 4"), _trial("q2", 0, "no"),
                    _trial("q1", 1, None, "timeout"))
    rep = score_archive_to_file(arch, _items(tmp_path), tmp_path / "t.jsonl")
    assert rep.unscored == {"item_not_in_items_file": 1}
    assert [(w.code, w.line) for w in rep.diagnostics.warnings] == [("unknown_item", 5)]
    rows = [orjson.loads(x) for x in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    # q2's API error (line 4) was superseded by line 6: its row is gone, the rows in the order of their lines
    assert [(r["item"], r["trial"], r["category"]) for r in rows] == [
        ("q1", 0, "correct"), ("q2", 0, "format_failure"), ("q1", 1, "api_error")]
    assert rows[1]["meta_model"] == "x" and rows[1]["difficulty"] == "hard" and rows[0]["prompt_tokens"] == 5
    assert rep.counts == {"m": {"correct": 1, "wrong": 0, "format_failure": 1, "refusal": 0, "truncation": 0,
                                "api_error": 1}}
    with pytest.raises(BadInput, match=r"a\.jsonl:5: trial of item 'qX' is not in the items file"):
        score_archive_to_file(arch, _items(tmp_path), tmp_path / "t2.jsonl", strict=True)


def test_the_archive_s_bad_input_comes_before_the_scoring_options_errors(tmp_path):
    arch = _archive(tmp_path, HEADER, _trial("q1", 0), _trial("q1", 0))
    with pytest.raises(BadInput, match=r"a\.jsonl:3: duplicate trial"):
        score_archive_to_file(arch, _items(tmp_path), tmp_path / "t.jsonl", ifbench_strict=[tmp_path / "nope"])
    with pytest.raises(BadInput, match=r"nope: IFBench results file not found"):
        score_archive_to_file(_archive(tmp_path, HEADER, _trial("q1", 0)), _items(tmp_path), tmp_path / "t.jsonl",
                              ifbench_strict=[tmp_path / "nope"])


def test_a_gzip_archive_scores_as_the_archive_does(tmp_path):
    arch = _archive(tmp_path, HEADER, _trial("q1", 0), _trial("q2", 0, "Final answer: 5"))
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(arch.read_bytes()))
    score_archive_to_file(arch, _items(tmp_path), tmp_path / "t.jsonl")
    score_archive_to_file(gz, _items(tmp_path), tmp_path / "g.jsonl")
    assert (tmp_path / "t.jsonl").read_bytes() == (tmp_path / "g.jsonl").read_bytes()


def test_export_ifbench_counts_what_it_left_out_of_the_records_that_stand_in_their_order(tmp_path):
    from replicate.scoring.export import export_ifbench

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"p{i}", "benchmark": "ifbench", "prompt": f"Write {i} words.",
                                         "scorer": "ifbench@2"}) + "\n" for i in range(2)), encoding="utf-8")
    # line 2: an API error of p0, superseded on line 5; line 3: an empty response; line 4: an item not ifbench's
    # whose API error stands
    arch = _archive(tmp_path, HEADER, _trial("p0", 0, None, "http_500"), _trial("p1", 0, " "),
                    _trial("x9", 0, None, "http_500"), _trial("p0", 0, "four words"), _trial("p1", 1, "one"))
    rep = export_ifbench(arch, items, tmp_path / "out")
    assert rep.files == {"trial-0.jsonl": 1, "trial-1.jsonl": 1}
    assert list(rep.left_out.items()) == [("no response (api_error or empty)", 1), ("not an ifbench item", 1)]
    assert orjson.loads((tmp_path / "out" / "trial-0.jsonl").read_bytes()) == {"prompt": "Write 0 words.",
                                                                                "response": "four words"}
