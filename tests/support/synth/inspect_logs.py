"""Synthetic inspect_ai eval logs in the exact shape inspect_ai writes (``.eval`` zip and ``.json``).

THE DATA ARE SYNTHETIC: the samples, scores and models are made up here (or by
the caller) and say nothing about any real model. What is real is the layout:
the members, their order and the fields of each, as inspect_ai's recorders
write them (``inspect_ai/log/_recorders/eval.py`` and ``json.py``; log format
version 2): ``_journal/start.json`` first, then one
``samples/<id>_epoch_<n>.json`` per sample, ``_journal/summaries/1.json``,
``summaries.json``, ``reductions.json`` and ``header.json``; JSON indented by
two spaces without null fields; entries deflated at level 5.

Used by ``tools/make_inspect_logs.py`` (the committed test fixtures), by the
tests (bad variants) and by ``bench/bench_readers.py`` (large logs). Fixed zip
timestamps make the output byte-for-byte reproducible.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

_DATE = (2025, 3, 1, 12, 0, 0)


@dataclass(frozen=True)
class Sample:
    """One sample of a synthetic log: its id, epoch and each scorer's value."""

    id: int | str
    scores: dict[str, Any] | None
    epoch: int = 1
    answer: str = ""
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # more fields (or overrides) of the sample object


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, indent=2, ensure_ascii=False).encode("utf-8")


def _spec(task: str, model: str, scorers: Sequence[str], epochs: int, n: int) -> dict[str, Any]:
    return {
        "eval_id": f"synthetic-{task}-{model.replace('/', '-')}",
        "run_id": "synthetic-run",
        "created": "2025-03-01T12:00:00+00:00",
        "task": task,
        "task_id": f"synthetic-{task}",
        "task_version": 0,
        "task_attribs": {},
        "task_args": {},
        "task_args_passed": {},
        "dataset": {"name": task, "location": f"example://{task}", "samples": n, "shuffled": False},
        "model": model,
        "model_generate_config": {},
        "model_args": {},
        "config": {"epochs": epochs, "epochs_reducer": ["mean"], "fail_on_error": True, "log_samples": True,
                   "log_realtime": True, "log_images": True, "score_display": True},
        "packages": {"inspect_ai": "0.3.95"},
        "scorers": [{"name": s, "options": {}, "metrics": [{"name": "inspect_ai/accuracy", "options": {}},
                                                          {"name": "inspect_ai/stderr", "options": {}}],
                     "metadata": {}} for s in scorers],
    }


def _sample_obj(s: Sample, model: str) -> dict[str, Any]:
    text = s.answer or f"The answer is {s.id}."
    obj: dict[str, Any] = {
        "id": s.id,
        "epoch": s.epoch,
        "input": f"Question {s.id}: what is the answer?",
        "target": str(s.id),
        "messages": [
            {"id": f"m{s.id}-{s.epoch}-u", "content": f"Question {s.id}: what is the answer?", "source": "input", "role": "user"},
            {"id": f"m{s.id}-{s.epoch}-a", "content": text, "source": "generate", "role": "assistant", "model": model},
        ],
        "output": {
            "model": model,
            "choices": [{"message": {"id": f"m{s.id}-{s.epoch}-a", "content": text, "source": "generate",
                                     "role": "assistant", "model": model}, "stop_reason": "stop"}],
            "usage": {"input_tokens": 20, "output_tokens": 6, "total_tokens": 26},
            "time": 0.5,
        },
    }
    if s.scores is not None:
        obj["scores"] = {name: {"value": value, "answer": text, "explanation": text} for name, value in s.scores.items()}
    obj.update({
        "metadata": {},
        "store": {},
        "events": [],
        "model_usage": {model: {"input_tokens": 20, "output_tokens": 6, "total_tokens": 26}},
        "total_time": 0.6,
        "working_time": 0.5,
        "uuid": f"synthetic-{s.id}-{s.epoch}",
        "attachments": {},
    })
    if s.error is not None:
        obj["error"] = {"message": s.error, "traceback": s.error, "traceback_ansi": s.error}
    obj.update(s.extra)
    return obj


def _scorer_names(samples: Sequence[Sample]) -> list[str]:
    names: dict[str, None] = {}
    for s in samples:
        for name in s.scores or {}:
            names.setdefault(name)
    return list(names)


def _results(samples: Sequence[Sample], scorers: Sequence[str]) -> dict[str, Any]:
    def accuracy(name: str) -> float:
        values = [s.scores[name] for s in samples if s.scores and name in s.scores]
        ones = [1.0 if v in ("C", 1, 1.0, True) else 0.5 if v == "P" else 0.0 for v in values]
        return sum(ones) / len(ones) if ones else 0.0

    return {
        "total_samples": len(samples),
        "completed_samples": sum(1 for s in samples if s.error is None),
        "scores": [{"name": n, "scorer": n, "params": {},
                    "metrics": {"accuracy": {"name": "accuracy", "value": accuracy(n), "params": {}}}} for n in scorers],
    }


def _plan() -> dict[str, Any]:
    return {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}}


def _stats(model: str) -> dict[str, Any]:
    return {"started_at": "2025-03-01T12:00:00+00:00", "completed_at": "2025-03-01T12:01:00+00:00",
            "model_usage": {model: {"input_tokens": 20, "output_tokens": 6, "total_tokens": 26}}}


