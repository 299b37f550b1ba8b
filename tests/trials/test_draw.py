"""`replicate draw`: a seeded, stratified item sample written with its seed and the source's sha256."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import numpy as np
import orjson
import pytest
from scipy import stats
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.stats.stratified import proportional_allocation, stratified_draw

runner = CliRunner()


def items_file(path, n=50):
    rows = [{"id": f"i{k:03d}", "benchmark": "a" if k < 30 else "b", "prompt": "p", "reference": "r",
             "metadata": {"difficulty": ("easy", "hard", "hard")[k % 3]} if k != 7 else {}} for k in range(n)]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.mark.parametrize(("sizes", "n", "expect"), [
    ([80, 20, 80], 30, [14, 3, 13]),  # quotas 13 1/3, 3 1/3, 13 1/3: the one left goes to the first
    ([10, 10, 10], 30, [10, 10, 10]),
    ([1, 2, 97], 10, [0, 0, 10]),  # 0.1, 0.2, 9.7: the 0.7 remainder wins
    ([5, 5], 3, [2, 1]),
    ([3, 0, 3], 4, [2, 0, 2]),
])
def test_allocation_by_hand(sizes, n, expect):
    assert proportional_allocation(sizes, n) == expect


def test_the_draw_is_uniform_within_a_stratum():
    # each unit of a stratum of 10 is drawn with chance 3/10: inclusion counts over 2,000 seeds
    hits = Counter()
    for seed in range(2000):
        (got,) = stratified_draw([np.arange(10)], [3], seed=seed)
        assert len(set(got.tolist())) == 3
        hits.update(got.tolist())
    assert stats.chisquare([hits[u] for u in range(10)]).pvalue > 0.001


def test_draw_writes_the_source_lines_and_a_record_that_draws_them_again(tmp_path):
    src = items_file(tmp_path / "items.jsonl")
    out = tmp_path / "sample.jsonl"
    r = runner.invoke(app, ["draw", str(src), "--n", "12", "--strata", "difficulty", "--seed", "5", "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    lines = src.read_bytes().splitlines(keepends=True)
    drawn = out.read_bytes().splitlines(keepends=True)
    assert len(drawn) == 12 and all(x in lines for x in drawn)
    assert [lines.index(x) for x in drawn] == sorted(lines.index(x) for x in drawn)  # the source's order
    record = json.loads((tmp_path / "sample.jsonl.draw.json").read_text())
    assert record["source"]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert record["out"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert record["seed"] == 5 and record["strata_field"] == "difficulty"
    # 17 easy, 32 hard, 1 without a value: 12 * (17, 32, 1) / 50 = 4.08, 7.68, 0.24 -> 4, 7, 0; the one
    # left goes to the largest remainder (hard, 0.68)
    assert [(s["value"], s["available"], s["drawn"]) for s in record["strata"]] == [
        ("easy", 17, 4), ("hard", 32, 8), ("(missing)", 1, 0)]
    got = Counter(json.loads(x)["metadata"].get("difficulty") for x in drawn)
    assert got == Counter({"easy": 4, "hard": 8})
    # the recorded command draws the same bytes again
    again = record["command"].split()[1:]
    again[again.index("--out") + 1] = str(tmp_path / "again.jsonl")
    assert runner.invoke(app, again).exit_code == 0
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()
    # another seed, another sample: draw's own earlier output is replaced; a file of another origin needs --force
    r = runner.invoke(app, ["draw", str(src), "--n", "12", "--strata", "difficulty", "--seed", "6", "--out", str(out)])
    assert r.exit_code == 0 and out.read_bytes() != b"".join(drawn)
    other = tmp_path / "mine.jsonl"
    other.write_text("not a draw\n")
    r = runner.invoke(app, ["draw", str(src), "--n", "12", "--out", str(other)])
    assert r.exit_code == 2 and "exists and was not written by an earlier 'replicate draw'" in r.stderr
    assert other.read_text() == "not a draw\n"
    assert runner.invoke(app, ["draw", str(src), "--n", "12", "--out", str(other), "--force"]).exit_code == 0


def test_where_filters_before_drawing_and_errors_name_the_line(tmp_path):
    src = items_file(tmp_path / "items.jsonl")
    out = tmp_path / "s.jsonl"
    r = runner.invoke(app, ["draw", str(src), "--n", "20", "--where", "benchmark=b", "--out", str(out), "-f", "json"])
    assert r.exit_code == 0, r.stderr
    js = json.loads(r.stdout)
    assert js["items_matching"] == 20 and js["items_in_source"] == 50
    assert all(json.loads(x)["benchmark"] == "b" for x in out.read_text().splitlines())
    r = runner.invoke(app, ["draw", str(src), "--n", "21", "--where", "benchmark=b", "--out", str(out), "--force"])
    assert r.exit_code == 2 and "--n must lie in [1, 20] (the items matching benchmark=b in" in r.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "metadata": {"difficulty": "easy"}}\n{"id": "b", "metadata": {"difficulty": ["x"]}}\n')
    r = runner.invoke(app, ["draw", str(bad), "--n", "1", "--strata", "difficulty", "--out", str(out), "--force"])
    assert r.exit_code == 2 and "bad.jsonl:2" in r.stderr and "field 'difficulty' holds list" in r.stderr
    bad.write_text('{"id": "a"}\n{"id": "a"}\n')
    r = runner.invoke(app, ["draw", str(bad), "--n", "1", "--out", str(out), "--force"])
    assert r.exit_code == 2 and "duplicate item id 'a' (first on line 1)" in r.stderr


def test_where_matching_no_item_is_named(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "benchmark": "x"}\n{"id": "b", "benchmark": "y"}\n')
    res = runner.invoke(app, ["draw", str(items), "--n", "1", "--where", "benchmark=z", "--out", str(tmp_path / "d.jsonl")])
    assert res.exit_code == 2
    assert f"--where benchmark=z matches none of the 2 items in {items}" in res.output, res.output
