"""Synthetic HELM run directories in the exact shape HELM's runner writes them.

THE DATA ARE SYNTHETIC: the questions, answers, metric values and models are
made up here (or by the caller) and say nothing about any real model. What is
real is the layout: a run directory ``runs/<suite>/<run_spec_name>/`` holding
``run_spec.json``, ``scenario.json``, ``scenario_state.json``, ``stats.json``,
``per_instance_stats.json``, ``instances.json``, ``display_predictions.json``
and ``display_requests.json``, each the JSON HELM writes (dataclasses turned
into objects without their None fields, indented by two spaces), with the
fields of HELM's dataclasses in their order: ``PerInstanceStats`` (instance_id,
perturbation, train_trial_index, stats), ``Stat`` (name {name, split,
sub_split, perturbation}, count, sum, sum_squared, min, max, mean, variance,
stddev), ``DisplayPrediction`` (instance_id, perturbation, train_trial_index,
predicted_text, truncated_predicted_text, mapped_output, reference_index,
stats), ``Instance`` (input, references, split, sub_split, id, perturbation).
As HELM's runner does, ``per_instance_stats.json`` holds one entry per metric
class for each (instance, perturbation, train trial).

Used by ``tools/make_helm_runs.py`` (the committed test fixtures), by the
tests (bad variants) and by ``bench/bench_readers.py`` (large runs).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

#: The perturbation description HELM writes for its typos perturbation (robustness).
TYPOS: dict[str, Any] = {"name": "typos", "robustness": True, "fairness": False, "computed_on": "perturbed", "prob": 0.1}
CHOICES = ("A", "B", "C", "D")
GENERATION_METRICS = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match")


@dataclass(frozen=True)
class Prediction:
    """One evaluated (instance, perturbation, train trial) of a synthetic run."""

    instance_id: str
    split: str
    gold: int  # index of the correct reference (A = 0)
    predicted: int  # index of the choice the model answered
    perturbation: dict[str, Any] | None = None
    train_trial: int = 0
    runtime: float = 0.5
    extra: dict[str, Any] = field(default_factory=dict)  # more stats (name -> value) of the first entry


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def _stat(name: str, split: str, perturbation: dict[str, Any] | None, value: float) -> dict[str, Any]:
    metric_name: dict[str, Any] = {"name": name, "split": split}
    if perturbation is not None:
        metric_name["perturbation"] = perturbation
    return {"name": metric_name, "count": 1, "sum": value, "sum_squared": value * value, "min": value,
            "max": value, "mean": value, "variance": 0.0, "stddev": 0.0}


def _keyed(p: Prediction) -> dict[str, Any]:
    out: dict[str, Any] = {"instance_id": p.instance_id}
    if p.perturbation is not None:
        out["perturbation"] = p.perturbation
    out["train_trial_index"] = p.train_trial
    return out


def _generation_stats(p: Prediction) -> dict[str, float]:
    right = float(p.predicted == p.gold)
    values = {"num_references": 4.0, "num_train_trials": 1.0, "num_prompt_tokens": 212.0,
              "num_completion_tokens": 1.0, "num_output_tokens": 1.0, "inference_runtime": p.runtime,
              "num_train_instances": 5.0, "prompt_truncated": 0.0}
    values.update({m: right for m in GENERATION_METRICS})
    values.update(p.extra)
    return values


def per_instance_stats(preds: Sequence[Prediction]) -> list[dict[str, Any]]:
    """``per_instance_stats.json``: per metric class (generation metrics, then a second class), every prediction."""
    first = [{**_keyed(p), "stats": [_stat(n, p.split, p.perturbation, v) for n, v in _generation_stats(p).items()]}
             for p in preds]
    second = [{**_keyed(p), "stats": [_stat("num_bytes", p.split, p.perturbation, 2.0),
                                      _stat("logprob", p.split, p.perturbation, -0.25)]} for p in preds]
    return first + second


def _question(p: Prediction) -> str:
    text = f"Synthetic question {p.instance_id}: which choice is right?"
    return text.replace("which", "whcih") if p.perturbation is not None else text


def _instance(p: Prediction) -> dict[str, Any]:
    refs = [{"output": {"text": f"answer {c} to {p.instance_id}"}, "tags": ["correct"] if i == p.gold else []}
            for i, c in enumerate(CHOICES)]
    out: dict[str, Any] = {"input": {"text": _question(p)}, "references": refs, "split": p.split, "id": p.instance_id}
    if p.perturbation is not None:
        out["perturbation"] = p.perturbation
    return out


def _request(model: str, p: Prediction) -> dict[str, Any]:
    return {"model_deployment": model, "model": model, "embedding": False,
            "prompt": f"The following are multiple choice questions (with answers).\n\n{_question(p)}\nAnswer:",
            "temperature": 0.0, "num_completions": 1, "top_k_per_token": 5, "max_tokens": 1, "stop_sequences": ["\n"],
            "echo_prompt": False, "top_p": 1, "presence_penalty": 0, "frequency_penalty": 0}


def _mapping(p: Prediction) -> dict[str, str]:
    return {c: f"answer {c} to {p.instance_id}" for c in CHOICES}


def _adapter_spec(model: str, trials: int) -> dict[str, Any]:
    return {"method": "multiple_choice_joint", "global_prefix": "", "instructions": "The following are multiple "
            "choice questions (with answers).\n", "input_prefix": "", "input_suffix": "\n", "reference_prefix": "A. ",
            "reference_suffix": "\n", "output_prefix": "Answer: ", "output_suffix": "\n", "instance_prefix": "\n",
            "substitutions": [], "max_train_instances": 5, "max_eval_instances": 1000, "num_outputs": 5,
            "num_train_trials": trials, "num_trials": 1, "sample_train": True, "model_deployment": model,
            "model": model, "temperature": 0.0, "max_tokens": 1, "stop_sequences": ["\n"], "multi_label": False}


def write_run(run_dir: Path, model: str, preds: Sequence[Prediction], *, name: str = "") -> Path:
    """Write one HELM run directory of ``preds`` answered by ``model``; returns the directory."""
    run_dir.mkdir(parents=True, exist_ok=True)
    trials = max((p.train_trial for p in preds), default=0) + 1
    spec_name = name or run_dir.name
    adapter = _adapter_spec(model, trials)
    run_spec = {
        "name": spec_name,
        "scenario_spec": {"class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
                          "args": {"subject": "anatomy"}},
        "adapter_spec": adapter,
        "metric_specs": [{"class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                          "args": {"names": list(GENERATION_METRICS)}},
                         {"class_name": "helm.benchmark.metrics.basic_metrics.BasicReferenceMetric", "args": {}}],
        "data_augmenter_spec": {"perturbation_specs": [{"class_name": "helm.benchmark.augmentations.typos_perturbation."
                                                                      "TyposPerturbation", "args": {"prob": 0.1}}],
                                "should_augment_train_instances": False, "should_include_original_train": False,
                                "should_skip_unchanged_train": False, "should_augment_eval_instances": True,
                                "should_include_original_eval": True, "should_skip_unchanged_eval": True,
                                "seeds_per_instance": 1},
        "groups": ["mmlu"],
    }
    scenario = {"name": "mmlu", "description": "Massive Multitask Language Understanding", "tags": ["knowledge",
                "multiple_choice"], "output_path": "benchmark_output/scenarios/mmlu",
                "definition_path": "https://github.com/stanford-crfm/helm/blob/main/src/helm/benchmark/scenarios/"
                                   "mmlu_scenario.py"}
    instances: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for p in preds:
        k = (p.instance_id, json.dumps(p.perturbation, sort_keys=True))
        if k not in seen:
            seen.add(k)
            instances.append(_instance(p))
    states = []
    for p in preds:
        text = f" {CHOICES[p.predicted]}"
        states.append({
            "instance": _instance(p), "train_trial_index": p.train_trial, "output_mapping": _mapping(p),
            "request": _request(model, p),
            "result": {"success": True, "embedding": [], "completions": [{"text": text, "logprob": -0.1, "tokens": [
                {"text": text, "logprob": -0.1}]}], "cached": True, "request_time": p.runtime,
                "request_datetime": 1700000000},
            "num_train_instances": 5, "prompt_truncated": False, "num_conditioning_tokens": 0,
        })
    display = []
    for p in preds:
        text = f" {CHOICES[p.predicted]}"
        shown = {n: v for n, v in _generation_stats(p).items() if n != "num_completion_tokens"}
        display.append({**_keyed(p), "predicted_text": text, "mapped_output": _mapping(p)[text.strip()], "stats": shown})
    requests = [{**_keyed(p), "request": _request(model, p)} for p in preds]
    pis = per_instance_stats(preds)
    files = {
        "run_spec.json": run_spec,
        "scenario.json": scenario,
        "scenario_state.json": {"adapter_spec": adapter, "request_states": states},
        "stats.json": _aggregate(pis),
        "per_instance_stats.json": pis,
        "instances.json": instances,
        "display_predictions.json": display,
        "display_requests.json": requests,
    }
    for fname, obj in files.items():
        (run_dir / fname).write_bytes(_dumps(obj))
    return run_dir


def _aggregate(pis: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``stats.json``: every per-instance stat merged by metric name (name, split, perturbation)."""
    merged: dict[str, dict[str, Any]] = {}
    for entry in pis:
        for s in entry["stats"]:
            key = json.dumps(s["name"], sort_keys=True)
            m = merged.setdefault(key, {"name": s["name"], "count": 0, "sum": 0.0, "sum_squared": 0.0,
                                        "min": s["min"], "max": s["max"]})
            m["count"] += 1
            m["sum"] += s["sum"]
            m["sum_squared"] += s["sum_squared"]
            m["min"], m["max"] = min(m["min"], s["min"]), max(m["max"], s["max"])
    out = []
    for m in merged.values():
        mean = m["sum"] / m["count"]
        variance = max(m["sum_squared"] / m["count"] - mean * mean, 0.0)
        out.append({**m, "mean": mean, "variance": variance, "stddev": math.sqrt(variance)})
    return out


