"""Synthetic lm-evaluation-harness output in the exact layout lm-eval 0.4.7 on writes (``--log_samples``).

THE DATA ARE SYNTHETIC: the documents, responses and models are made up here
and say nothing about any real model. What is real is the layout, as
``lm_eval/loggers/evaluation_tracker.py`` writes it: into
``<output_path>/<model_name_sanitized>/``, one ``results_<date>.json``
(``results``, ``configs`` with the task's ``filter_list``, ``versions``,
``n-shot``, ``config`` with ``model_args``, ``model_name``,
``model_name_sanitized``, ...) and one ``samples_<task>_<date>.jsonl``, one
JSON object a line per (document, filter) with ``doc_id``, ``doc``,
``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``,
``metrics``, the hashes and each metric under its name. A sample whose regex
found no answer has ``filtered_resps`` ``["[invalid]"]`` and ``exact_match``
0.0, as lm-eval scores it.

:func:`write_pair` writes the 200-document pair of issue 38: lm-eval's own
accuracy is A 57.0% and B 47.5% (counting ``[invalid]`` wrong, as lm-eval
does); dropping every document either side left ``[invalid]`` (``--unparsed
intersect``) gives A 64.81% and B 73.15% on 108 documents, the sign flipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: Per document group: (count, A's verdict, B's verdict), a verdict 1 right, 0 wrong, None [invalid].
#: Both parsed (108): both 50, only A 20, only B 29, neither 9. A [invalid], B parsed (30): B right 16.
#: B [invalid], A parsed (50): A right 44. Both [invalid]: 12.
GROUPS: tuple[tuple[int, int | None, int | None], ...] = (
    (50, 1, 1), (20, 1, 0), (29, 0, 1), (9, 0, 0),
    (16, None, 1), (14, None, 0),
    (44, 1, None), (6, 0, None),
    (12, None, None),
)
DATE_A = "2024-12-02T10-00-00.000000"
DATE_B = "2025-03-04T11-30-00.000000"
FILTER = "strict-match"
REGEX = "#### (\\-?[0-9\\.\\,]+)"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def verdicts(side: int) -> list[int | None]:
    """Side 0 (A) or 1 (B): each document's verdict, in doc_id order."""
    return [g[1 + side] for g in GROUPS for _ in range(g[0])]


def _sample(doc_id: int, verdict: int | None) -> dict:
    answer = str(doc_id + 3)
    question = f"Question {doc_id}: what is {doc_id} + 3?"
    target = f"It is {doc_id} plus 3.\n#### {answer}"
    if verdict is None:
        resp, filtered = "I am not sure.", "[invalid]"
    elif verdict:
        resp, filtered = f"Adding gives {answer}.\n#### {answer}", answer
    else:
        resp, filtered = f"Adding gives {doc_id + 4}.\n#### {doc_id + 4}", str(doc_id + 4)
    prompt = f"Question: {question}\nAnswer:"
    return {
        "doc_id": doc_id,
        "doc": {"question": question, "answer": target},
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["Question:", "</s>"], "do_sample": False}}},
        "resps": [[resp]],
        "filtered_resps": [filtered],
        "filter": FILTER,
        "metrics": ["exact_match"],
        "doc_hash": _sha(json.dumps({"question": question, "answer": target}, indent=4, default=str, ensure_ascii=False)),
        "prompt_hash": _sha(prompt),
        "target_hash": _sha(target),
        "exact_match": float(verdict or 0),
    }


def _results(model_args: str, model_name: str, date: str, accuracy: float) -> dict:
    return {
        "results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": accuracy,
                              "exact_match_stderr,strict-match": 0.035}},
        "group_subtasks": {"gsm8k": []},
        "configs": {"gsm8k": {
            "task": "gsm8k", "dataset_path": "gsm8k", "output_type": "generate_until",
            "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
            "filter_list": [{"name": FILTER, "filter": [{"function": "regex", "regex_pattern": REGEX},
                                                        {"function": "take_first"}]}],
            "metadata": {"version": 3.0},
        }},
        "versions": {"gsm8k": 3.0},
        "n-shot": {"gsm8k": 5},
        "higher_is_better": {"gsm8k": {"exact_match": True}},
        "n-samples": {"gsm8k": {"original": 1319, "effective": 200}},
        "config": {"model": "hf", "model_args": model_args, "batch_size": "8", "limit": 200.0},
        "git_hash": "a1b2c3d",
        "date": 1733133600.0,
        "transformers_version": "4.46.3",
        "lm_eval_version": "0.4.7",
        "model_name": model_name,
        "model_name_sanitized": model_name.replace("/", "__"),
        "start_time": 1.0, "end_time": 2.0, "total_evaluation_time_seconds": "1.0",
    }


def write_run(root: Path, side: int, model_args: str, model_name: str, date: str) -> Path:
    """One side's results and samples files under ``root/<model_name_sanitized>/``; the samples file's path."""
    marks = verdicts(side)
    folder = root / model_name.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    accuracy = sum(1 for v in marks if v == 1) / len(marks)
    (folder / f"results_{date}.json").write_text(
        json.dumps(_results(model_args, model_name, date, accuracy), indent=2, ensure_ascii=False), encoding="utf-8")
    samples = folder / f"samples_gsm8k_{date}.jsonl"
    with samples.open("w", encoding="utf-8") as out:
        for doc_id, v in enumerate(marks):
            out.write(json.dumps(_sample(doc_id, v), ensure_ascii=False) + "\n")
    return samples


def write_pair(root: Path) -> tuple[Path, Path]:
    """The issue's pair: model A named by a local path in ``model_args`` (as lm-eval then names it), model B by a
    hub id. Returns the two samples files."""
    a = write_run(root, 0, "pretrained=/home/x/models/Llama-3-8B,dtype=bfloat16", "/home/x/models/Llama-3-8B", DATE_A)
    b = write_run(root, 1, "pretrained=example-org/Model-B-8B,dtype=bfloat16", "example-org/Model-B-8B", DATE_B)
    return a, b
