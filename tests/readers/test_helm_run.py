"""helm-run@1: HELM run output (a run directory or its per-instance files) read as correctness verdicts.

The fixtures in data/helm are our own synthetic run directories in the exact
layout HELM's runner writes (tools/make_helm_runs.py from
tests/support/synth/helm_runs.py): six MMLU-like instances (id0, id1 valid;
id2-id5 test) and the typos perturbation of id4 and id5, answered by two
made-up models, and model b over two train trials.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.load import load_run
from replicate.judge.model import KEY_SEP
from replicate.reading.contract import READERS, ReadOptions
from support.ci import used
from support.paths import ROOT
from support.synth import helm_runs as hr
from support.synth.helm_runs import Prediction

DATA = ROOT / "tests" / "readers" / "data" / "helm"
SUITE = DATA / "runs" / hr.SUITE
RUN_A, RUN_B, TRIALS = SUITE / hr.RUN_SPEC.format("a"), SUITE / hr.RUN_SPEC.format("b"), SUITE / "trials"
R = "helm-run@1"
KEYS = ["id0", "id1", "id2", "id3", "id4", "id5", f"id4{KEY_SEP}typos", f"id5{KEY_SEP}typos"]

# exact_match per prediction (id0 .. id5, id4+typos, id5+typos), by hand:
#   a 1 1 0 1 0 1 0 1    b 1 0 1 1 0 1 1 0
# both = id0, id3, id5; only_old = id1, id5+typos; only_new = id2, id4+typos; neither = id4.
CELLS = {"both": 3, "only_old": 2, "only_new": 2, "neither": 1}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _load(path, reader=R, **extra):
    diag = Diagnostics()
    run = load_run("r", path, diagnostics=diag, reader=reader, options=ReadOptions(extra=extra))
    return run, diag


def _verdicts(run) -> str:
    assert run.labels is not None
    return "".join(map(str, run.labels.tolist()))


def test_the_fixtures_are_what_the_generator_writes(tmp_path):
    for made in hr.write_fixtures(tmp_path):
        for path in sorted(made.iterdir()):
            committed = SUITE / made.name / path.name
            assert path.read_bytes() == committed.read_bytes(), f"{committed}: rerun tools/make_helm_runs.py"
        assert sorted(p.name for p in made.iterdir()) == sorted(p.name for p in (SUITE / made.name).iterdir())


def test_the_fixtures_hold_the_hand_table():
    entries = json.loads((RUN_A / "per_instance_stats.json").read_text())
    assert len(entries) == 16  # two metric classes, each over the eight predictions
    em = ["".join(str(int(s["mean"])) for s in e["stats"] if s["name"]["name"] == "exact_match") for e in entries]
    assert "".join(em) == hr.OLD_RIGHT
    assert [e.get("perturbation", {}).get("name") for e in entries[:8]] == [None] * 6 + ["typos"] * 2
    shown = json.loads((RUN_B / "display_predictions.json").read_text())
    assert "".join(str(int(d["stats"]["exact_match"])) for d in shown) == hr.NEW_RIGHT


def test_acceptance_compare_cells_equal_the_hand_count(tmp_path):
    a, b = tmp_path / "RUN_A", tmp_path / "RUN_B"
    shutil.copytree(RUN_A, a)
    shutil.copytree(RUN_B, b)
    res = _run("compare", a, b, "--reader", R, "--correct-field", "exact_match", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == CELLS and out["n"] == 8
    assert out["em_old"] == 5 / 8 and out["em_new"] == 5 / 8
    assert out["regression_rate"] == 2 / 8
    assert out["reader"] == R and out["parser"] == "helm-metric"
    f = out["old"]["files"][0]
    assert f["path"] == str(a / "per_instance_stats.json") and f["format"] == "helm-run"
    assert f["reader_options"] == {"file": "per_instance_stats.json", "correct_field": "exact_match", "split": "test,valid"}
    assert f["lines"] == 16 and f["records"] == 8
    assert out["absent"]["change_rate"].startswith("change_rate needs labels")
    # an instance and its perturbations are resampled together: six instances
    assert used(out)["em_old"]["cluster"] == "instance_id" and used(out)["em_old"]["clusters"] == 6


def test_the_directory_is_chosen_by_content_and_its_files_read_alike():
    res = _run("compare", RUN_A, RUN_B / "display_predictions.json", "--correct-field", "exact_match", "-f", "json",
               "--replicates", "0")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["cells"] == CELLS
    assert f"reader: {R} (chosen by content" in res.stderr and "per_instance_stats.json" in res.stderr
    for path in (RUN_A, RUN_A / "per_instance_stats.json", RUN_A / "display_predictions.json"):
        run, diag = _load(path, correct_field="exact_match")
        assert run.keys.tolist() == KEYS and _verdicts(run) == hr.OLD_RIGHT and not len(diag)
    shown, _ = _load(RUN_A / "display_predictions.json", correct_field="exact_match")
    assert shown.files[0].reader_options == (("file", "display_predictions.json"), ("correct_field", "exact_match"))


def test_the_records_carry_the_train_trial_and_the_entry_line():
    from replicate.reading.contract import Source

    path = TRIALS / "per_instance_stats.json"
    src = Source(path, path.read_bytes(), ReadOptions(extra={"correct_field": "exact_match"}), Diagnostics())
    recs = list(READERS.get(R).records(src))
    assert len(recs) == 16 and [r.trial for r in recs] == [1] * 8 + [2] * 8
    assert [r.key for r in recs[5:7]] == [("id5",), ("id4", "typos")]
    lines = path.read_text().split("\n")
    assert all(lines[r.line - 1] == "  {" for r in recs)  # each record names the line its entry opens on
    assert lines[recs[1].line] == '    "instance_id": "id1",'


def test_several_train_trials_are_refused_unless_one_is_picked():
    res = _run("compare", RUN_A, TRIALS, "--correct-field", "exact_match")
    assert res.exit_code == 2
    assert "the file holds several trials of its items" in res.stderr and "keep one with --epoch" in res.stderr
    # --epoch 1 keeps train_trial_index 0 (model b's answers), --epoch 2 keeps 1 (model a's answers)
    res = _run("compare", RUN_A, TRIALS, "--correct-field", "exact_match", "--epoch", "1", "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == CELLS
    assert out["new"]["files"][0]["reader_options"]["epoch"] == "1" and out["new"]["files"][0]["records"] == 8
    assert "warning" not in res.stderr  # run a's one train trial is train trial 0
    run, _ = _load(TRIALS, correct_field="exact_match", epoch=2)
    assert _verdicts(run) == hr.OLD_RIGHT
    run, diag = _load(RUN_A, correct_field="exact_match", epoch=2)  # one train trial: read whole, warned
    assert _verdicts(run) == hr.OLD_RIGHT and [w.code for w in diag.warnings] == ["single-trial"]
    with pytest.raises(BadInput, match=r"no entry has train trial 2 \(epoch 3\); train trials in this run: "
                                       r"0 \(--epoch 1\), 1 \(--epoch 2\)"):
        _load(TRIALS, correct_field="exact_match", epoch=3)


# the metric ---------------------------------------------------------------------------------
def test_no_metric_named_is_refused_listing_the_metrics():
    res = _run("compare", RUN_A, RUN_B)
    assert res.exit_code == 2
    assert ("per_instance_stats.json: name the per-instance metric that says right or wrong with --correct-field "
            "(e.g. exact_match); metrics in this file: 0/1 in every entry: exact_match,") in res.stderr
    assert "others: inference_runtime, logprob, num_bytes," in res.stderr


def test_an_unknown_metric_is_refused_listing_those_present():
    with pytest.raises(BadInput, match=r"per_instance_stats.json: no entry has the metric 'f1_score' \(correct_field\); "
                                       r"metrics in this file: 0/1 in every entry: exact_match, .*quasi_exact_match"):
        _load(RUN_A, correct_field="f1_score")
    with pytest.raises(BadInput, match=r"display_predictions.json: no entry has the metric 'f1_score'"):
        _load(RUN_A / "display_predictions.json", correct_field="f1_score")


def _write(tmp_path, preds, name="run"):
    return hr.write_run(tmp_path / name, "example/model-x", preds)


def test_a_non_binary_metric_is_refused_unless_mapped(tmp_path):
    preds = [Prediction(f"id{i}", "test", 0, 0, extra={"f1_score": v}) for i, v in enumerate([1.0, 0.5, 0.0, 0.25])]
    run_dir = _write(tmp_path, preds)
    with pytest.raises(BadInput, match=r"per_instance_stats.json:\d+: entry 2 \(instance id1, train trial 0\): "
                                       r"'f1_score' is 0.5, not 1 \(right\) or 0 \(wrong\).*\(0.5=1 or 0.5=0\)"):
        _load(run_dir, correct_field="f1_score")
    run, _ = _load(run_dir, correct_field="f1_score", score_map="0.5=1,0.25=0")
    assert _verdicts(run) == "1100"
    assert dict(run.files[0].reader_options)["score_map"] == "0.5=1,0.25=0"
    with pytest.raises(UsageError, match=r"score_map entry 'P=1' must be VALUE=1 or VALUE=0 with a numeric VALUE"):
        _load(run_dir, correct_field="f1_score", score_map="P=1")


def test_a_stat_without_a_mean_and_nan_are_unscored_and_warned(tmp_path):
    preds = [Prediction(f"id{i}", "test", 0, 0) for i in range(3)]
    run_dir = _write(tmp_path, preds)
    path = run_dir / "per_instance_stats.json"
    entries = json.loads(path.read_text())
    em = [s for s in entries[1]["stats"] if s["name"]["name"] == "exact_match"][0]
    for k in ("min", "max", "mean", "variance", "stddev"):
        del em[k]  # a Stat of count 0, as HELM writes it (None fields left out)
    em.update(count=0, sum=0, sum_squared=0)
    [s for s in entries[2]["stats"] if s["name"]["name"] == "exact_match"][0]["mean"] = math.nan
    path.write_text(json.dumps(entries, indent=2))  # Python's json writes NaN, as HELM's runner does
    assert "NaN" in path.read_text()
    run, diag = _load(run_dir, correct_field="exact_match")
    assert run.labels is not None and run.labels.tolist() == [1, -1, -1]
    text = " ".join(w.message for w in diag.warnings)
    assert "entry 2 (instance id1, train trial 0): 'exact_match' has no value (count 0" in text
    assert "entry 3 (instance id2, train trial 0): 'exact_match' is NaN" in text


def test_an_instance_lacking_the_metric_is_refused_listing_its_stats(tmp_path):
    run_dir = _write(tmp_path, hr.predictions(hr.OLD_RIGHT))
    path = run_dir / "per_instance_stats.json"
    entries = json.loads(path.read_text())
    entries[3]["stats"] = [s for s in entries[3]["stats"] if s["name"]["name"] != "exact_match"]
    path.write_text(json.dumps(entries, indent=2))
    with pytest.raises(BadInput, match=r"per_instance_stats.json:\d+: entry 4 \(instance id3, train trial 0\) has no "
                                       r"'exact_match' stat in any of its entries \(other instances have one\); its "
                                       r"stats: inference_runtime, logprob, num_bytes"):
        _load(run_dir, correct_field="exact_match")


def test_unknown_fields_are_ignored(tmp_path):
    run_dir = _write(tmp_path, hr.predictions(hr.NEW_RIGHT))
    path = run_dir / "per_instance_stats.json"
    entries = json.loads(path.read_text())
    for e in entries:
        e["annotations"] = {"judge": "x"}
        for s in e["stats"]:
            s["name"]["sub_split"] = "anatomy"
            s["p50"] = 0.0
    path.write_text(json.dumps(entries, indent=2))
    run, diag = _load(run_dir, correct_field="exact_match")
    assert _verdicts(run) == hr.NEW_RIGHT and not len(diag)


# bad input ----------------------------------------------------------------------------------
def test_a_directory_without_the_files_is_refused_listing_what_it_holds(tmp_path):
    run_dir = tmp_path / "mmlu:subject=anatomy,model=x"
    shutil.copytree(RUN_A, run_dir)
    (run_dir / "per_instance_stats.json").unlink()
    run, _ = _load(run_dir, correct_field="exact_match")  # display_predictions.json is read instead
    assert run.files[0].provenance.path.endswith("display_predictions.json") and _verdicts(run) == hr.OLD_RIGHT
    (run_dir / "display_predictions.json").unlink()
    for reader in (R, None):
        with pytest.raises(BadInput, match=r"model=x: is a directory holding none of the files a reader reads a "
                                           r"directory through \(helm-run@1: per_instance_stats.json or "
                                           r"display_predictions.json\); it holds: display_requests.json, instances.json"):
            _load(run_dir, reader=reader, correct_field="exact_match")
    with pytest.raises(BadInput, match=r"is a directory, not a file: reader trec-qrels@1 reads files"):
        _load(RUN_A, reader="trec-qrels@1")


def test_other_run_files_are_refused_saying_which_to_give():
    for name in ("instances.json", "scenario_state.json", "stats.json", "run_spec.json", "display_requests.json",
                 "scenario.json"):
        with pytest.raises(BadInput, match=rf"{name}: this is HELM's {name} \(.*\), which holds no per-instance verdict: "
                                           r"helm-run@1 reads per_instance_stats.json \(or display_predictions.json\); "
                                           r"give the run directory"):
            _load(RUN_A / name, correct_field="exact_match")


def test_not_json_and_truncated_json_are_refused_naming_the_line(tmp_path):
    data = (RUN_A / "per_instance_stats.json").read_bytes()
    cut = tmp_path / "cut" / "per_instance_stats.json"
    cut.parent.mkdir()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInput, match=r"cut/per_instance_stats.json:\d+: truncated JSON: the document ends before "
                                       r"it is complete"):
        _load(cut.parent, correct_field="exact_match")
    res = _run("compare", cut.parent, RUN_B, "--correct-field", "exact_match")  # by content: still recognised
    assert res.exit_code == 2 and "truncated JSON" in res.stderr
    broken = tmp_path / "per_instance_stats.json"
    lines = data.decode().split("\n")
    lines[40] = lines[40].replace(":", "=", 1)
    broken.write_text("\n".join(lines))
    with pytest.raises(BadInput, match=r"per_instance_stats.json:41: not JSON: Expecting ':' delimiter \(line 41, column"):
        _load(broken, correct_field="exact_match")


def test_the_same_instance_twice_is_refused_naming_both_entries(tmp_path):
    run_dir = _write(tmp_path, hr.predictions(hr.OLD_RIGHT))
    path = run_dir / "per_instance_stats.json"
    entries = json.loads(path.read_text())
    path.write_text(json.dumps(entries + [entries[6]], indent=2))
    with pytest.raises(BadInput, match=r"per_instance_stats.json:\d+: entry 17 \(instance id4, perturbation typos, "
                                       r"train trial 0\): a second 'exact_match' stat for this instance, perturbation "
                                       r"and train trial \(first in entry 7\)"):
        _load(run_dir, correct_field="exact_match")
    shown = run_dir / "display_predictions.json"
    preds = json.loads(shown.read_text())
    shown.write_text(json.dumps(preds + [preds[2]], indent=2))
    with pytest.raises(BadInput, match=r"display_predictions.json:\d+: entry 9 \(instance id2, train trial 0\) is given "
                                       r"again \(first in entry 3\)"):
        _load(shown, correct_field="exact_match")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda e: e.pop("instance_id"), r"entry 3 lacks 'instance_id': a HELM instance id is a non-empty string"),
        (lambda e: e.update(instance_id=3), r"entry 3 has 'instance_id' a JSON int \(3\)"),
        # an integer beyond 64 bits (the document's reader keeps it whole) is named by its size, not a traceback
        (lambda e: e.update(instance_id=10**400), r"entry 3 has 'instance_id' a JSON int \(1329-bit integer\)"),
        (lambda e: e.pop("train_trial_index"), r"entry 3 \(instance id2\) lacks 'train_trial_index'"),
        (lambda e: e.update(perturbation="typos"), r"entry 3: 'perturbation' must be an object with a 'name'"),
        (lambda e: e.update(stats={"exact_match": 1}), r"entry 3 \(instance id2, train trial 0\): 'stats' must be a list"),
    ],
)
def test_a_malformed_entry_is_refused_naming_it_and_its_line(tmp_path, change, message):
    run_dir = _write(tmp_path, hr.predictions(hr.OLD_RIGHT))
    path = run_dir / "per_instance_stats.json"
    entries = json.loads(path.read_text())
    change(entries[2])
    path.write_text(json.dumps(entries, indent=2))
    line = [i for i, text in enumerate(path.read_text().split("\n"), 1) if text == "  {"][2]  # the third entry's
    with pytest.raises(BadInput, match=rf"per_instance_stats.json:{line}: {message}"):
        _load(run_dir, correct_field="exact_match")


def test_sniffing_tells_helm_files_from_others():
    reader = READERS.get(R)
    opts = ReadOptions()
    for name in ("per_instance_stats.json", "display_predictions.json"):
        data = (RUN_A / name).read_bytes()
        assert reader.sniff(data[:4096], opts) == "yes"  # cut short: read by the first entry's opening
        compact = json.dumps(json.loads(data)).encode()
        assert reader.sniff(compact, opts) == "yes"
    person = {"name": "person_name", "robustness": False, "fairness": True, "computed_on": "perturbed", "prob": 0.5,
              "source_class": {"race": "white_american"}, "target_class": {"race": "black_american"}}
    big = [{"instance_id": "id0", "perturbation": person, "train_trial_index": 0,
            "stats": [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": 1.0}] * 2000}]
    assert len(json.dumps(big, indent=2)) > 4 * len(json.dumps(big, indent=2)[:4096])
    assert reader.sniff(json.dumps(big, indent=2).encode()[:4096], opts) == "yes"  # a nested perturbation, cut short
    for name in ("instances.json", "stats.json", "scenario_state.json", "display_requests.json", "run_spec.json"):
        assert reader.sniff((RUN_A / name).read_bytes()[:4096], opts) == "maybe", name
    flat = (ROOT / "fixtures" / "example" / "results" / "alpha-2024-05_annotations.jsonl").read_bytes()[:4096]
    assert reader.sniff(flat, opts) == "no"
    assert reader.sniff(b'[["q1", [{"paragraph_id": "p1"}]]]\n', opts) == "no"


# the run's model and task, and replicate import --------------------------------------------
def test_the_run_spec_beside_the_file_names_the_model_and_task(tmp_path):
    from replicate.reading.contract import Source
    from replicate_parsers.helm_layout import task_of

    path = RUN_A / "per_instance_stats.json"
    src = Source(path, path.read_bytes(), ReadOptions(extra={"correct_field": "exact_match"}), Diagnostics())
    list(READERS.get(R).records(src))
    assert src.about == {"model": "example/model-a", "task": "mmlu:subject=anatomy,method=multiple_choice_joint"}
    assert task_of("mmlu:subject=anatomy,model=openai_gpt2,model_deployment=x") == "mmlu:subject=anatomy"
    assert task_of("boolq:model=a") == "boolq" and task_of("synthetic") == "synthetic"
    alone = tmp_path / "per_instance_stats.json"  # no run_spec.json beside it: nothing said
    shutil.copy(path, alone)
    src = Source(alone, alone.read_bytes(), ReadOptions(extra={"correct_field": "exact_match"}), Diagnostics())
    list(READERS.get(R).records(src))
    assert src.about == {}


def test_import_writes_every_train_trial_of_a_run_directory(tmp_path):
    out = tmp_path / "trials.jsonl"
    res = _run("import", TRIALS, "--reader", R, "--correct-field", "exact_match", "--out", out, "-f", "json")
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 16 and {r["model"] for r in rows} == {"example/model-b"}
    assert {r["benchmark"] for r in rows} == {"mmlu:subject=anatomy,method=multiple_choice_joint"}
    by_trial = {t: "".join("1" if r["category"] == "correct" else "0" for r in rows if r["trial"] == t) for t in (1, 2)}
    assert by_trial == {1: hr.NEW_RIGHT, 2: hr.OLD_RIGHT}  # train trial 0 is model b's answers, 1 model a's
    assert {r["item"] for r in rows} == {"id0", "id1", "id2", "id3", "id4", "id5", "id4/typos", "id5/typos"}


def test_the_reader_declares_its_options():
    reader = READERS.get(R)
    assert reader.options == ("correct_field", "score_map", "epoch") and reader.trial_option == "epoch"
    assert reader.run_files == ("per_instance_stats.json", "display_predictions.json")


def test_a_runs_file_names_run_directories_with_their_reader_options(tmp_path):
    runs = tmp_path / "runs.toml"
    runs.write_text(
        "[runs]\n"
        f'a = {{ files = ["{RUN_A}"], reader = "{R}", correct_field = "exact_match" }}\n'
        f'b = {{ files = ["{TRIALS}"], reader = "{R}", correct_field = "exact_match", epoch = 1 }}\n'
    )
    res = _run("chain", "--runs", runs, "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    edge = json.loads(res.stdout)["edges"][0]
    assert edge["cells"] == CELLS


def test_matrix_floor_and_verify_take_a_run_directory_as_compare_does(tmp_path):
    # compare read a run directory through the file its reader names; matrix, floor (select_runs) and verify's
    # [runs] refused it as 'neither a run named in --runs nor an existing file' / 'not found'
    opts = ("--correct-field", "exact_match", "-f", "json", "--replicates", "0")
    compared = _run("compare", RUN_A, RUN_B, *opts)
    assert compared.exit_code == 0, compared.output
    cells = json.loads(compared.stdout)["cells"]
    assert cells == CELLS
    matrix = _run("matrix", RUN_A, RUN_B, *opts)
    assert matrix.exit_code == 0, matrix.output
    pairs = {(p["old"]["name"], p["new"]["name"]): p["cells"] for p in json.loads(matrix.stdout)["pairs"]}
    a, b = json.loads(compared.stdout)["old"]["name"], json.loads(compared.stdout)["new"]["name"]
    assert pairs[(a, b)] == cells
    assert pairs[(b, a)] == {"both": 3, "only_old": 2, "only_new": 2, "neither": 1}  # the reverse edge, by hand
    floor = _run("floor", RUN_A, RUN_B, *opts)
    assert floor.exit_code == 0, floor.output
    assert json.loads(floor.stdout)["pairs"][0]["cells"] == cells
    shutil.copytree(RUN_A, tmp_path / "run-a")
    shutil.copytree(RUN_B, tmp_path / "run-b")
    claims = tmp_path / "claims.toml"
    claims.write_text(
        '[study]\ntitle = "t"\nreference = "x"\n[runs]\n'
        f'a = {{ files = ["run-a"], reader = "{R}", correct_field = "exact_match" }}\n'
        f'b = {{ files = ["run-b"], reader = "{R}", correct_field = "exact_match" }}\n'
        '[[claims]]\nid = "r"\nwhere = "T1"\nmetric = "regression_rate"\nold = "a"\nnew = "b"\n'
        'value = "25.0"\nunit = "percent"\n'
    )
    verified = _run("verify", claims, "--root", tmp_path)
    assert verified.exit_code == 0, verified.output
    assert "1 of 1 claims match" in verified.stdout


def test_a_directory_no_reader_reads_is_refused_by_matrix_as_by_compare(tmp_path):
    (tmp_path / "notes.txt").write_text("x\n")
    for cmd in ("compare", "matrix"):
        res = _run(cmd, tmp_path, RUN_B, "--correct-field", "exact_match")
        assert res.exit_code == 2, res.output
        assert f"Error: {tmp_path}: is a directory holding none of the files a reader reads" in res.stderr
