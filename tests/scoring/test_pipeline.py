"""archive + items -> trials table: categories, schema, formats, the IFBench join."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import collect
from replicate.collect.simserver import load_sim_config, start_sim_server
from replicate.errors import BadInput, UsageError
from replicate.scoring.pipeline import score_archive_to_file
from support.paths import IFBENCH, text_of

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
IFB = IFBENCH  # the committed release (fixtures/case-studies/ifbench)
CATS = {"correct", "wrong", "format_failure", "refusal", "truncation", "api_error"}


def validate_trials(rows):
    """The trials-table contract, checked independently of the writer."""
    seen = set()
    per_item_meta = {}
    for n, r in enumerate(rows, 1):
        assert {"model", "item", "trial", "benchmark", "category"} <= set(r), n
        assert isinstance(r["model"], str) and isinstance(r["item"], str) and isinstance(r["benchmark"], str)
        assert isinstance(r["trial"], int) and r["trial"] >= 0
        assert r["category"] in CATS
        assert r.get("correct_loose") in (None, True, False)
        key = (r["model"], r["item"], r["trial"])
        assert key not in seen, f"duplicate {key}"
        seen.add(key)
        meta = r.get("difficulty")
        assert per_item_meta.setdefault(r["item"], meta) == meta


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("score")
    sim = replace(load_sim_config(FIX / "sim.toml"), retry_after=0.0, hang_seconds=1.0,
                  faults=MappingProxyType(dict(rate_429=0.05, rate_500=0.03, rate_malformed=0.03, rate_truncate=0.05,
                                               rate_refusal=0.05, rate_no_answer=0.05)))
    with start_sim_server(sim) as srv:
        cfg = load_config(FIX / "config.toml").with_overrides(base_url=srv.url, api_key_env="PATH")
        cfg = replace(cfg, retry=replace(cfg.retry, backoff_base=0.001))
        collect(cfg, load_items(FIX / "items.jsonl"), tmp / "a.jsonl")
        stats = Counter(srv.stats)
    return tmp / "a.jsonl", stats


def test_score_categories_match_what_the_sim_served(collected, tmp_path):
    arch, stats = collected
    rep = score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.jsonl")
    rows = [orjson.loads(line) for line in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    validate_trials(rows)
    got = Counter(r["category"] for r in rows)
    assert got == {
        "correct": stats["correct"],
        "wrong": stats["wrong"],
        "format_failure": stats["rate_no_answer"],
        "refusal": stats["rate_refusal"],
        "truncation": stats["rate_truncate"],
        "api_error": 10,  # q13 is too long: 2 models x K=5
    }
    assert rep.rows == 200 and sum(sum(c.values()) for c in rep.counts.values()) == 200
    assert {m: sum(c.values()) for m, c in rep.counts.items()} == {"sim-a": 100, "sim-b": 100}
    by_item = {r["item"]: r for r in rows}
    assert by_item["q01"]["scorer"] == "final-answer-line@1" and by_item["q09"]["scorer"] == "mcq-letter@1"
    assert by_item["q20"]["scorer"] == "math-equivalence@1" and by_item["q20"]["difficulty"] == "hard"
    assert all(r["correct_loose"] is None for r in rows)
    assert rep.scorers == {"final-answer-line@1": 80, "math-equivalence@1": 60, "mcq-letter@1": 60}


def test_csv_and_gz_outputs_hold_the_same_rows(collected, tmp_path):
    arch, _ = collected
    score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.jsonl")
    score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.csv")
    score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.jsonl.gz")
    js = [orjson.loads(x) for x in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    gz = [orjson.loads(x) for x in gzip.decompress((tmp_path / "t.jsonl.gz").read_bytes()).splitlines()]
    assert gz == js
    with open(tmp_path / "t.csv", newline="") as fh:
        rd = list(csv.DictReader(fh))
    assert list(rd[0])[:7] == ["model", "item", "trial", "benchmark", "category", "correct_loose", "scorer"]
    assert [(r["model"], r["item"], int(r["trial"]), r["category"]) for r in rd] == [
        (r["model"], r["item"], r["trial"], r["category"]) for r in js]
    assert {r["correct_loose"] for r in rd} == {""}


def test_score_cli_report(collected, tmp_path):
    arch, stats = collected
    r = CliRunner().invoke(app, ["score", str(arch), "--items", str(FIX / "items.jsonl"),
                                 "--out", str(tmp_path / "t.csv")])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["model", "correct", "wrong", "format_failure", "refusal", "truncation",
                                "api_error", "trials"]
    assert f"200 trials written to {tmp_path / 't.csv'}" in r.stdout
    assert "refusal detector: refusal-phrases@1" in r.stdout
    js = CliRunner().invoke(app, ["score", str(arch), "--items", str(FIX / "items.jsonl"),
                                  "--out", str(tmp_path / "t.jsonl"), "--format", "json"])
    data = json.loads(js.stdout)
    assert data["rows"] == 200 and data["rates"]["sim-a"]["api_error"] == pytest.approx(5 / 100)


def test_bad_out_extension_and_unknown_scorer(collected, tmp_path):
    arch, _ = collected
    with pytest.raises(UsageError, match=r"unknown table format; use a name ending in \.jsonl, \.jsonl\.gz or \.csv"):
        score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.parquet")
    with pytest.raises(UsageError, match=r"unknown scorer 'exact-match@1'.*registered scorers: "):
        score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.jsonl", scorer="exact-match@1")


def test_duplicate_trial_in_archive_is_bad_input(collected, tmp_path):
    arch, _ = collected
    lines = arch.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "dup.jsonl"
    bad.write_bytes(b"".join(lines) + lines[1])
    with pytest.raises(BadInput, match=rf"dup\.jsonl:{len(lines) + 1}: duplicate trial .* \(also on line 2\)"):
        score_archive_to_file(bad, FIX / "items.jsonl", tmp_path / "t.jsonl")


def test_refusal_detector_only_when_no_answer(tmp_path):
    items = tmp_path / "i.jsonl"
    items.write_text(json.dumps({"id": "1", "benchmark": "b", "prompt": "p", "reference": "4",
                                 "scorer": "final-answer-line@1"}) + "\n")
    from replicate.collect.archive import ArchiveWriter

    header = {"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x",
              "items": {}}
    w = ArchiveWriter(tmp_path / "a.jsonl")
    w.append(header)
    texts = ["I'm sorry, but I can't help with that.", "I can't help with that.\nFinal answer: 4", "no idea"]
    for t, text in enumerate(texts):
        w.append({"type": "trial", "model": "m", "item": "1", "trial": t, "text": text, "finish_reason": "stop",
                  "refusal": None, "usage": {}, "error_kind": None})
    w.close()
    def cats(det):
        return [r["category"] for r in (orjson.loads(x) for x in (tmp_path / "t.jsonl").read_bytes().splitlines())]
    score_archive_to_file(tmp_path / "a.jsonl", items, tmp_path / "t.jsonl")
    assert cats(1) == ["refusal", "correct", "format_failure"]
    score_archive_to_file(tmp_path / "a.jsonl", items, tmp_path / "t.jsonl", refusal_detector=None)
    assert cats(0) == ["format_failure", "correct", "format_failure"]


# -- IFBench: real verifier output ------------------------------------------------------


def _jsonl(path):
    return [json.loads(x) for x in text_of(path).splitlines() if x.strip()]


@pytest.fixture
def ifbench(tmp_path):
    test_rows = _jsonl(IFB / "IFBench_test.jsonl.gz")
    items = tmp_path / "ifb_items.jsonl"
    items.write_text("".join(json.dumps({"id": r["key"], "benchmark": "ifbench", "prompt": r["prompt"],
                                         "scorer": "ifbench@1"}) + "\n" for r in test_rows))
    key_by_prompt = {r["prompt"]: r["key"] for r in test_rows}
    out = _jsonl(IFB / "sample_output.jsonl.gz")
    lines = [orjson.dumps({"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0,
                           "params_hash": "x", "items": {}})]
    for r in out:
        if r["prompt"] in key_by_prompt:
            lines.append(orjson.dumps({"type": "trial", "model": "sample", "item": key_by_prompt[r["prompt"]],
                                       "trial": 0, "text": r["response"], "finish_reason": "stop", "refusal": None,
                                       "usage": {}, "error_kind": None}))
    arch = tmp_path / "ifb.jsonl"
    arch.write_bytes(b"\n".join(lines) + b"\n")
    return arch, items, key_by_prompt


def test_ifbench_join_against_official_results(ifbench, tmp_path):
    arch, items, key_by_prompt = ifbench
    strict, loose = _jsonl(IFB / "eval_results_strict.jsonl.gz"), _jsonl(IFB / "eval_results_loose.jsonl.gz")
    rep = score_archive_to_file(arch, items, tmp_path / "t.jsonl", ifbench_strict=[IFB / "eval_results_strict.jsonl.gz"],
                                ifbench_loose=[IFB / "eval_results_loose.jsonl.gz"])
    rows = {r["item"]: r for r in (orjson.loads(x) for x in (tmp_path / "t.jsonl").read_bytes().splitlines())}
    validate_trials(rows.values())
    expect_strict = {key_by_prompt[r["prompt"]]: r["follow_all_instructions"] for r in strict if r["prompt"] in key_by_prompt}
    expect_loose = {key_by_prompt[r["prompt"]]: r["follow_all_instructions"] for r in loose if r["prompt"] in key_by_prompt}
    assert len(rows) == len(expect_strict) == 290
    assert {i: r["category"] == "correct" for i, r in rows.items()} == expect_strict
    assert {i: r["correct_loose"] for i, r in rows.items()} == expect_loose
    assert all(r["scorer"] == "ifbench@1" for r in rows.values())
    j = rep.ifbench
    assert (j["result_prompts"], j["unmatched_prompts"], j["unmatched_prompts_whitespace_only"]) == (294, 4, 3)
    assert len(j["items_without_result"]) == 10
    assert rep.diagnostics.counts() == {"ifbench_unmatched": 1, "ifbench_no_result": 1}


def test_ifbench_response_never_verified_is_left_out_and_counted(ifbench, tmp_path):
    arch, items, _ = ifbench
    with open(arch, "ab") as fh:
        fh.write(orjson.dumps({"type": "trial", "model": "other", "item": "0", "trial": 0, "text": "a new reply",
                               "finish_reason": "stop", "refusal": None, "usage": {}, "error_kind": None}) + b"\n")
    kw = dict(ifbench_strict=[IFB / "eval_results_strict.jsonl.gz"], ifbench_loose=[IFB / "eval_results_loose.jsonl.gz"])
    rep = score_archive_to_file(arch, items, tmp_path / "t.jsonl", **kw)
    assert rep.rows == 290 and rep.unscored == {"ifbench@1: no IFBench verifier result for this response": 1}
    with pytest.raises(BadInput, match=r"ifbench"):
        score_archive_to_file(arch, items, tmp_path / "t.jsonl", strict=True, **kw)


def test_ifbench_needs_results(ifbench, tmp_path):
    arch, items, _ = ifbench
    with pytest.raises(UsageError, match=r"ifbench@1 needs the verifier's results: pass ifbench_strict"):
        score_archive_to_file(arch, items, tmp_path / "t.jsonl")


def test_not_an_archive_empty_archive_and_unwritable_out(collected, tmp_path):
    arch, _ = collected
    items = str(FIX / "items.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(BadInput, match=r"empty\.jsonl: no header record: not an archive written by 'replicate collect'"):
        score_archive_to_file(empty, items, tmp_path / "t.jsonl")
    score_archive_to_file(arch, items, tmp_path / "t.jsonl")
    with pytest.raises(BadInput, match=r"t\.jsonl:1: the first record is not an archive header"):
        score_archive_to_file(tmp_path / "t.jsonl", items, tmp_path / "t2.jsonl")  # a trials table, not an archive
    header_only = tmp_path / "h.jsonl"
    header_only.write_bytes(arch.read_bytes().splitlines(keepends=True)[0])
    rep = score_archive_to_file(header_only, items, tmp_path / "t0.jsonl")
    assert rep.rows == 0 and rep.diagnostics.counts() == {"empty_archive": 1}
    assert (tmp_path / "t0.jsonl").read_bytes() == b""
    r = CliRunner().invoke(app, ["score", str(arch), "--items", items, "--out", str(tmp_path / "no" / "t.jsonl")])
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert r.stderr == (f"Error: {tmp_path / 'no' / 't.jsonl'}: cannot write: No such file or directory; nothing was "
                        "written (an earlier file there is unchanged)\n")
    assert not (tmp_path / "no").exists() and not list(tmp_path.glob(".t.jsonl.tmp*"))


def test_ifbench_warnings_say_what_the_join_line_says(tmp_path):
    # Synthetic verifier results in the official shape: prompt "A" and "B" match items, " A " differs
    # only in whitespace, "Z" matches nothing; item "c" has no result at all.
    from replicate.output import Format
    from replicate.scoring.pipeline import render_report

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": i, "benchmark": "ifbench", "prompt": p, "scorer": "ifbench@1"}) + "\n"
                             for i, p in [("a", "A"), ("b", "B"), ("c", "C")]))
    header = {"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x", "items": {}}
    trials = [{"type": "trial", "model": "m", "item": i, "trial": 0, "text": f"reply {i}", "finish_reason": "stop",
               "refusal": None, "usage": {}, "error_kind": None} for i in ("a", "b")]
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *trials]))
    strict = tmp_path / "eval_results_strict.jsonl"
    strict.write_text("".join(json.dumps({"prompt": p, "response": r, "follow_all_instructions": v}) + "\n"
                              for p, r, v in [("A", "reply a", True), ("B", "reply b", False),
                                              (" A ", "reply a", True), ("Z", "x", False)]))
    rep = score_archive_to_file(arch, items, tmp_path / "t.jsonl", ifbench_strict=[strict])
    text = render_report(rep, Format.table)
    assert "ifbench join: 4 verifier prompts, 2 match no item (1 only by whitespace), 1 items without a result" in text
    assert ("warning: 2 verifier prompt(s) match no item (1 differ only in surrounding whitespace) "
            "[ifbench_unmatched]") in text
    assert "warning: 1 item(s) have no verifier result (e.g. c) [ifbench_no_result]" in text
    assert "warning [ifbench_unmatched]: 1" not in text  # the count of warnings, not of prompts


def test_many_warnings_of_one_kind_are_counted_with_the_first():
    from replicate.diagnostics import Diagnostics
    from replicate.scoring.pipeline import warning_lines

    d = Diagnostics()
    d.warn("torn_line", "first", path="a.jsonl", line=3)
    d.warn("torn_line", "second", path="a.jsonl", line=9)
    d.warn("empty_archive", "nothing", path="b.jsonl")
    assert warning_lines(d) == ["warning: b.jsonl: nothing [empty_archive]",
                                "warning: 2 warnings [torn_line], the first: a.jsonl:3: first [torn_line]"]
