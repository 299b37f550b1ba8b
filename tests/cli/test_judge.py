"""The judge commands end to end: parse, compare, chain, cells, demo (CliRunner, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.parsing import PARSERS, Parser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"
TOY = Parser("toy-digit@1", "the first digit 0-3 in the text", lambda t: next((int(c) for c in t if c in "0123"), None))


@pytest.fixture(autouse=True)
def toy_parser():
    # registered for each test and removed after it, so that no other test (a
    # listing of the installed parsers) sees it in the same process
    added = "toy-digit@1" not in PARSERS
    if added:
        PARSERS.register(TOY)
    yield
    if added:
        PARSERS.unregister(TOY.name)


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def rec(q, d, gold, out, **extra):
    r = {"query_id": q, "corpus_id": d, "original_qrel_score": gold, "model_output": out}
    r.update(extra)
    return json.dumps(r)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def pair(tmp_path):
    # gold 1 everywhere; old/new labels chosen for hand-computed cells
    #          a  b  c  d  e  f  g     h
    old_lab = ["1", "1", "1", "0", "0", "1", "x", "1"]
    new_lab = ["1", "0", "1", "1", "0", "1", "1", "x"]
    keys = "abcdefgh"
    old = write(tmp_path / "old.jsonl", [rec("q", k, 1.0, o) for k, o in zip(keys, old_lab)])
    new = write(tmp_path / "new.jsonl", [rec("q", k, 1, n, **({"original_output": "no"} if k == "a" else {})) for k, n in zip(keys, new_lab)])
    return old, new


def test_compare_json_keys_and_cells(pair):
    old, new = pair
    res = run("compare", old, new, "--parser", "toy-digit@1", "--format", "json")
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    # intersect drops g (old unparsed) and h (new unparsed):
    # a both, b only_old, c both, d only_new, e neither, f both
    assert out["cells"] == {"both": 3, "only_old": 1, "only_new": 1, "neither": 1}
    assert out["n"] == 6
    for key in [
        "n", "cells", "em_old", "em_new", "unparsed", "regression_rate", "regression_share_of_old_correct",
        "backward_rate", "change_rate", "independent_regression_rate", "independence_ratio", "mcnemar_p",
        "parser", "unparsed_policy", "old", "new", "warnings",
    ]:
        assert key in out, key
    assert out["unparsed"] == {"old": 1, "new": 1}
    assert out["regression_share_of_old_correct"] == 1 / 4
    assert out["change_rate"] == 2 / 6
    assert out["parser"] == "toy-digit@1" and out["unparsed_policy"] == "intersect"
    f = out["old"]["files"][0]
    assert f["path"] == str(old) and len(f["sha256"]) == 64 and f["records"] == 8
    assert out["new"]["files"][0]["rewritten"] == 1
    assert out["warnings"] == {"count": 0, "by_code": {}, "first": []}


def test_compare_unparsed_wrong_policy(pair):
    old, new = pair
    out = orjson.loads(run("compare", old, new, "-p", "toy-digit@1", "--unparsed", "wrong", "-f", "json").stdout)
    # g: old wrong (unparsed), new right -> only_new; h: old right, new unparsed -> only_old
    assert out["cells"] == {"both": 3, "only_old": 2, "only_new": 2, "neither": 1}
    assert out["unparsed_policy"] == "wrong"


def test_compare_table_text(pair):
    old, new = pair
    res = run("compare", old, new, "-p", "toy-digit@1", "--replicates", "0")
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert text.startswith("old -> new\n==========\nparser: toy-digit@1; unparsed policy: intersect")
    assert "  old: 8 items, 1 unparsed (1 of them on shared items)" in text
    assert "  new: 8 items, 1 unparsed (1 of them on shared items)\n    1 rewritten by a retry script (original_output kept)\n" in text
    assert "old right  3 (both)      1 (only_old)  4" in text
    assert "regression share of old-correct  only_old / (both + only_old)  25.00%" in text
    assert (
        "Reading: the new version loses 25.0% of what the old one got right (1 of 4 items) and gains 1 it got\n"
        "  wrong; independence ratio 0.75"
    ) in text
    assert max(map(len, text.splitlines())) <= 100
    assert "identity: regression - backward = 16.67% - 16.67% = 0.00%" in text


def test_compare_markdown(pair):
    old, new = pair
    text = run("compare", old, new, "-p", "toy-digit@1", "-f", "markdown").stdout
    assert text.startswith("## old -> new\n")
    assert "| old right | 3 (both)" in text


def test_compare_pooled_with_old_new_options(tmp_path, pair):
    old, new = pair
    old2 = write(tmp_path / "old2.jsonl", [rec("r", "z", 2, "2")])
    new2 = write(tmp_path / "new2.jsonl", [rec("r", "z", 2, "0")])
    out = orjson.loads(
        run("compare", "--old", old, "--old", old2, "--new", new, "--new", new2, "-p", "toy-digit@1", "-f", "json").stdout
    )
    assert out["cells"] == {"both": 3, "only_old": 2, "only_new": 1, "neither": 1}
    assert [f["path"] for f in out["old"]["files"]] == [str(old), str(old2)]
    assert out["old"]["name"] == "old (+1 file)"
    # the positional form for one file each is the same as --old/--new
    a = orjson.loads(run("compare", old, new, "-p", "toy-digit@1", "-f", "json").stdout)
    b = orjson.loads(run("compare", "--old", old, "--new", new, "-p", "toy-digit@1", "-f", "json").stdout)
    assert a == b


def test_compare_usage_errors(pair):
    old, new = pair
    res = run("compare", old, new, "--old", old, "-p", "toy-digit@1")
    assert res.exit_code == 2 and "Error: give OLD NEW as two arguments or with --old/--new, not both" in res.stderr
    res = run("compare", old, new)
    assert res.exit_code == 2 and "Error: these runs hold raw outputs: name a parser with --parser, one of" in res.stderr
    res = run("compare", old, new, "-p", "nope@1")
    assert res.exit_code == 2 and "Error: unknown parser 'nope@1'" in res.stderr


def test_bad_input_exits_2_naming_file_and_line(tmp_path, pair):
    old, _ = pair
    bad = write(tmp_path / "bad.jsonl", [rec("q", "a", 1, "1"), "{oops"])
    res = run("compare", old, bad, "-p", "toy-digit@1")
    assert res.exit_code == 2
    assert res.stderr.startswith(f"Error: {bad}:2: not JSON")


def test_warnings_go_to_stderr_and_strict_fails(tmp_path, pair):
    old, _ = pair
    lines = (old.read_text().splitlines())
    blanky = write(tmp_path / "blank.jsonl", lines[:2] + [""] + lines[2:])
    res = run("compare", old, blanky, "-p", "toy-digit@1", "-f", "json")
    assert res.exit_code == 0
    assert "warning: 1 warning(s) about the input (--strict makes them errors):" in res.stderr
    assert f"{blanky}:3: blank line (skipped) [blank-line]" in res.stderr
    assert orjson.loads(res.stdout)["warnings"]["by_code"] == {"blank-line": 1}
    res = run("compare", old, blanky, "-p", "toy-digit@1", "--strict")
    assert res.exit_code == 2
    assert f"Error: {blanky}:3: blank line (skipped) [blank-line; --strict]" in res.stderr


def test_cells_published_example():
    res = run("cells", "6252", "5776", "1455", "7163", "-f", "json")
    out = orjson.loads(res.stdout)
    assert round(100 * out["regression_rate"], 1) == 28.0
    assert round(100 * out["regression_share_of_old_correct"], 1) == 48.0
    assert round(100 * out["backward_rate"], 1) == 7.0
    assert round(100 * out["independent_regression_rate"], 1) == 36.5
    assert round(out["independence_ratio"], 2) == 0.77
    text = run("cells", "6252", "5776", "1455", "7163").stdout
    assert "Reading: the new version loses 48.0% of what the old one got right (5776 of 12028 items)" in text
    assert "regression rate                  only_old / n                  27.98%   [27.4%, 28.6%]" in text
    assert "independence ratio               regression / independent      0.77" in text


def test_cells_flags_a_table_of_fewer_items_than_min_items_as_compare_and_floor_do():
    # 19 items < the default --min-items 100 (the threshold edges and floors use): flagged in JSON and text
    out = orjson.loads(run("cells", "6", "5", "1", "7", "-f", "json").stdout)
    assert out["small_sample"] is True and out["uncertainty"]["min_items"] == 100
    assert out["flags"] == [{
        "code": "small_sample", "where": "four-cell table",
        "message": "the table has only n = 19 items, fewer than --min-items 100: too few for a verdict (read the intervals)",
    }]
    for fmt in ("table", "markdown"):
        text = " ".join(run("cells", "6", "5", "1", "7", "-f", fmt).stdout.split())
        assert "Warning: the table has only n = 19 items, fewer than --min-items 100: too few for a verdict" in text
    # n = 19 is not below --min-items 19; the published table (n = 20,646) is never flagged
    at = orjson.loads(run("cells", "6", "5", "1", "7", "--min-items", "19", "-f", "json").stdout)
    assert at["small_sample"] is False and at["flags"] == [] and at["uncertainty"]["min_items"] == 19
    assert "Warning" not in run("cells", "6", "5", "1", "7", "--min-items", "19").stdout
    big = orjson.loads(run("cells", "6252", "5776", "1455", "7163", "-f", "json").stdout)
    assert big["small_sample"] is False and big["flags"] == []


def test_cells_rejects_negative():
    res = run("cells", "1", "-2", "3", "4")
    assert res.exit_code == 2


def test_parse_summary_and_labels(tmp_path, pair):
    old, _ = pair
    out_path = tmp_path / "labels.jsonl"
    res = run("parse", old, "-p", "toy-digit@1", "--labels", out_path, "-f", "json")
    assert res.exit_code == 0, res.output
    (s,) = orjson.loads(res.stdout)["runs"]
    assert (s["lines"], s["records"], s["parsed"], s["unparsed"]) == (8, 8, 7, 1)
    assert s["labels"] == {"0": 2, "1": 5} and s["gold"] == {"1": 8}
    rows = [orjson.loads(line) for line in out_path.read_bytes().splitlines()]
    assert rows[0] == {"query_id": "q", "corpus_id": "a", "label": 1, "gold": 1}
    assert rows[6] == {"query_id": "q", "corpus_id": "g", "label": None, "gold": 1}
    text = run("parse", old, "-p", "toy-digit@1").stdout
    assert text.startswith("old: read with toy-digit@1\n")
    # one query: too few clusters for an interval (resampling it whole would give zero width), and it says so
    assert "unparsed                          1 (12.5% no interval (1 cluster))" in text
    assert "[12.5%, 12.5%]" not in text and "too few query_id clusters for an interval: 1" in text
    plain = run("parse", old, "-p", "toy-digit@1", "--replicates", "0").stdout
    assert "unparsed                          1 (12.5%)" in plain


def test_parse_labels_needs_one_file(pair):
    old, new = pair
    res = run("parse", old, new, "-p", "toy-digit@1", "--labels", "x.jsonl")
    assert res.exit_code == 2 and "Error: --labels writes one file's labels; got 2 files" in res.stderr


def test_chain_files_and_runs_toml(tmp_path, pair):
    old, new = pair
    third = write(tmp_path / "third.jsonl", [rec("q", k, 1, "1") for k in "abcdefgh"])
    res = run("chain", old, new, third, "-p", "toy-digit@1", "-f", "json")
    assert res.exit_code == 0, res.output
    edges = orjson.loads(res.stdout)["edges"]
    assert [(e["old"]["name"], e["new"]["name"]) for e in edges] == [("old", "new"), ("new", "third")]
    assert edges[0]["cells"] == {"both": 3, "only_old": 1, "only_new": 1, "neither": 1}
    toml = tmp_path / "runs.toml"
    toml.write_text('[runs]\nv1 = ["old.jsonl"]\nv2 = "new.jsonl"\nv3 = ["third.jsonl"]\n')
    edges2 = orjson.loads(run("chain", "--runs", toml, "-p", "toy-digit@1", "-f", "json").stdout)["edges"]
    assert [e["cells"] for e in edges2] == [e["cells"] for e in edges]
    assert [e["old"]["name"] for e in edges2] == ["v1", "v2"]
    table = run("chain", "--runs", toml, "-p", "toy-digit@1").stdout
    assert table.splitlines()[3].split()[:8] == ["1", "v1", "v2", "6", "3", "1", "1", "1"]


def test_chain_needs_two_runs(pair):
    old, _ = pair
    res = run("chain", old, "-p", "toy-digit@1")
    assert res.exit_code == 2 and "Error: a chain needs at least two runs; got 1" in res.stderr


@pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")
def test_demo_runs_on_the_bundled_example():
    res = run("demo")
    assert res.exit_code == 0, res.output
    assert "SYNTHETIC" in res.stdout
    assert "alpha-2024-05  alpha-2024-08" in res.stdout
    assert "parser: umbrela-fallback@1; unparsed policy: intersect; items shared by all runs: 288" in res.stdout
    assert max(map(len, res.stdout.splitlines())) <= 100  # readable in a 100-column terminal


@pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")
def test_example_release_with_real_parser():
    res = run("chain", "--runs", EXAMPLE / "runs.toml", "-p", "umbrela-fallback@1", "-f", "json")
    assert res.exit_code == 0, res.output
    edges = orjson.loads(res.stdout)["edges"]
    assert len(edges) == 3
    assert all(e["n"] > 250 for e in edges)
    gemini = edges[1]["new"]["files"]
    assert {f["output_field"] for f in gemini} == {"gemini_output"}
    assert sum(f["rewritten"] for f in edges[0]["new"]["files"]) == 2
    # EXAM runs need no parser
    res = run("compare", EXAMPLE / "exam" / "exam-beta-1.jsonl.gz", EXAMPLE / "exam" / "exam-beta-2.jsonl.gz", "-f", "json")
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert out["parser"] == "exam-grades" and out["warnings"]["by_code"] == {"exam-no-questions": 1}


def test_markdown_names_every_file_read_with_its_sha256(pair):
    import hashlib

    old, new = pair
    for args in (["compare", old, new], ["chain", old, new]):
        md = run(*args, "-p", "toy-digit@1", "-f", "markdown").stdout
        assert "\n### Input\n\n- Local files (not from a fetched release):\n" in md
        for p in (old, new):
            assert f"  - `{p}`: sha256 `{hashlib.sha256(p.read_bytes()).hexdigest()}`\n" in md


def test_compare_json_names_the_release_of_fetched_files(tmp_path, pair):
    old, new = pair
    import hashlib

    manifest = {
        "source": "https://example.invalid/study.git",
        "commit": "a" * 40,
        "repository": {"licence": "MIT"},
        "files": [
            {"path": "old.jsonl", "sha256": hashlib.sha256(old.read_bytes()).hexdigest()},
            {"path": "new.jsonl", "sha256": "0" * 64},
        ],
    }
    (tmp_path / "replicate-manifest.json").write_text(json.dumps(manifest))
    out = orjson.loads(run("compare", old, new, "-p", "toy-digit@1", "-f", "json").stdout)
    o, n = out["old"]["files"][0], out["new"]["files"][0]
    expected = {
        "manifest": str(tmp_path / "replicate-manifest.json"),
        "source": "https://example.invalid/study.git",
        "commit": "a" * 40,
        "repo_path": "old.jsonl",
        "licence": "MIT",
    }
    assert {k: o["release"].get(k) for k in expected} == expected
    assert o["matches_manifest"] is True and n["matches_manifest"] is False


def test_gold_disagreement_between_runs_exits_2(tmp_path, pair):
    old, _ = pair
    other = write(tmp_path / "other.jsonl", [rec("q", k, 2 if k == "c" else 1, "1") for k in "abcdefgh"])
    res = run("compare", old, other, "-p", "toy-digit@1")
    assert res.exit_code == 2
    assert f"gold grades disagree between runs on 1 shared item(s): item q / c: old says 1, other says 2 ({old}:3, {other}:3)" in res.stderr


def test_parse_exam_file_needs_no_parser():
    res = run("parse", EXAMPLE / "exam" / "exam-beta-2.jsonl.gz", "-f", "json")
    assert res.exit_code == 0, res.output
    (s,) = orjson.loads(res.stdout)["runs"]
    assert s["parser"] == "exam-grades" and s["records"] == 24 and s["lines"] == 4


@pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")
def test_demo_on_a_generated_copy(tmp_path):
    from replicate.examples.judge_release import write_example

    where = write_example(tmp_path / "ex")
    res = run("demo", where, "-f", "json")
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert out["data"] == str(where) and len(out["edges"]) == 3
    res = run("demo", tmp_path)
    assert res.exit_code == 2 and "has no runs.toml" in res.stderr


@pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")
def test_demo_without_the_bundled_folder_leaves_no_temp_dir(tmp_path, monkeypatch):
    import tempfile

    import replicate.examples.demo as demo

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(demo, "bundled_example", lambda: None)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    res = run("demo")
    assert res.exit_code == 0, res.output
    assert "Data: the bundled example release (a temporary copy, removed afterwards)" in res.stdout
    assert "replicate demo example/" in res.stdout and "replicate compare fixtures" not in res.stdout
    assert list(scratch.iterdir()) == []
    res = run("demo", "-f", "json")
    assert res.exit_code == 0 and orjson.loads(res.stdout)["data"] is None
    assert list(scratch.iterdir()) == []


@pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")
def test_demo_writes_the_example_into_a_new_dir_and_keeps_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run("demo", "example")
    assert res.exit_code == 0, res.output
    assert "Data: the bundled example release (written to example)" in res.stdout
    assert "replicate chain --runs example/runs.toml --parser umbrela-fallback@1" in res.stdout
    assert (tmp_path / "example" / "runs.toml").is_file()
    again = run("demo", "example")  # now an existing release: read as it is
    assert again.exit_code == 0 and "Data: example\n" in again.stdout


@pytest.mark.skipif("umbrela-strict@1" not in PARSERS, reason="built-in parsers not installed")
def test_demo_shows_an_undefined_rate_of_the_other_parser_as_undefined(tmp_path):
    # bare digits: umbrela-fallback@1 reads them all, umbrela-strict@1 none, so its edge has n = 0
    write(tmp_path / "a.jsonl", [rec("q", k, 2, out) for k, out in zip("abcd", "2103")])
    write(tmp_path / "b.jsonl", [rec("q", k, 2, out) for k, out in zip("abcd", "2201")])
    write(tmp_path / "runs.toml", ["[runs]", '"a" = ["a.jsonl"]', '"b" = ["b.jsonl"]'])
    res = run("demo", tmp_path, "-p", "umbrela-fallback@1")
    assert res.exit_code == 0, res.output
    assert "read by umbrela-strict@1 (regression rate per edge):\n  a -> b: - over n = 0 (unparsed 4/4)\n" in res.stdout


def test_runs_sharing_no_item_is_bad_input(tmp_path, pair):
    old, _ = pair
    other = write(tmp_path / "other.jsonl", [rec("z", k, 1, "1") for k in "ab"])
    res = run("compare", old, other, "-p", "toy-digit@1")
    assert res.exit_code == 2
    assert "Error: the runs old, other share no item (items are keyed by query_id, corpus_id); check the files or set --key-field" in res.stderr


def test_field_options_for_other_releases(tmp_path):
    rows_old = [json.dumps({"qid": k, "grade": 2, "reply": r}) for k, r in zip("abc", ["2", "2", "0"])]
    rows_new = [json.dumps({"qid": k, "grade": 2, "reply": r}) for k, r in zip("abc", ["2", "1", "2"])]
    old = write(tmp_path / "o.jsonl", rows_old)
    new = write(tmp_path / "n.jsonl", rows_new)
    args = ["--key-field", "qid", "--gold-field", "grade", "--output-field", "reply", "-p", "toy-digit@1", "-f", "json"]
    res = run("compare", old, new, *args)
    assert res.exit_code == 0, res.output
    out = orjson.loads(res.stdout)
    assert out["cells"] == {"both": 1, "only_old": 1, "only_new": 1, "neither": 0}
    assert out["old"]["files"][0]["output_field"] == "reply"
    labels = tmp_path / "l.jsonl"
    run("parse", old, "--labels", labels, *args)
    assert orjson.loads(labels.read_bytes().splitlines()[2]) == {"qid": "c", "label": 0, "gold": 2}
    res = run("compare", old, new, "-p", "toy-digit@1")
    assert res.exit_code == 2 and "o.jsonl:1: record lacks key field 'query_id'" in res.stderr


def test_demo_counts_the_versions_of_the_release_it_is_given(tmp_path):
    from replicate.examples.judge_release import write_example

    where = write_example(tmp_path / "ex")
    toml = where / "runs.toml"
    lines = toml.read_text().splitlines()
    # keep the [runs] table's first two entries only (and drop [repeats])
    runs = [ln for ln in lines if ln.startswith('"alpha-')][:2]
    toml.write_text("[runs]\n" + "\n".join(runs) + "\n")
    result = run("demo", where)
    assert result.exit_code == 0, result.output
    assert "two versions of\none model" in result.stdout


def test_parse_shares_have_cluster_bootstrap_intervals_and_nothing_else_moves():
    import re

    import numpy as np

    from replicate.stats.bootstrap import Clusters
    from replicate.stats.shares import bootstrap_shares

    path = EXAMPLE / "results" / "alpha-2024-05_annotations.jsonl"
    js = orjson.loads(run("parse", path, "-p", "umbrela-fallback@1", "--replicates", "300", "--seed", "3", "-f", "json").stdout)
    (s,) = js["runs"]
    assert s["shares"]["unparsed_rate"] == s["unparsed"] / s["records"]
    assert s["shares"]["parsed_rate"] == s["parsed"] / s["records"]
    assert js["runs"][0]["uncertainty"]["seed"] == 3 and s["uncertainty"]["replicates"] == 300
    # the same shares by hand: the run's labels, clustered by query_id
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    parser = PARSERS.get("umbrela-fallback@1")
    labels = np.array(parser.parse_many([r["model_output"] for r in rows]))
    clusters = Clusters.from_values([str(r["query_id"]) for r in rows], "query_id")
    parsed = labels >= 0
    every = np.ones_like(parsed)
    keys = sorted(s["label_shares"], key=int)
    hits = np.stack([~parsed, *(labels == int(k) for k in keys)])
    counted = np.stack([every, *(parsed for _ in keys)])
    unparsed_iv, *label_ivs = bootstrap_shares(hits, counted, clusters=clusters, n_resamples=300, seed=3)
    got = s["shares"]["interval"]["unparsed_rate"]
    assert (got["low"], got["high"], got["method"], got["cluster"]) == (
        unparsed_iv.low, unparsed_iv.high, "cluster-bootstrap-t-percentile", "query_id")
    for k, iv in zip(keys, label_ivs):
        share = s["label_shares"][k]
        assert share["share"] == s["labels"].get(k, 0) / s["parsed"]
        assert (share["interval"]["share"]["low"], share["interval"]["share"]["high"]) == (iv.low, iv.high)
    # the text: each share followed by its interval; with --replicates 0 the output of before, byte for byte
    for fmt in ("table", "markdown"):
        text = run("parse", path, "-p", "umbrela-fallback@1", "-f", fmt).stdout
        plain = run("parse", path, "-p", "umbrela-fallback@1", "--replicates", "0", "-f", fmt).stdout
        assert "[" not in plain and "Intervals" not in plain
        assert "query_id clusters resampled whole, 1000 replicates, seed 0." in text
        stripped = re.sub(r"\nIntervals: [^\n]*\n", "", re.sub(r" \[[0-9.]+%, [0-9.]+%\]", "", text))

        def cells(t):  # the table's words, ignoring the padding that wider cells add
            return [re.sub(r"-{3,}", "---", " ".join(line.split())) for line in t.splitlines()]

        assert cells(stripped) == cells(plain)
    items = orjson.loads(run("parse", path, "-p", "umbrela-fallback@1", "--cluster", "item", "-f", "json").stdout)
    assert items["runs"][0]["shares"]["interval"]["unparsed_rate"]["method"] == "item-bootstrap-percentile"
    bad = run("parse", path, "-p", "umbrela-fallback@1", "--cluster", "nope")
    assert bad.exit_code == 2 and "--cluster" in bad.output


def test_without_a_parser_the_error_names_the_parsers_of_the_files_reader(tmp_path):
    """A reader of outputs names the parsers that read them (Reader.parsers): the error suggests those, the usual
    one first; runs whose readers name none (or a mix) get the list of every installed parser."""
    single = tmp_path / "gpt-4_single.jsonl"
    single.write_text(
        '{"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "user_prompt": "u", '
        '"judgment": "Rating: [[7]]", "score": 7, "turn": 1, "tstamp": 1.0}\n'
    )
    res = run("parse", str(single))
    assert res.exit_code == 2
    assert ("Outputs read by fastchat-single@1 are parsed with mtbench-single@2 (or mtbench-single@1): "
            "--parser mtbench-single@2." in res.stderr)
    umbrela = tmp_path / "umbrela.jsonl"
    umbrela.write_text('{"qid": "1", "docid": "d1", "query": "q", "passage": "p", "prediction": "##final score: 2", '
                       '"judgment": 2}\n')
    res = run("parse", str(umbrela))  # its three parsers, the usual one first
    assert ("Outputs read by umbrela-judge@1 are parsed with umbrela-fallback@1 (or umbrela-strict@1, "
            "umbrela-checked@1): --parser umbrela-fallback@1." in res.stderr)
    plain = write(tmp_path / "plain.jsonl", [rec("q", "a", 1, "1")])
    res = run("parse", plain)
    assert res.exit_code == 2 and "name a parser with --parser, one of" in res.stderr
    # a mix of readers, one naming no parser: no one suggestion
    from types import SimpleNamespace as NS

    from replicate.cli.judge_options import suggested_parsers

    def runs(*readers):
        return [NS(files=[NS(reader=r)]) for r in readers]

    assert suggested_parsers(runs("fastchat-single@1", "judge-jsonl@1")) == {}
    assert suggested_parsers(runs("fastchat-single@1", "fastchat-pair@1")) == {
        "fastchat-single@1": ("mtbench-single@2", "mtbench-single@1"),
        "fastchat-pair@1": ("mtbench-pair@1", "mtbench-pair-scores@1")}


def test_a_reader_names_only_parsers_of_its_outputs():
    import pytest

    from replicate.reading.contract import Reader

    def none(*_a):
        return None

    with pytest.raises(ValueError, match="bad"):
        Reader("x@1", "d", none, none, parsers=("bad name",))
    with pytest.raises(ValueError, match="only a reader of outputs names parsers"):
        Reader("x@1", "d", none, none, yields="verdicts", parsers=("number@1",))
    assert Reader("x@1", "d", none, none, parsers=("number@1",)).parsers == ("number@1",)
