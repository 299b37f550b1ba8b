"""helm-completions@1: a HELM run's completions (scenario_state.json) read by replicate's parsers.

Two kinds of fixture: the committed synthetic run directories of data/helm
(see test_helm_run.py: HELM's layout, MMLU-like multiple_choice_joint runs
whose exact_match the hand table gives), and small scenario states written
here into tmp_path for the rules (several correct references, generation
gold, bad input).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.judge.model import KEY_SEP
from replicate.reading.contract import READERS, ReadOptions
from replicate_parsers.helm_choice import CHOICES
from support.paths import ROOT
from support.synth import helm_runs as hr

SUITE = ROOT / "tests" / "readers" / "data" / "helm" / "runs" / hr.SUITE
RUN_A, RUN_B, TRIALS = SUITE / hr.RUN_SPEC.format("a"), SUITE / hr.RUN_SPEC.format("b"), SUITE / "trials"
R = "helm-completions@1"
CELLS = {"both": 3, "only_old": 2, "only_new": 2, "neither": 1}  # exact_match's hand table (test_helm_run.py)


def _cli(*args):
    return CliRunner().invoke(app, ["--no-cache", *map(str, args)])


def _json(res) -> dict:
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _ref(text: str, correct: bool = False) -> dict:
    return {"output": {"text": text}, "tags": ["correct"] if correct else []}


def _state(iid: str, refs: list[dict], text: str | None, *, joint: bool = True, trial: int = 0,
           perturbation: str | None = None) -> dict:
    instance: dict = {"input": {"text": f"question {iid}"}, "references": refs, "split": "test", "id": iid}
    if perturbation is not None:
        instance["perturbation"] = {"name": perturbation, "robustness": True}
    out: dict = {"instance": instance, "train_trial_index": trial,
                 "request": {"model": "m/x", "prompt": "...", "temperature": 0.0}}
    if joint:
        out["output_mapping"] = {chr(ord("A") + i): r["output"]["text"] for i, r in enumerate(refs)}
    if text is not None:
        out["result"] = {"success": True, "embedding": [], "completions": [{"text": text, "logprob": -0.1, "tokens": []}],
                         "cached": True}
    out["num_train_instances"] = 5
    out["prompt_truncated"] = False
    return out


def _write(tmp_path: Path, states: list[dict], method: str = "multiple_choice_joint", name: str = "run") -> Path:
    run = tmp_path / name
    run.mkdir()
    doc = {"adapter_spec": {"method": method, "model": "m/x", "max_train_instances": 5}, "request_states": states}
    (run / "scenario_state.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return run / "scenario_state.json"


def _load(path: Path, parser: str | None = "helm-choice@1", **extra):
    from replicate.parsing import PARSERS

    diag = Diagnostics()
    labels = PARSERS.get(parser).label_set if parser else None
    run = load_run("r", path, diagnostics=diag, reader=R, options=ReadOptions(extra=extra, gold_labels=labels))
    return run, diag


# --- against HELM's own metric ----------------------------------------------------------------------
def test_the_completions_read_by_helm_choice_give_helms_exact_match():
    metric = _json(_cli("compare", RUN_A, RUN_B, "--correct-field", "exact_match", "--replicates", "0", "-f", "json"))
    parsed = _json(_cli("compare", RUN_A, RUN_B, "--reader", R, "-p", "helm-choice@1", "--unparsed", "wrong",
                        "--replicates", "0", "-f", "json"))
    assert metric["cells"] == parsed["cells"] == CELLS
    assert (parsed["em_old"], parsed["em_new"]) == (metric["em_old"], metric["em_new"])
    assert parsed["reader"] == R and parsed["parser"] == "helm-choice@1"
    f = parsed["old"]["files"][0]
    assert f["path"].endswith("scenario_state.json") and f["records"] == 8
    assert f["reader_options"] == {"file": "scenario_state.json", "method": "multiple_choice_joint"}
    assert f["about"]["model"] == "example/model-a" and parsed["old"]["name"] == "example/model-a"


def test_gold_is_the_letter_of_the_correct_reference_and_keys_carry_the_perturbation():
    run, diag = _load(RUN_A / "scenario_state.json")
    assert len(diag) == 0
    letters = {k: "ABCD"[g] for k, g in zip(run.keys.tolist(), run.gold.tolist())}
    states = json.loads((RUN_A / "scenario_state.json").read_text())["request_states"]
    for s in states:
        inst = s["instance"]
        key = inst["id"] + (KEY_SEP + inst["perturbation"]["name"] if "perturbation" in inst else "")
        correct = next(i for i, r in enumerate(inst["references"]) if "correct" in r["tags"])
        assert letters[key] == "ABCD"[correct]
    assert run.outputs[0] == states[0]["result"]["completions"][0]["text"]


def test_a_directory_stays_helm_runs_unless_the_reader_is_named():
    res = _cli("compare", RUN_A, RUN_B, "--correct-field", "exact_match", "--replicates", "0")
    assert res.exit_code == 0 and "reader: helm-run@1 (chosen by content" in res.stderr
    # the file itself is recognised by content
    res = _cli("compare", RUN_A / "scenario_state.json", RUN_B / "scenario_state.json", "-p", "helm-choice@1",
               "--replicates", "0")
    assert res.exit_code == 0, res.output
    assert f"reader: {R} (chosen by content" in res.stderr
    assert READERS.get("helm-run@1").sniff((RUN_A / "scenario_state.json").read_bytes()[:65536], ReadOptions()) == "maybe"


def test_a_directory_without_scenario_state_is_refused_listing_what_it_holds(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "per_instance_stats.json").write_bytes((RUN_A / "per_instance_stats.json").read_bytes())
    res = _cli("compare", run, RUN_B, "--reader", R, "-p", "helm-choice@1")
    assert res.exit_code != 0
    assert ("is a directory holding none of the files a reader reads a directory through (helm-completions@1: "
            "scenario_state.json); it holds: per_instance_stats.json") in res.output


def test_other_run_files_are_refused_naming_the_file_to_give():
    with pytest.raises(BadInput, match=r"this is HELM's per_instance_stats.json: helm-completions@1 reads "
                                       r"scenario_state.json"):
        _load(RUN_A / "per_instance_stats.json")


def test_train_trials_are_trials():
    res = _cli("compare", TRIALS, RUN_B, "--reader", R, "-p", "helm-choice@1")
    assert res.exit_code != 0 and "keep one with --epoch" in res.output
    out = _json(_cli("compare", TRIALS, RUN_B, "--reader", R, "-p", "helm-choice@1", "--epoch", "2",
                     "--replicates", "0", "-f", "json"))
    assert out["old"]["files"][0]["reader_options"]["epoch"] == "2"


# --- the gold rule ---------------------------------------------------------------------------------
def test_several_correct_references_with_different_golds_leave_the_instance_out(tmp_path):
    refs2 = [_ref("x"), _ref("y", True), _ref("z", True), _ref("w")]
    path = _write(tmp_path, [_state("id0", [_ref("x", True), _ref("y")], " A"), _state("id1", refs2, " B"),
                             _state("id2", [_ref("x"), _ref("y", True)], "B")])
    run, diag = _load(path)
    assert run.keys.tolist() == ["id0", "id2"] and run.gold.tolist() == [0, 1]
    assert diag.counts() == {"several-correct": 1}
    w = diag.warnings[0]
    lines = path.read_text().splitlines()
    assert lines[w.line - 1] == "    {" and '"id": "id1"' in "".join(lines[w.line - 1 : w.line + 40])
    assert lines[7] == "    {"  # request_states[0] opens on line 8
    assert "request_states[1] (instance id1, train trial 0): 2 different correct references " \
                              "('B', 'C')" in w.message
    assert _load(path)[0].files[0].skipped == 1
    with pytest.raises(BadInput, match="several-correct"):
        load_run("r", path, diagnostics=Diagnostics(strict=True), reader=R, options=ReadOptions(gold_labels=CHOICES))


def test_generation_gold_is_the_stripped_reference_text_and_equal_texts_are_one_gold(tmp_path):
    path = _write(tmp_path, [
        _state("id0", [_ref(" 3", True)], "3", joint=False),
        _state("id1", [_ref("7", True), _ref("7 ", True)], " 7\n", joint=False),  # two correct, one text
        _state("id2", [_ref("4", True), _ref("four", True)], "4", joint=False),  # two acceptable answers
        _state("id3", [_ref("5", True)], "five", joint=False),
    ], method="generation")
    run, diag = _load(path, parser="number@1")
    assert run.keys.tolist() == ["id0", "id1", "id3"] and run.gold.tolist() == [3, 7, 5]
    assert diag.counts() == {"several-correct": 1} and "('4', 'four')" in diag.warnings[0].message
    assert list(run.outputs) == ["3", " 7\n", "five"]


def test_a_text_gold_no_label_of_the_parser_is_refused_naming_the_line(tmp_path):
    path = _write(tmp_path, [_state("id0", [_ref("Paris", True)], "Paris", joint=False)], method="generation")
    with pytest.raises(BadInput, match=r"scenario_state.json:8: gold 'Paris' is not a whole-number grade"):
        _load(path, parser="number@1")


# --- bad input ---------------------------------------------------------------------------------------
def test_an_instance_without_a_correct_reference_is_refused(tmp_path):
    path = _write(tmp_path, [_state("id0", [_ref("x", True), _ref("y")], "A"), _state("id7", [_ref("x"), _ref("y")], "A")])
    with pytest.raises(BadInput, match=r"scenario_state.json:\d+: request_states\[1\] \(instance id7, train trial 0\): "
                                       r"no reference is tagged 'correct'"):
        _load(path)


def test_a_torn_scenario_state_is_refused_naming_the_file(tmp_path):
    path = _write(tmp_path, [_state("id0", [_ref("x", True)], "A")])
    data = path.read_bytes()
    path.write_bytes(data[: data.rfind(b"\n", 0, len(data) // 2) + 1])  # an interrupted write: whole lines
    with pytest.raises(BadInput, match=r"scenario_state.json:\d+: truncated JSON"):
        _load(path)


def test_separate_multiple_choice_has_no_answer_to_parse(tmp_path):
    path = _write(tmp_path, [_state("id0", [_ref("x", True)], "x", joint=False)],
                  method="multiple_choice_separate_original")
    with pytest.raises(BadInput, match=r"adapter method 'multiple_choice_separate_original' has no answer text to parse"):
        _load(path)


def test_a_request_without_result_is_unparsed_and_warned(tmp_path):
    path = _write(tmp_path, [_state("id0", [_ref("x", True)], None), _state("id1", [_ref("x", True)], "A")])
    run, diag = _load(path)
    assert list(run.outputs) == [None, "A"] and diag.counts() == {"no-result": 1}


def test_the_same_instance_twice_and_a_malformed_mapping_are_refused(tmp_path):
    one = _state("id0", [_ref("x", True)], "A")
    with pytest.raises(BadInput, match=r"request_states\[1\] \(instance id0, train trial 0\) is given again "
                                       r"\(first as request_states\[0\]\)"):
        _load(_write(tmp_path, [one, one], name="twice"))
    bad = _state("id0", [_ref("x", True), _ref("y")], "A")
    bad["output_mapping"] = {"A": "y", "B": "x"}
    with pytest.raises(BadInput, match=r"output_mapping\['A'\] is not references\[0\]'s text"):
        _load(_write(tmp_path, [bad], name="mapping"))


def test_a_runs_file_names_the_reader_for_a_run_directory(tmp_path):
    toml = tmp_path / "runs.toml"
    toml.write_text(f'[runs]\nold = {{ files = ["{RUN_A}"], reader = "{R}" }}\n'
                    f'new = {{ files = ["{TRIALS}"], reader = "{R}", epoch = 1 }}\n', encoding="utf-8")
    out = _json(_cli("chain", "--runs", toml, "-p", "helm-choice@1", "--replicates", "0", "-f", "json"))
    assert [r["name"] for r in out["runs"]] == ["old", "new"]  # a runs file's names are kept


def test_helm_run_directories_are_named_after_their_models():
    out = _json(_cli("compare", RUN_A, RUN_B, "--correct-field", "exact_match", "--replicates", "0", "-f", "json"))
    assert (out["old"]["name"], out["new"]["name"]) == ("example/model-a", "example/model-b")
    assert out["old"]["files"][0]["about"] == {"model": "example/model-a",
                                               "task": "mmlu:subject=anatomy,method=multiple_choice_joint"}


def test_an_edge_named_by_file_still_finds_runs_renamed_after_their_models(tmp_path):
    runs = []
    for name, texts in (("old", ["1", "2", "x"]), ("new", ["1", "3", "3"])):
        states = [_state(f"id{i}", [_ref(str(i + 1), True)], t, joint=False) for i, t in enumerate(texts)]
        path = _write(tmp_path, states, method="generation", name=name)
        (path.parent / "run_spec.json").write_text(json.dumps({"name": f"t:model=m_{name}",
                                                               "adapter_spec": {"model": f"m/{name}"}}))
        runs.append(path.parent)
    out = _json(_cli("parsers", "audit", *runs, "--reader", R, "-p", "number@1", "-p", "umbrela-fallback@1",
                     "--edge", "old:new", "--replicates", "0", "-f", "json"))
    assert [f["run"] for f in out["files"]] == ["m/old", "m/new"]
    assert out["edge"]["old"] == "m/old" and out["edge"]["new"] == "m/new"
