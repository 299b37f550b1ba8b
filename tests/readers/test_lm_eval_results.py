"""lm-eval-samples@1 and the ``results_<date>.json`` lm-eval writes beside the samples.

Fixtures: the six gsm8k-shaped samples of data/lm_eval copied into
``<tmp>/<model dir>/`` with a small results file written here, in the
layout lm-eval's evaluation tracker uses (``results_<date>.json`` and
``samples_<task>_<date>.jsonl`` share the date).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.judge.load import load_run
from replicate.reading.contract import ReadOptions
from replicate_parsers.lm_eval_results import model_of
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data" / "lm_eval"
DATE_A, DATE_B = "2024-05-01T10-00-00.000000", "2024-11-20T09-30-00.000000"
R = "lm-eval-samples@1"


def _results(model: str | None = "org/model-a", task: str = "gsm8k", **more) -> dict:
    out: dict = {
        "results": {task: {"exact_match,strict-match": 0.5, "alias": task}},
        "configs": {task: {"task": task, "num_fewshot": 5}},
        "versions": {task: 3.0},
        "n-shot": {task: 5},
        "config": {"model": "hf", "model_args": f"pretrained={model},dtype=float" if model else "dtype=float"},
        "git_hash": "1a2b3c4",
        "lm_eval_version": "0.4.5",
        "transformers_version": "4.44.0",
    }
    if model is not None:
        out.update(model_name=model, model_name_sanitized=model.replace("/", "__"))
    out.update(more)
    return out


def _run_dir(tmp_path: Path, name: str, date: str, results: dict | None, results_date: str | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    samples = folder / f"samples_gsm8k_{date}.jsonl"
    shutil.copy(DATA / f"samples_gsm8k_{date}.jsonl", samples)
    if results is not None:
        (folder / f"results_{results_date or date}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return samples


def _read(path: Path):
    diag = Diagnostics()
    run = load_run("r", path, diagnostics=diag, reader=R, options=ReadOptions(extra={"filter": "strict-match"}))
    return run, diag


def _compare(*args, jobs: int = 1):
    return CliRunner().invoke(app, ["--no-cache", "compare", *map(str, args), "--filter", "strict-match",
                                    "--replicates", "0", "-f", "json", "--jobs", str(jobs)])


def test_the_results_file_names_the_model_and_version_in_the_provenance(tmp_path):
    run, diag = _read(_run_dir(tmp_path, "org__model-a", DATE_A, _results()))
    assert len(diag) == 0
    assert dict(run.files[0].about) == {
        "task": "gsm8k", "results_file": f"results_{DATE_A}.json", "model": "org/model-a",
        "lm_eval_version": "0.4.5", "git_hash": "1a2b3c4", "task_version": "3.0",
    }


@pytest.mark.parametrize("jobs", [1, 2])  # 2: read by worker processes, which send the names back
def test_compare_names_each_run_after_its_model_and_json_keeps_it(tmp_path, jobs):
    a = _run_dir(tmp_path, "org__model-a", DATE_A, _results("org/model-a"))
    b = _run_dir(tmp_path, "org__model-b", DATE_B, _results("org/model-b"))
    res = _compare(a, b, jobs=jobs)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["old"]["name"], out["new"]["name"]) == ("org/model-a", "org/model-b")
    assert out["old"]["files"][0]["about"]["lm_eval_version"] == "0.4.5"
    assert out["new"]["files"][0]["about"]["model"] == "org/model-b"
    # strict-match: docs 2, 3, 5 of A and 1, 3, 5 of B are [invalid] (no answer): wrong, as lm-eval scores them
    assert out["cells"] == {"both": 2, "only_old": 1, "only_new": 1, "neither": 2}
    assert out["old"]["files"][0]["extraction_failures"] == 3 and out["new"]["files"][0]["extraction_failures"] == 3


def test_a_runs_file_name_wins_over_the_model(tmp_path):
    a = _run_dir(tmp_path, "a", DATE_A, _results("org/model-a"))
    b = _run_dir(tmp_path, "b", DATE_B, _results("org/model-b"))
    toml = tmp_path / "runs.toml"
    toml.write_text(f'[runs]\nold = ["{a.relative_to(tmp_path)}"]\nnew = ["{b.relative_to(tmp_path)}"]\n', encoding="utf-8")
    res = CliRunner().invoke(app, ["--no-cache", "chain", "--runs", str(toml), "--filter", "strict-match",
                                   "--replicates", "0", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert [r["name"] for r in json.loads(res.stdout)["runs"]] == ["old", "new"]


def test_two_runs_of_one_model_keep_their_file_names(tmp_path):
    a = _run_dir(tmp_path, "seed1", DATE_A, _results("org/model-a"))
    b = _run_dir(tmp_path, "seed2", DATE_B, _results("org/model-a"))
    out = json.loads(_compare(a, b).stdout)
    assert (out["old"]["name"], out["new"]["name"]) == (a.name[: -len(".jsonl")], b.name[: -len(".jsonl")])
    assert out["old"]["files"][0]["about"]["model"] == "org/model-a"


def test_model_args_name_the_model_when_model_name_is_absent(tmp_path):
    older = _results(None)
    older["config"]["model_args"] = "peft=org/adapter,pretrained=org/base"  # lm-eval looks for peft before pretrained
    run, _ = _read(_run_dir(tmp_path, "x", DATE_A, older))
    assert dict(run.files[0].about)["model"] == "org/adapter"
    assert model_of({"config": {"model_args": {"pretrained": "org/base", "dtype": "float"}}}) == "org/base"
    assert model_of({"config": {"model_args": "dtype=float"}}) is None


def test_no_results_file_is_warned_not_refused(tmp_path):
    run, diag = _read(_run_dir(tmp_path, "x", DATE_A, None))
    assert len(run) == 6 and dict(run.files[0].about) == {"task": "gsm8k"}
    assert diag.counts() == {"lm-eval-results": 1}
    assert f"no results_{DATE_A}.json beside the samples" in diag.warnings[0].message


def test_a_results_file_of_another_date_is_read_warned_the_newest_first(tmp_path):
    samples = _run_dir(tmp_path, "x", DATE_A, _results("org/older"), results_date="2024-04-30T09-00-00")
    (samples.parent / "results_2024-04-30T09-00-00.5.json").write_text(json.dumps(_results("org/newer")), encoding="utf-8")
    run, diag = _read(samples)
    assert dict(run.files[0].about)["model"] == "org/newer"
    assert dict(run.files[0].about)["results_file"] == "results_2024-04-30T09-00-00.5.json"
    assert diag.counts() == {"lm-eval-results": 1}
    assert "read the newest results file, results_2024-04-30T09-00-00.5.json, whose date differs" in diag.warnings[0].message


def test_a_results_file_of_another_task_is_warned(tmp_path):
    run, diag = _read(_run_dir(tmp_path, "x", DATE_A, _results(task="arc_easy")))
    assert dict(run.files[0].about)["model"] == "org/model-a"
    assert diag.counts() == {"lm-eval-results": 1}
    assert "does not name the samples' task 'gsm8k' (its tasks: arc_easy)" in diag.warnings[0].message


def test_a_torn_results_file_is_warned_naming_it(tmp_path):
    samples = _run_dir(tmp_path, "x", DATE_A, None)
    (samples.parent / f"results_{DATE_A}.json").write_text(json.dumps(_results())[:40], encoding="utf-8")
    run, diag = _read(samples)
    assert len(run) == 6 and "model" not in dict(run.files[0].about)
    assert diag.counts() == {"lm-eval-results": 1}
    assert f"results_{DATE_A}.json beside the samples is not readable JSON" in diag.warnings[0].message


def test_strict_makes_a_missing_results_file_an_error(tmp_path):
    a = _run_dir(tmp_path, "a", DATE_A, None)
    b = _run_dir(tmp_path, "b", DATE_B, _results("org/model-b"))
    res = CliRunner().invoke(app, ["--no-cache", "compare", str(a), str(b), "--filter", "strict-match", "--strict"])
    assert res.exit_code != 0
    assert f"no results_{DATE_A}.json beside the samples" in res.output


def test_import_takes_the_model_from_the_results_file(tmp_path):
    a = _run_dir(tmp_path, "org__model-a", DATE_A, _results("org/model-a"))
    out = tmp_path / "trials.jsonl"
    res = CliRunner().invoke(app, ["--no-cache", "import", str(a), "--out", str(out), "--filter", "strict-match"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["model"] for r in rows if "model" in r} == {"org/model-a"}


def test_a_changed_results_file_is_seen_by_a_rerun(tmp_path):
    from support.cachecli import replicate

    a = _run_dir(tmp_path, "org__model-a", DATE_A, _results("org/model-a"))
    b = _run_dir(tmp_path, "org__model-b", DATE_B, _results("org/model-b"))
    args = ("compare", str(a), str(b), "--filter", "strict-match", "--replicates", "0", "-f", "json")
    cache = tmp_path / "cache"
    for jobs in ("1", "2"):  # 2: the runs are read by worker processes, which name the files they read beside
        first = replicate(tmp_path, cache, *args, "--jobs", jobs)
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["old"]["name"] == "org/model-a"
        renamed = _results(f"org/model-c{jobs}")
        (a.parent / f"results_{DATE_A}.json").write_text(json.dumps(renamed), encoding="utf-8")
        again = replicate(tmp_path, cache, *args, "--jobs", jobs)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["old"]["name"] == f"org/model-c{jobs}"
        (a.parent / f"results_{DATE_A}.json").write_text(json.dumps(_results("org/model-a")), encoding="utf-8")
