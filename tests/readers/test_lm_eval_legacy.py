"""lm-eval-samples@1 on files written by lm-eval 0.4.0, 0.4.2 and 0.4.5 (no 'filter' or 'metrics' in a line).

The fixtures (data/lm_eval/legacy, README there) are our own documents in each
version's layout. The hand table below was written when the fixtures were: the
answer each filter extracted per document and whether it equals the target.
"x" is "[invalid]" (the filter found no answer; lm-eval scores it 0).
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

DATA = ROOT / "tests" / "readers" / "data" / "lm_eval" / "legacy"
V40 = DATA / "v0.4.0"
V42 = DATA / "v0.4.2"
V45 = DATA / "v0.4.5" / "EleutherAI__pythia-1b"
SC40 = V40 / "pretrained__EleutherAI__pythia-160m_gsm8k_cot_self_consistency.jsonl"
GSM40 = V40 / "pretrained__EleutherAI__pythia-160m_gsm8k.jsonl"
GSM42 = V42 / "pretrained__EleutherAI__pythia-410m,dtype__float16_gsm8k.jsonl"
ARC42 = V42 / "pretrained__EleutherAI__pythia-410m,dtype__float16_arc_easy.jsonl"
DATE = "2024-10-20T14-05-33.412907"
GSM45 = V45 / f"samples_gsm8k_{DATE}.jsonl"
ARC45 = V45 / f"samples_arc_easy_{DATE}.jsonl"
R = "lm-eval-samples@1"

# per doc_id 0..4: 1 right, 0 wrong, x [invalid] (no answer)
HAND = {
    (GSM40, "get-answer", "exact_match"): "011x1",
    (SC40, "score-first", "exact_match"): "1x011",
    (SC40, "maj@64", "exact_match"): "111x1",
    (SC40, "maj@8", "exact_match"): "0111x",
    (GSM42, "strict-match", "exact_match"): "1x1x0",
    (GSM42, "flexible-extract", "exact_match"): "10110",
    (ARC42, None, "acc"): "11010",
    (ARC42, None, "acc_norm"): "11110",
    (GSM45, "strict-match", "exact_match"): "1x11x",
    (GSM45, "flexible-extract", "exact_match"): "11110",
    (ARC45, None, "acc"): "01111",
    (ARC45, None, "acc_norm"): "11110",
}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _read(path, **extra):
    diag = Diagnostics()
    return load_run("r", path, diagnostics=diag, options=ReadOptions(extra=extra)), diag


def _by_doc(run) -> str:
    labels = dict(zip(run.keys.tolist(), run.labels.tolist()))
    return "".join({1: "1", 0: "0", -1: "x"}[labels[str(d)]] for d in range(5))


@pytest.mark.parametrize(("path", "filt", "metric"), list(HAND), ids=lambda v: getattr(v, "name", str(v)))
def test_each_filter_of_each_version_reads_the_hand_table(path, filt, metric):
    run, _ = _read(path, correct_field=metric, **({"filter": filt} if filt else {}))
    assert _by_doc(run) == HAND[(path, filt, metric)]
    f = run.files[0]
    assert f.reader == R and f.chosen == "by content"  # never judge-jsonl@1's "lacks key field 'query_id'"
    # lm-eval's default filter 'none' (multiple choice) has no regex step: the log cannot mark a failure
    assert f.extraction_failures == (None if filt is None else HAND[(path, filt, metric)].count("x"))
    assert (f.failures_unrecorded is not None) == (filt is None)
    used = dict(f.reader_options)
    assert used["filter"] == (filt or "none") and used["correct_field"] == metric


@pytest.mark.parametrize(("path", "filt", "metric"), list(HAND), ids=lambda v: getattr(v, "name", str(v)))
def test_the_results_file_gives_lm_evals_own_figure_which_the_default_reproduces(path, filt, metric):
    run, _ = _read(path, correct_field=metric, **({"filter": filt} if filt else {}))
    (figure,) = run.files[0].harness
    name = filt or "none"
    assert figure.metric == f"{metric},{name}"
    # lm-eval's mean over the five documents, [invalid] scored 0: the hand table's 1s over 5
    assert figure.value == HAND[(path, filt, metric)].count("1") / 5
    res = _run("parse", path, "--correct-field", metric, *(("--filter", filt) if filt else ()), "-f", "json",
               "--replicates", "0")
    assert res.exit_code == 0, res.output
    (summary,) = json.loads(res.stdout)["runs"]
    (check,) = summary["harness"]
    assert check["match"] is True and check["unparsed_policy"] == "wrong" and check["counted"] == 5


def test_the_filter_position_and_the_file_provenance():
    run, diag = _read(SC40, filter="maj@64")
    f = run.files[0]
    assert dict(f.reader_options) == {"filter": "maj@64", "filter_position": "2 of 3", "correct_field": "exact_match"}
    assert dict(f.about) == {"task": "gsm8k_cot_self_consistency", "results_file": "results.json",
                             "model": "EleutherAI/pythia-160m", "git_hash": "4600d6b", "task_version": "2.0"}
    assert f.lines == 15 and f.records == 5  # a JSON array: its 'lines' are its 15 samples (5 docs x 3 filters)
    assert len(diag) == 0
    run, _ = _read(GSM42, filter="flexible-extract")
    # two processes: rank 0 logged docs 0, 2, 4, then rank 1 docs 1, 3 (file order is kept)
    assert run.keys.tolist() == ["0", "2", "4", "1", "3"]
    assert dict(run.files[0].about)["task"] == "gsm8k"


def test_compare_across_versions_equals_the_hand_count():
    # strict-match: 0.4.2 1 x 1 x 0, 0.4.5 1 x 1 1 x. wrong (lm-eval's rule, the default): old 1 0 1 0 0,
    # new 1 0 1 1 0 -> both 0, 2; only_new 3; neither 1, 4. intersect keeps docs 0, 2 (both right)
    res = _run("compare", GSM42, GSM45, "--filter", "strict-match", "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["old"]["name"], out["new"]["name"]) == ("EleutherAI/pythia-410m", "EleutherAI/pythia-1b")
    assert out["cells"] == {"both": 2, "only_old": 0, "only_new": 1, "neither": 2} and out["n"] == 5
    assert out["unparsed"] == {"old": 2, "new": 2}
    assert out["old"]["extraction_failures"] == 2 and out["new"]["extraction_failures"] == 2
    assert out["unparsed_rule"]["departs_from_source"] is False and out["unparsed_policy"] == "wrong"
    assert "reader: lm-eval-samples@1 (chosen by content" in res.stderr
    res = _run("compare", GSM42, GSM45, "--filter", "strict-match", "-f", "json", "--replicates", "0",
               "--unparsed", "intersect")
    out = json.loads(res.stdout)
    assert out["cells"] == {"both": 2, "only_old": 0, "only_new": 0, "neither": 0}
    assert out["unparsed_rule"]["departs_from_source"] is True
    # flexible-extract: 1 0 1 1 0 -> 1 1 1 1 0
    res = _run("compare", GSM42, GSM45, "--filter", "flexible-extract", "-f", "json", "--replicates", "0")
    assert json.loads(res.stdout)["cells"] == {"both": 3, "only_old": 0, "only_new": 1, "neither": 1}
    text = _run("compare", GSM42, GSM45, "--filter", "strict-match", "--replicates", "0").stdout
    assert ("2 extraction failure(s) (40.0% [11.8%, 76.9%], 95% Wilson): the file's own filter found no answer "
            "([invalid]), counted among the unparsed") in text


def test_sniffing_old_layouts():
    lm, judge, exam = READERS.get(R), READERS.get("judge-jsonl@1"), READERS.get("exam@1")
    opts = ReadOptions()
    for path in (GSM40, GSM42, GSM45, ARC45):
        head = path.read_bytes()[:4096]
        assert lm.sniff(head, opts) == "yes"
        assert judge.sniff(head, opts) != "yes" and exam.sniff(head, opts) != "yes"
    # an array of something else is not a samples file
    assert lm.sniff(b'[\n  {\n    "query_id": 1\n  }\n]', opts) == "no"


def _copy(tmp_path, path, name=None):
    out = tmp_path / (name or path.name)
    shutil.copy(path, out)
    return out


def test_several_filters_without_results_is_refused_saying_what_to_pass(tmp_path):
    lone = _copy(tmp_path, SC40)
    with pytest.raises(BadInput, match=r"each document is logged 3 times, once per filter, and lm-eval before 0\.4\.7 "
                                       r"does not name a line's filter; no results file .* with --filter 1\.\.3"):
        _read(lone)
    run, diag = _read(lone, filter="3")
    assert _by_doc(run) == HAND[(SC40, "maj@8", "exact_match")]
    assert dict(run.files[0].reader_options)["filter"] == "3"
    assert diag.counts() == {"lm-eval-results": 1}  # no results file: warned
    with pytest.raises(BadInput, match=r"no filter 'maj@8' in this file \(its filters are not named\); --filter also "
                                       r"takes a position 1-3"):
        _read(lone, filter="maj@8")
    # one line per document needs nothing
    run, _ = _read(_copy(tmp_path, GSM40))
    assert _by_doc(run) == HAND[(GSM40, "get-answer", "exact_match")]
    assert dict(run.files[0].reader_options)["filter"] == "1"


def test_several_named_filters_and_none_chosen_is_refused_listing_them_in_order():
    with pytest.raises(BadInput, match=r"the file holds 3 filters \(score-first, maj@64, maj@8, as results\.json lists "
                                       r"them\); name one with --filter"):
        _read(SC40)
    with pytest.raises(BadInput, match=r"no filter 'strict' in this file \(its filters, in lm-eval's order: score-first, "
                                       r"maj@64, maj@8\)"):
        _read(SC40, filter="strict")


def test_a_results_file_that_disagrees_is_warned_and_positions_are_used(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    sc = _copy(folder, SC40)
    results = json.loads((V40 / "results.json").read_text(encoding="utf-8"))
    results["configs"]["gsm8k_cot_self_consistency"]["filter_list"].pop()  # two filters named, three logged
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    run, diag = _read(sc, filter="2")
    assert _by_doc(run) == HAND[(SC40, "maj@64", "exact_match")]
    assert diag.counts() == {"lm-eval-results": 1}
    assert "lists 2 filter(s) for task 'gsm8k_cot_self_consistency' (score-first, maj@64), but each document is " \
           "logged 3 time(s)" in diag.warnings[0].message


def _array(tmp_path, samples, name="x.jsonl"):
    p = tmp_path / name
    p.write_text(json.dumps(samples, indent=2), encoding="utf-8")
    return p


def _samples(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_files_whose_lines_cannot_be_told_apart_are_refused(tmp_path):
    samples = _samples(SC40)
    with pytest.raises(BadInput, match=r"documents are logged a differing number of times \(doc_id 4: 2, doc_id 0: 3\)"):
        _read(_array(tmp_path, samples[:-1]), filter="1")
    changed = [dict(s) for s in samples]
    changed[7] = dict(changed[7], resps=[["something else"]])  # doc 2 under maj@64, from another run
    with pytest.raises(BadInput, match=r"x\.jsonl:\d+: doc_id 2 is logged again with other 'resps' than at line \d+"):
        _read(_array(tmp_path, changed), filter="1")


def test_a_cut_array_and_mixed_layouts_are_refused_naming_the_line(tmp_path):
    text = GSM40.read_text(encoding="utf-8")
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: text.index('"doc_id": 3')], encoding="utf-8")
    with pytest.raises(BadInput, match=r"cut\.jsonl:\d+: (not JSON|expected).*array of samples"):
        _read(cut)
    lines = GSM45.read_text(encoding="utf-8").splitlines()
    named = json.loads(lines[1]) | {"filter": "strict-match", "metrics": ["exact_match"]}
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([lines[0], json.dumps(named), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"mixed\.jsonl:2: sample has 'filter' unlike line 1"):
        _read(mixed)


def test_a_fallback_the_results_declare_is_an_extraction_failure_too(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    gsm = _copy(folder, GSM40)
    samples = _samples(gsm)
    samples[3]["filtered_resps"] = ["NO ANSWER"]  # doc 3's [invalid], under a task whose regex names its own fallback
    gsm.write_text(json.dumps(samples, indent=2), encoding="utf-8")
    results = json.loads((V40 / "results.json").read_text(encoding="utf-8"))
    run, _ = _read(gsm)
    # not declared: a wrong answer; and without the results file no one says what the filter marks: not recorded
    assert run.files[0].extraction_failures is None and _by_doc(run) == "01101"
    assert "no results file beside the samples names the steps of the filter" in str(run.files[0].failures_unrecorded)
    results["configs"]["gsm8k"]["filter_list"][0]["filter"][0]["fallback"] = "NO ANSWER"
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    run, _ = _read(gsm)
    assert run.files[0].extraction_failures == 1 and _by_doc(run) == "011x1"


def test_parse_and_chain_show_the_extraction_failures():
    res = _run("parse", GSM45, "--filter", "strict-match", "-f", "json")
    assert res.exit_code == 0, res.output
    (run,) = json.loads(res.stdout)["runs"]
    assert (run["unparsed"], run["extraction_failures"]) == (2, 2)
    assert ("of unparsed: no answer found ([invalid])  2 (40.0% [11.8%, 76.9%], 95% Wilson)"
            in _run("parse", GSM45, "--filter", "strict-match").stdout)
    res = _run("chain", GSM42, GSM45, "--filter", "strict-match", "--replicates", "0", "-f", "json")
    assert [(r["name"], r["unparsed"], r["extraction_failures"]) for r in json.loads(res.stdout)["runs"]] == [
        ("EleutherAI/pythia-410m", 2, 2), ("EleutherAI/pythia-1b", 2, 2)]
    text = _run("chain", GSM42, GSM45, "--filter", "strict-match", "--replicates", "0").stdout
    assert "among the unparsed): EleutherAI/pythia-410m 2, EleutherAI/pythia-1b 2" in text
    # a judge run's reader does not tell extraction failures apart: no such field, no such line
    flat = ROOT / "fixtures" / "example" / "results"
    a, b = sorted(flat.glob("*.jsonl"))[:2]
    out = json.loads(_run("compare", a, b, "-p", "umbrela-fallback@1", "--replicates", "0", "-f", "json").stdout)
    assert "extraction_failures" not in out["old"] and "extraction_failures" not in out["old"]["files"][0]


def test_main_branch_of_may_2024_json_named_samples_beside_results_of_their_date(tmp_path):
    # samples_<task>_<date>.json holding the JSON array, results_<date>.json beside it
    date = "2024-05-20T08-00-00.000001"
    shutil.copy(GSM42, tmp_path / f"samples_gsm8k_{date}.json")
    shutil.copy(V42 / "results.json", tmp_path / f"results_{date}.json")
    run, diag = _read(tmp_path / f"samples_gsm8k_{date}.json", filter="flexible-extract")
    assert _by_doc(run) == HAND[(GSM42, "flexible-extract", "exact_match")] and len(diag) == 0
    assert dict(run.files[0].about)["results_file"] == f"results_{date}.json"
    # a first document longer than the head the readers see is still recognised
    huge = [dict(s, doc={"question": "x" * 70000, "answer": "#### 3"}) for s in _samples(GSM40)]
    p = _array(tmp_path, huge, "huge.jsonl")
    assert READERS.get(R).sniff(p.read_bytes()[: 1 << 16], ReadOptions()) == "yes"