def _ordered(samples: Sequence[Sample]) -> list[Sample]:
    return sorted(samples, key=lambda s: (s.epoch, s.id if isinstance(s.id, str) else str(s.id).zfill(20)))


def log_object(samples: Sequence[Sample], *, model: str, task: str = "arith", version: int = 2,
               status: str = "success") -> dict[str, Any]:
    """The ``.json`` log (an ``EvalLog``) holding ``samples``."""
    scorers = _scorer_names(samples)
    epochs = max((s.epoch for s in samples), default=1)
    n = len({s.id for s in samples})
    return {
        "version": version,
        "status": status,
        "eval": _spec(task, model, scorers, epochs, n),
        "plan": _plan(),
        "results": _results(samples, scorers),
        "stats": _stats(model),
        "samples": [_sample_obj(s, model) for s in _ordered(samples)],
    }


def write_json_log(path: Path, samples: Sequence[Sample], **kw: Any) -> Path:
    path.write_bytes(_dumps(log_object(samples, **kw)))
    return path


def eval_members(samples: Sequence[Sample], *, model: str, task: str = "arith", version: int = 2,
                 status: str = "success", finished: bool = True) -> list[tuple[str, bytes]]:
    """The members of the ``.eval`` zip holding ``samples``, in the order inspect_ai writes them."""
    log = log_object(samples, model=model, task=task, version=version, status=status)
    members: list[tuple[str, bytes]] = [
        ("_journal/start.json", _dumps({"version": version, "eval": log["eval"], "plan": log["plan"]})),
    ]
    summaries = []
    for s, obj in zip(_ordered(samples), log["samples"]):
        members.append((f"samples/{s.id}_epoch_{s.epoch}.json", _dumps(obj)))
        summary = {"id": s.id, "epoch": s.epoch, "input": obj["input"], "target": obj["target"]}
        if "scores" in obj:
            summary["scores"] = obj["scores"]
        summaries.append(summary)
    members.append(("_journal/summaries/1.json", _dumps(summaries)))
    if finished:
        members.append(("summaries.json", _dumps(summaries)))
        header = {k: v for k, v in log.items() if k != "samples"}
        members.append(("header.json", _dumps(header)))
    return members


def write_zip(path: Path, members: Sequence[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=5) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=5)
    return path


def write_eval_log(path: Path, samples: Sequence[Sample], **kw: Any) -> Path:
    """Write the ``.eval`` zip holding ``samples`` (see :func:`eval_members` for the keywords)."""
    return write_zip(path, eval_members(samples, **kw))


# The committed fixtures (tests/readers/data/inspect/), written by tools/make_inspect_logs.py.
#: Per sample id 1..6: scorer "match" (C/I) and scorer "model_graded_fact" (C/P/I) of the old and new model.
OLD_MATCH, NEW_MATCH = "CCIICI", "CICICC"
OLD_GRADED, NEW_GRADED = "CPIICC", "CCCIPI"
OLD_MODEL, NEW_MODEL = "openai/gpt-4o-2024-05-13", "openai/gpt-4o-2024-11-20"


def fixture_samples(match: str, graded: str) -> list[Sample]:
    return [Sample(i, {"match": m, "model_graded_fact": g}) for i, (m, g) in enumerate(zip(match, graded), 1)]


#: Two epochs of the new model: epoch 1 as NEW_MATCH, epoch 2 flips samples 2 and 4 (both to C).
EPOCH2_MATCH = "CCCCCC"


def epoch_samples() -> list[Sample]:
    first = [Sample(i, {"match": m}, epoch=1) for i, m in enumerate(NEW_MATCH, 1)]
    second = [Sample(i, {"match": m}, epoch=2) for i, m in enumerate(EPOCH2_MATCH, 1)]
    return first + second


#: passages-old.eval / passages-new.eval: 40 samples, five to a passage (``metadata.passage`` p1..p8), scorer
#: "match"; per sample id 1..40 (C right, I wrong):
PASSAGE_OLD = "CCCCC" "CCCCI" "CCCCC" "IIIII" "CCCCC" "CCCIC" "IIIII" "CCCCC"
PASSAGE_NEW = "CCCCC" "IIIII" "CCCCC" "CCCCI" "IIIII" "CCCCC" "CCCCC" "CIIII"


def passage_samples(match: str) -> list[Sample]:
    return [Sample(i, {"match": m}, extra={"metadata": {"passage": f"p{(i - 1) // 5 + 1}"}})
            for i, m in enumerate(match, 1)]


def write_fixtures(target: Path) -> list[Path]:
    target.mkdir(parents=True, exist_ok=True)
    old, new = fixture_samples(OLD_MATCH, OLD_GRADED), fixture_samples(NEW_MATCH, NEW_GRADED)
    return [
        write_eval_log(target / "old.eval", old, model=OLD_MODEL),
        write_eval_log(target / "new.eval", new, model=NEW_MODEL),
        write_json_log(target / "old.json", old, model=OLD_MODEL),
        write_eval_log(target / "epochs.eval", epoch_samples(), model=NEW_MODEL),
        write_eval_log(target / "passages-old.eval", passage_samples(PASSAGE_OLD), model=OLD_MODEL),
        write_eval_log(target / "passages-new.eval", passage_samples(PASSAGE_NEW), model=NEW_MODEL),
    ]
