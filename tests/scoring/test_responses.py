"""`replicate score` on released responses (responses@1): prompt/response JSONL joined to the items and scored.

Synthetic files are our own, written here; the real file is IFBench's released
sample_output.jsonl (committed under fixtures/case-studies/ifbench) with the official
verifier's results of the same responses.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.scoring.responses import PromptIndex, normalise, score_responses_to_file, score_to_file
from support.paths import IFBENCH as IFB, text_of

ITEMS = [
    {"id": "a", "benchmark": "arith", "prompt": "What is 2 + 2?", "reference": "4", "scorer": "final-answer-line@1"},
    {"id": "b", "benchmark": "arith", "prompt": "What is 3 + 3?\nAnswer briefly.", "reference": "6",
     "scorer": "final-answer-line@1"},
    {"id": "c", "benchmark": "arith", "prompt": "What is 5 + 5?", "reference": "10", "scorer": "final-answer-line@1"},
]


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _rows(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture
def items(tmp_path):
    return _jsonl(tmp_path / "items.jsonl", ITEMS)


def test_prompts_join_exactly_then_with_whitespace_normalised():
    index = PromptIndex.of({"a": "x  y", "b": "x y", "c": "p\nq", "d": "u  v", "e": "u\tv"})
    assert index.join("x y") == ("exact", ("b",))
    assert index.join(" x y\n") == ("normalised", ("b",))  # stripped, it equals b exactly: not a
    assert index.join(" p   q ") == ("normalised", ("c",))
    assert index.join("u v") == ("ambiguous", ("d", "e"))  # "u  v" and "u\tv" are one text normalised
    assert index.join("zzz") == ("unmatched", ())
    assert normalise("\t a \n\n b  ") == "a b"


def test_released_responses_are_scored_like_an_archive(tmp_path, items):
    resp = _jsonl(tmp_path / "responses.jsonl", [
        {"prompt": "What is 2 + 2?", "response": "Final answer: 4"},  # exact, right
        {"prompt": "What is 3 + 3?  \n  Answer briefly. ", "response": "Final answer: 7"},  # normalised, wrong
        {"prompt": "What is 9 + 9?", "response": "Final answer: 18"},  # no such item
    ])
    out = tmp_path / "t.jsonl"
    res = _run("score", resp, "--items", items, "--out", out, "--model", "m", "-f", "json")
    assert res.exit_code == 0, res.stderr
    rep = json.loads(res.stdout)
    assert {(r["item"], r["trial"], r["category"]) for r in _rows(out)} == {("a", 0, "correct"), ("b", 0, "wrong")}
    assert {r["model"] for r in _rows(out)} == {"m"}
    (f,) = rep["responses"]
    assert f["reader"] == "responses@1" and f["reader_chosen"] == "by content"
    assert f["joined"] == {"exact": 1, "normalised": 1}
    assert f["unmatched"] == {"count": 1, "first": [{"line": 3, "key": "What is 9 + 9?"}]}
    assert f["items_without_response"] == {"count": 1, "first": ["c"]}
    assert f["sha256"] == hashlib.sha256(resp.read_bytes()).hexdigest()
    assert rep["warnings"]["by_code"] == {"response-unmatched": 1}

    text = _run("score", resp, "--items", items, "--out", tmp_path / "t2.jsonl", "--model", "m")
    assert "joined by prompt: 1 exact, 1 normalised; 1 unmatched, 0 ambiguous" in text.stdout
    assert "unmatched at line(s) 3" in text.stdout


def test_several_files_are_trials_and_a_model_can_be_given_per_file(tmp_path, items):
    t0 = _jsonl(tmp_path / "trial-0.jsonl", [{"prompt": "What is 2 + 2?", "response": "Final answer: 4"}])
    t1 = _jsonl(tmp_path / "trial-1.jsonl", [{"prompt": "What is 2 + 2?", "response": "Final answer: 5"}])
    out = tmp_path / "t.jsonl"
    res = _run("score", t0, t1, "--items", items, "--out", out, "--model", "m")
    assert res.exit_code == 0, res.stderr
    assert [(r["model"], r["item"], r["trial"], r["category"]) for r in _rows(out)] == [
        ("m", "a", 0, "correct"), ("m", "a", 1, "wrong")]
    res = _run("score", t0, t1, "--items", items, "--out", out, "--model", "x", "--model", "y")
    assert res.exit_code == 0, res.stderr
    assert [(r["model"], r["trial"]) for r in _rows(out)] == [("x", 0), ("y", 0)]


def test_an_id_field_joins_by_item_id(tmp_path, items):
    resp = _jsonl(tmp_path / "r.jsonl", [
        {"key": "c", "prompt": "a prompt the items do not have", "response": "Final answer: 10"},
        {"key": "zz", "prompt": "p", "response": "Final answer: 1"},
    ])
    out = tmp_path / "t.jsonl"
    res = _run("score", resp, "--items", items, "--out", out, "--model", "m", "--id-field", "key", "-f", "json")
    assert res.exit_code == 0, res.stderr
    assert [(r["item"], r["category"]) for r in _rows(out)] == [("c", "correct")]
    (f,) = json.loads(res.stdout)["responses"]
    assert f["joined_by"] == "id" and f["joined"] == {"id": 1} and f["unmatched"]["first"] == [{"line": 2, "key": "zz"}]


def test_an_ambiguous_prompt_is_reported_not_joined(tmp_path):
    items = _jsonl(tmp_path / "items.jsonl", [
        {"id": "p1", "benchmark": "b", "prompt": "Say  hi", "reference": "hi", "scorer": "final-answer-line@1"},
        {"id": "p2", "benchmark": "b", "prompt": "Say\nhi", "reference": "hi", "scorer": "final-answer-line@1"},
    ])
    resp = _jsonl(tmp_path / "r.jsonl", [{"prompt": "Say  hi", "response": "Final answer: hi"},
                                         {"prompt": " Say hi\n", "response": "Final answer: hi"}])
    rep = score_responses_to_file([resp], items, tmp_path / "t.jsonl", model="m")
    (f,) = rep.responses
    assert f["joined"] == {"exact": 1}
    assert f["ambiguous"] == {"count": 1, "first": [{"line": 2, "items": ["p1", "p2"]}]}
    assert rep.diagnostics.counts() == {"response-ambiguous": 1}


def test_a_null_response_is_an_api_error(tmp_path, items):
    resp = _jsonl(tmp_path / "r.jsonl", [{"prompt": "What is 2 + 2?", "response": None}])
    rep = score_responses_to_file([resp], items, tmp_path / "t.jsonl", model="m")
    assert [r["category"] for r in _rows(tmp_path / "t.jsonl")] == ["api_error"]
    assert rep.responses[0]["no_response"] == 1 and rep.diagnostics.counts() == {"null-response": 1}


@pytest.mark.parametrize("body, message", [
    (b'{"prompt": "What is 2 + 2?", "response": "Final answer: 4"}\n{"prompt": "What is 3',
     r"r\.jsonl:2: torn last line"),
    (b'{"prompt": "What is 2 + 2?", "response": "x"}\n{"prompt": "What is 2 + 2?", "response": "y"}\n',
     r"r\.jsonl:2: the same prompt is given again \(first at line 1\)"),
    (b'{"prompt": "What is 2 + 2?", "answer": "x"}\n',
     r"r\.jsonl:1: record lacks 'response' \(a responses@1 line has 'prompt' and 'response'; its fields: answer, prompt\)"),
    (b'{"prompt": "What is 2 + 2?", "response": "caf\xe9"}\n', r"r\.jsonl:1: not valid UTF-8"),
    (b'{"prompt": "What is 2 + 2?", "response": 4}\n', r"r\.jsonl:1: 'response' must be a string"),
    (b'["What is 2 + 2?", "4"]\n', r"r\.jsonl:1: expected a JSON object"),
    (b'{"prompt": "What is 2 + 2?", "response": "x"}\n{"prompt": " What is 2 + 2? ", "response": "y"}\n',
     r"r\.jsonl:2: this response and the one at line 1 both join item 'a' \(normalised\)"),
])
def test_bad_responses_are_refused_naming_file_and_line(tmp_path, items, body, message):
    resp = tmp_path / "r.jsonl"
    resp.write_bytes(body)
    with pytest.raises(BadInput, match=message):
        score_responses_to_file([resp], items, tmp_path / "t.jsonl", model="m", reader="responses@1")
    assert not (tmp_path / "t.jsonl").exists()


def test_responses_need_a_model(tmp_path, items):
    resp = _jsonl(tmp_path / "r.jsonl", [{"prompt": "What is 2 + 2?", "response": "Final answer: 4"}])
    res = _run("score", resp, "--items", items, "--out", tmp_path / "t.jsonl")
    assert res.exit_code == 2 and "released responses name no model: pass --model" in res.stderr


def test_a_file_that_is_neither_still_gets_the_archive_error_with_the_pointer(tmp_path, items):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(BadInput, match=r"not an archive written by 'replicate collect' \(released responses to score, "
                                       r"prompt/response JSONL, are read with --reader responses@1\)"):
        score_to_file([empty], items, tmp_path / "t.jsonl")


def test_a_reader_of_judge_files_is_refused_for_scoring(tmp_path, items):
    f = _jsonl(tmp_path / "j.jsonl", [{"query_id": "1", "corpus_id": "2", "original_qrel_score": 1, "model_output": "3"}])
    with pytest.raises(BadInput, match=r"judge-jsonl@1 does not read responses to score"):
        score_responses_to_file([f], items, None, model="m", reader="judge-jsonl@1")


# --- the released IFBench sample ---------------------------------------------------------------


@pytest.fixture
def ifbench_items(tmp_path):
    rows = [json.loads(x) for x in text_of(IFB / "IFBench_test.jsonl.gz").splitlines() if x.strip()]
    path = _jsonl(tmp_path / "items.jsonl", [{"id": r["key"], "benchmark": "ifbench", "prompt": r["prompt"],
                                             "scorer": "ifbench@2"} for r in rows])
    return path, rows


def test_the_released_ifbench_sample_is_scored_from_its_own_file(tmp_path, ifbench_items):
    items, test_rows = ifbench_items
    out = tmp_path / "t.jsonl"
    res = _run("score", IFB / "sample_output.jsonl.gz", "--items", items, "--out", out, "--model", "sample",
               "--ifbench-strict", IFB / "eval_results_strict.jsonl.gz", "--ifbench-loose", IFB / "eval_results_loose.jsonl.gz",
               "-f", "json")
    assert res.exit_code == 0, res.stderr
    rep = json.loads(res.stdout)
    (f,) = rep["responses"]
    # 294 responses: 290 prompts equal an item's, 3 more once whitespace is stripped, 1 (line 269) was edited since
    assert f["records"] == 294 and f["joined"] == {"exact": 290, "normalised": 3}
    assert [u["line"] for u in f["unmatched"]["first"]] == [269] and f["ambiguous"]["count"] == 0
    assert f["items_without_response"]["count"] == len(test_rows) - 293
    # every category is the verifier's verdict on that very response (strict; loose as correct_loose)
    strict = {(json.loads(x)["prompt"].strip(), json.loads(x)["response"]): json.loads(x)["follow_all_instructions"]
              for x in text_of(IFB / "eval_results_strict.jsonl.gz").splitlines()}
    loose = {(json.loads(x)["prompt"].strip(), json.loads(x)["response"]): json.loads(x)["follow_all_instructions"]
             for x in text_of(IFB / "eval_results_loose.jsonl.gz").splitlines()}
    prompt_of = {r["key"]: r["prompt"].strip() for r in test_rows}
    responses = {normalise(json.loads(x)["prompt"]): json.loads(x)["response"]
                 for x in text_of(IFB / "sample_output.jsonl.gz").splitlines()}
    rows = _rows(out)
    assert len(rows) == 293
    for r in rows:
        key = (prompt_of[r["item"]], responses[normalise(prompt_of[r["item"]])])
        assert (r["category"] == "correct") == strict[key]
        assert r["correct_loose"] == loose[key]
    n_true = sum(strict[(prompt_of[r["item"]], responses[normalise(prompt_of[r["item"]])])] for r in rows)
    assert rep["counts"]["sample"]["correct"] == n_true


def test_what_reads_as_responses_by_content(tmp_path, ifbench_items):
    from replicate.scoring.responses import looks_like_responses

    assert looks_like_responses(IFB / "sample_output.jsonl.gz")
    assert not looks_like_responses(IFB / "IFBench_test.jsonl.gz")  # prompts without responses
    header = {"type": "header", "schema": "replicate.archive/1", "config": {}, "prompt": "x", "response": "y"}
    assert not looks_like_responses(_jsonl(tmp_path / "a.jsonl", [header]))  # an archive stays an archive
