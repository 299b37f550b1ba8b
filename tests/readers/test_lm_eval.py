"""lm-eval-samples@1: lm-evaluation-harness --log_samples files read as correctness verdicts.

The fixtures in data/lm_eval are our own six gsm8k-shaped documents in the
exact shape lm-eval writes (one line per (doc, filter); filters strict-match
and flexible-extract; metric exact_match as 1.0/0.0).
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.reading.contract import READERS, ReadOptions
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data" / "lm_eval"
A = DATA / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl"
B = DATA / "samples_gsm8k_2024-11-20T09-30-00.000000.jsonl"
R = "lm-eval-samples@1"

# exact_match per doc_id 0..5, written into the fixtures by hand:
#   strict-match      A 1 1 0 0 1 0   B 1 0 1 0 1 0
#   flexible-extract  A 1 1 1 1 1 0   B 1 1 1 0 1 1
# strict-match: both = docs 0, 4; only_old = doc 1; only_new = doc 2; neither = docs 3, 5 (--unparsed wrong).
STRICT_CELLS = {"both": 2, "only_old": 1, "only_new": 1, "neither": 2}
# Under strict-match the regex found no answer ("[invalid]") in docs 2, 3, 5 of A and 1, 3, 5 of B: extraction
# failures, unparsed; the default policy (intersect) keeps docs 0 and 4 only, right on both sides.
STRICT_INTERSECT = {"both": 2, "only_old": 0, "only_new": 0, "neither": 0}
# flexible-extract: both = docs 0, 1, 2, 4; only_old = doc 3; only_new = doc 5; neither = none.
FLEX_CELLS = {"both": 4, "only_old": 1, "only_new": 1, "neither": 0}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_fixtures_hold_the_hand_table():
    for path, strict, flex in ((A, "110010", "111110"), (B, "101010", "111011")):
        got = {f: "".join(str(int(o["exact_match"])) for o in _lines(path) if o["filter"] == f)
               for f in ("strict-match", "flexible-extract")}
        assert got == {"strict-match": strict, "flexible-extract": flex}


def test_acceptance_compare_cells_equal_the_hand_count(tmp_path):
    a, b = tmp_path / "samples_A.jsonl", tmp_path / "samples_B.jsonl"
    shutil.copy(A, a)
    shutil.copy(B, b)
    res = _run("compare", a, b, "--reader", R, "--filter", "strict-match", "--correct-field", "exact_match", "-f", "json",
               "--unparsed", "wrong")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == STRICT_CELLS and out["n"] == 6
    assert out["em_old"] == 3 / 6 and out["em_new"] == 3 / 6
    assert out["unparsed"] == {"old": 3, "new": 3}
    assert out["old"]["extraction_failures"] == 3 and out["new"]["extraction_failures"] == 3
    assert out["reader"] == R and out["parser"] == "lm-eval-metric"
    f = out["old"]["files"][0]
    assert f["reader_options"] == {"filter": "strict-match", "correct_field": "exact_match"}
    assert f["lines"] == 12 and f["records"] == 6
    # the documents are resampled, not 'query_id' clusters (the key is doc_id alone)
    assert out["uncertainty"]["cluster"] is None
    assert out["absent"]["change_rate"].startswith("change_rate needs labels")


def test_the_other_filter_gives_its_own_hand_count_and_detection_picks_the_reader():
    res = _run("compare", A, B, "--filter", "flexible-extract", "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == FLEX_CELLS
    # one metric in the file: --correct-field is not needed, and provenance says which was used
    assert out["new"]["files"][0]["reader_options"] == {"filter": "flexible-extract", "correct_field": "exact_match"}
    assert f"reader: {R} (chosen by content" in res.stderr


def test_sniffing_tells_lm_eval_from_judge_jsonl():
    lm = READERS.get(R)
    judge = READERS.get("judge-jsonl@1")
    head = A.read_bytes()[:4096]
    flat = (ROOT / "fixtures" / "example" / "results" / "alpha-2024-05_annotations.jsonl").read_bytes()[:4096]
    opts = ReadOptions()
    assert lm.sniff(head, opts) == "yes" and judge.sniff(head, opts) == "maybe"
    assert lm.sniff(flat, opts) == "no" and judge.sniff(flat, opts) == "yes"
    # a first line longer than the head (a long doc) is still recognised by its field names
    assert lm.sniff(A.read_bytes()[:300], opts) == "yes"


def test_several_filters_and_none_named_is_refused_listing_them():
    res = _run("compare", A, B, "--correct-field", "exact_match")
    assert res.exit_code == 2
    assert A.name in res.output
    assert "the file holds 2 filters (flexible-extract, strict-match); name one with --filter" in res.output


def _load(tmp_path, lines: list[dict], **extra):
    p = tmp_path / "samples_mixed_2024-01-01T00-00-00.jsonl"
    p.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    return load_run("r", p, diagnostics=Diagnostics(), reader=R, options=ReadOptions(extra=extra))


def _strict() -> list[dict]:
    return [o for o in _lines(A) if o["filter"] == "strict-match"]


def test_a_file_mixing_tasks_is_refused_naming_the_line(tmp_path):
    arc = {"doc_id": 0, "doc": {"question": "q"}, "target": "0", "arguments": {}, "resps": [[["-1.5", "False"]]],
           "filtered_resps": [["-1.5", "False"]], "filter": "strict-match", "metrics": ["acc", "acc_norm"],
           "doc_hash": "x", "prompt_hash": "y", "target_hash": "z", "acc": 1.0, "acc_norm": 0.0}
    with pytest.raises(BadInput, match=r"samples_mixed_.*\.jsonl:7: this sample's metrics \(acc, acc_norm\) differ from "
                                       r"line 1's \(exact_match\): a samples file holds one task; this one mixes tasks"):
        _load(tmp_path, _strict() + [arc], filter="strict-match", correct_field="exact_match")


def test_a_doc_given_twice_for_one_filter_is_refused_naming_both_lines(tmp_path):
    lines = _strict()
    with pytest.raises(BadInput, match=r"\.jsonl:7: doc_id 0 with filter 'strict-match' is given again \(first at line 1\)"):
        _load(tmp_path, lines + [lines[0], lines[1]], filter="strict-match", correct_field="exact_match")


def test_a_missing_metric_is_refused_listing_the_metrics_there_are(tmp_path):
    lines = _strict()
    with pytest.raises(BadInput, match=r"\.jsonl:1: sample lacks the metric 'acc' \(--correct-field\); its metrics: exact_match"):
        _load(tmp_path, lines, correct_field="acc")
    del lines[3]["exact_match"]
    with pytest.raises(BadInput, match=r"\.jsonl:4: sample lacks the metric 'exact_match'"):
        _load(tmp_path, lines)


def test_other_refusals_name_file_and_line(tmp_path):
    lines = _strict()
    with pytest.raises(BadInput, match=r"no sample has filter 'strict'; filters in this file: strict-match"):
        _load(tmp_path, lines, filter="strict")
    lines[2]["exact_match"] = 0.5
    with pytest.raises(BadInput, match=r"\.jsonl:3: 'exact_match' is a JSON float \(0.5\), not a 0/1 verdict"):
        _load(tmp_path, lines)
    two = [dict(o, metrics=["exact_match", "f1"], f1=0.5) for o in _strict()]
    with pytest.raises(BadInput, match=r"\.jsonl:1: the samples carry 2 metrics \(exact_match, f1\); name the 0/1 one "
                                       r"with --correct-field"):
        _load(tmp_path, two)
    no_filter = _strict()
    del no_filter[4]["filter"]
    with pytest.raises(BadInput, match=r"\.jsonl:5: sample lacks 'filter'"):
        _load(tmp_path, no_filter)


def test_verdicts_nulls_and_unknown_fields(tmp_path):
    lines = _strict()
    lines[0]["exact_match"] = True  # booleans are verdicts too
    lines[1]["exact_match"] = None  # unscored, warned
    lines[2]["some_new_field"] = {"kept": "ignored"}
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    diag = Diagnostics()
    run = load_run("r", p, diagnostics=diag, reader=R)
    assert list(run.keys) == ["0", "1", "2", "3", "4", "5"]
    # docs 2, 3, 5: "[invalid]" (the filter found no answer): unparsed, counted as extraction failures
    assert run.labels is not None and run.labels.tolist() == [1, -1, -1, -1, 1, -1]
    assert run.files[0].extraction_failures == 3
    # s.jsonl carries no lm-eval date, so no results file is looked for (warned: tests/readers/test_lm_eval_results.py)
    assert len(diag) == 2 and diag.counts() == {"null-metric": 1, "lm-eval-results": 1}
