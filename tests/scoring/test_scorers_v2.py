"""math-equivalence@2 (true equivalences, a hard time limit, power towers refused), math-verify@1 (skipped
without the package), ifbench@2 (prompts joined ignoring surrounding whitespace, as the official verifier),
verifier files in the JSON, and `replicate export ifbench`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.scoring import SCORERS
from replicate.scoring.pipeline import score_archive_to_file
from replicate_parsers.mathv2 import WORKER, math_equivalent_v2, too_costly
from support.paths import IFBENCH, text_of

ROOT = Path(__file__).resolve().parents[2]
IFB = IFBENCH  # the committed release (fixtures/case-studies/ifbench)

pytest.importorskip("sympy")

TRUE = [("1/2", "\\frac12"), ("\\frac{1}{2}", "0.5"), ("50\\%", "50"), ("\\{1,2\\}", "{2,1}"), ("\\pm3", "3, -3"),
        ("-3, 3", "\\pm 3"), ("90^\\circ", "90"), ("$90^{\\circ}$", "90"), ("x^2+2x+1", "(x+1)^2"), ("1,000", "1000")]
FALSE = [("1/3", "\\frac12"), ("{1,2}", "{1,2,3}"), ("\\pm3", "3"), ("49\\%", "50"), ("9^9^9", "1"),
         ("9^{9^{9}}", "387420489"), ("2^{100000}", "0")]


@pytest.mark.parametrize("a, b", TRUE)
def test_v2_accepts_true_equivalences(a, b):
    sc = SCORERS.get("math-equivalence@2")
    assert math_equivalent_v2(a, b)
    assert sc(f"Work.\nFinal answer: {a}", b).correct


@pytest.mark.parametrize("a, b", FALSE)
def test_v2_rejects(a, b):
    t0 = time.monotonic()
    assert not math_equivalent_v2(a, b)
    assert time.monotonic() - t0 < 5


def test_v1_does_not_accept_what_v2_adds():
    sc1 = SCORERS.get("math-equivalence@1")
    assert [sc1(f"Final answer: {a}", b).correct for a, b in [("50\\%", "50"), ("\\{1,2\\}", "{2,1}"),
                                                               ("90^\\circ", "90")]] == [False, False, False]


def test_power_towers_are_refused_before_sympy():
    assert too_costly("9**9**9") and too_costly("9**(9**9)") and too_costly("2**100000")
    assert not too_costly("(x+1)**2") and not too_costly("2**10")


def test_time_limit_kills_the_worker_and_it_recovers():
    before = WORKER.timeouts
    # simplify needs seconds for this identity (3.5 s on a quiet 2-core machine), so a 0.05 s limit
    # is always passed; a small identity with a microsecond limit was answered in time on a warm worker
    slow = ("sin(x)**20*cos(x)**20", "(sin(2*x)/2)**20")
    assert WORKER.equal(*slow, 0.05) is None
    assert WORKER.timeouts == before + 1
    assert WORKER.equal("(x+1)**2", "x**2+2*x+1", 30.0) is True  # a fresh worker answers


def test_math_verify_scorer():
    pytest.importorskip("math_verify")
    sc = SCORERS.get("math-verify@1")
    assert sc("Final answer: \\frac{1}{2}", "0.5").correct
    assert not sc("Final answer: 3", "4").correct
    assert sc("no answer here", "4").answer is None


def test_math_verify_version_in_the_trials_table(tmp_path):
    pytest.importorskip("math_verify")
    from importlib.metadata import version

    items = tmp_path / "i.jsonl"
    items.write_text(json.dumps({"id": "a", "benchmark": "m", "prompt": "1/2?", "reference": "0.5",
                                 "scorer": "math-verify@1"}) + "\n")
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(orjson.dumps({"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0,
                                   "params_hash": "x", "items": {}}) + b"\n" + orjson.dumps(
        {"type": "trial", "model": "m", "item": "a", "trial": 0, "text": "Final answer: 1/2",
         "finish_reason": "stop", "refusal": None, "usage": {}, "error_kind": None}) + b"\n")
    score_archive_to_file(arch, items, tmp_path / "t.jsonl")
    (row,) = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert row["category"] == "correct" and row["scorer_package"] == f"math-verify {version('math-verify')}"


# -- IFBench -------------------------------------------------------------------------


def _jsonl(path):
    return [json.loads(x) for x in text_of(path).splitlines() if x.strip()]


@pytest.fixture
def ifbench_v2(tmp_path):
    test_rows = _jsonl(IFB / "IFBench_test.jsonl.gz")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": r["key"], "benchmark": "ifbench", "prompt": r["prompt"],
                                         "scorer": "ifbench@2"}) + "\n" for r in test_rows))
    key_by_stripped = {r["prompt"].strip(): r["key"] for r in test_rows}
    lines = [orjson.dumps({"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0,
                           "params_hash": "x", "items": {}})]
    for r in _jsonl(IFB / "sample_output.jsonl.gz"):
        key = key_by_stripped.get(r["prompt"].strip())
        if key is not None:
            lines.append(orjson.dumps({"type": "trial", "model": "sample", "item": key, "trial": 0,
                                       "text": r["response"], "finish_reason": "stop", "refusal": None,
                                       "usage": {}, "error_kind": None}))
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"\n".join(lines) + b"\n")
    return arch, items


def test_ifbench_v2_regains_the_three_whitespace_prompts(ifbench_v2, tmp_path):
    arch, items = ifbench_v2
    kw = dict(ifbench_strict=[IFB / "eval_results_strict.jsonl.gz"], ifbench_loose=[IFB / "eval_results_loose.jsonl.gz"])
    v2 = score_archive_to_file(arch, items, tmp_path / "t2.jsonl", **kw)
    v1 = score_archive_to_file(arch, items, tmp_path / "t1.jsonl", scorer="ifbench@1", **kw)
    assert v1.rows == 290 and sum(v1.unscored.values()) == 3
    assert v2.rows == 293 and v2.unscored == {}
    strict = {(r["prompt"].strip(), r["response"]): r["follow_all_instructions"]
              for r in _jsonl(IFB / "eval_results_strict.jsonl.gz")}
    prompts = {json.loads(x)["id"]: json.loads(x)["prompt"].strip() for x in items.read_text().splitlines()}
    texts = {r["item"]: r["text"] for r in _jsonl(arch)[1:]}
    for row in _jsonl(tmp_path / "t2.jsonl"):
        assert (row["category"] == "correct") == strict[(prompts[row["item"]], texts[row["item"]])]
    assert (v2.ifbench["unmatched_prompts"], v2.ifbench["unmatched_prompts_whitespace_only"]) == (1, 0)
    files = v2.to_json()["ifbench"]["files"]
    import hashlib

    assert files == [{"role": role, "path": str(IFB / f"eval_results_{role}.jsonl.gz"),
                      "sha256": hashlib.sha256((IFB / f"eval_results_{role}.jsonl.gz").read_bytes()).hexdigest()}
                     for role in ("strict", "loose")]


def test_export_ifbench_one_file_per_trial(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"p{i}", "benchmark": "ifbench", "prompt": f"Write {i} words.",
                                         "scorer": "ifbench@2"}) + "\n" for i in range(3)))
    recs = [{"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x",
             "items": {}}]
    for t in range(2):
        for i in range(3):
            err = t == 1 and i == 2
            recs.append({"type": "trial", "model": "m", "item": f"p{i}", "trial": t,
                         "text": None if err else f"r{i}-{t}", "finish_reason": "stop", "refusal": None,
                         "usage": {}, "error_kind": "http_500" if err else None})
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    res = CliRunner().invoke(app, ["export", "ifbench", str(arch), "--items", str(items), "--out",
                                   str(tmp_path / "out"), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["files"] == {"trial-0.jsonl": 3, "trial-1.jsonl": 2}
    assert _jsonl(tmp_path / "out" / "trial-1.jsonl") == [{"prompt": "Write 0 words.", "response": "r0-1"},
                                                          {"prompt": "Write 1 words.", "response": "r1-1"}]
    assert json.loads(res.stdout)["left_out"] == {"no response (api_error or empty)": 1}


def test_the_worker_is_ready_before_the_first_question_so_start_up_is_not_timed():
    """_serve imports sympy and says so before reading a question: a slow start is not a comparison's timeout."""
    import threading
    from multiprocessing import Pipe

    from replicate_parsers.mathv2 import _serve

    parent, child = Pipe()
    t = threading.Thread(target=_serve, args=(child,), daemon=True)
    t.start()
    assert parent.poll(60) and parent.recv() == "ready"
    parent.send(("(x+1)**2", "x**2+2*x+1"))
    assert parent.poll(60) and parent.recv() is True
    parent.close()
    t.join(10)
    assert not t.is_alive()


def test_a_worker_without_sympy_says_why_instead_of_every_answer_reading_wrong(monkeypatch):
    import threading
    from multiprocessing import Pipe

    from replicate_parsers.mathv2 import _serve

    monkeypatch.setitem(sys.modules, "sympy", None)
    parent, child = Pipe()
    t = threading.Thread(target=_serve, args=(child,), daemon=True)
    t.start()
    assert parent.poll(60) and parent.recv().startswith("cannot import sympy")
    t.join(10)