# The committed fixtures -----------------------------------------------------------------------------
SUITE = "v1"
RUN_SPEC = "mmlu:subject=anatomy,method=multiple_choice_joint,model=example_model-{}"
#: (instance id, split, gold index, perturbed) of the fixtures' eight predictions, in HELM's order.
ITEMS = (("id0", "valid", 0, False), ("id1", "valid", 2, False), ("id2", "test", 1, False), ("id3", "test", 3, False),
         ("id4", "test", 0, False), ("id5", "test", 2, False), ("id4", "test", 0, True), ("id5", "test", 2, True))
#: exact_match per prediction (ITEMS order) of model a and model b, by hand:
#:   a 1 1 0 1 0 1 0 1    b 1 0 1 1 0 1 1 0
OLD_RIGHT = "11010101"
NEW_RIGHT = "10110110"


def predictions(right: str, *, trial: int = 0, runtime: float = 0.5) -> list[Prediction]:
    """The fixture predictions with the model right where ``right`` has a 1 (a wrong answer is the next choice)."""
    out = []
    for (iid, split, gold, perturbed), r in zip(ITEMS, right):
        answer = gold if r == "1" else (gold + 1) % 4
        out.append(Prediction(iid, split, gold, answer, TYPOS if perturbed else None, trial, runtime))
    return out


def write_fixtures(root: Path) -> list[Path]:
    """The committed fixtures under ``root``: ``runs/v1/<run spec a>``, ``<run spec b>`` and ``trials`` (two train trials)."""
    suite = root / "runs" / SUITE
    a = write_run(suite / RUN_SPEC.format("a"), "example/model-a", predictions(OLD_RIGHT))
    b = write_run(suite / RUN_SPEC.format("b"), "example/model-b", predictions(NEW_RIGHT, runtime=0.75))
    two = predictions(NEW_RIGHT) + predictions(OLD_RIGHT, trial=1)
    t = write_run(suite / "trials", "example/model-b", two, name=RUN_SPEC.format("b"))
    return [a, b, t]
