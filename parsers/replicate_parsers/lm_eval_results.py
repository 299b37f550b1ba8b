"""The ``results_<date>.json`` beside lm-eval samples: the model, the lm-eval version, the task's config.

lm-evaluation-harness writes, into ``<output_path>/<model_name_sanitized>/``,
one ``results_<date>.json`` per evaluation and, with ``--log_samples``, one
``samples_<task>_<date>.jsonl`` per task, all with the same ``<date>``: the
evaluation's ``datetime.now().isoformat()`` with ``:`` replaced by ``-``
(``2024-05-01T10-00-00.123456``). The results file is one JSON object:
``results`` and ``configs`` keyed by task name, ``versions``, ``n-shot``,
``config`` (``model``: the model type such as ``hf``; ``model_args``), the
environment (``lm_eval_version``, ``git_hash``, ``transformers_version``) and,
from lm-eval 0.4.3, ``model_name`` and ``model_name_sanitized``.

Reading it never fails a samples file: a missing, unreadable or disagreeing
results file is a warning, and the samples are read as they are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from replicate.inputfile import is_stdio
from replicate.reading import Source

#: ``samples_<task>_<date>.jsonl``; the date as lm-eval writes it (``:`` replaced by ``-``).
_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES_NAME = re.compile(rf"^samples_(?P<task>.+)_(?P<date>{_DATE})\.jsonl(?:\.gz)?$")
RESULTS_NAME = re.compile(rf"^results_(?P<date>{_DATE})\.json$")
#: The model_args keys lm-eval names a model by, in the order it looks for them (peft and delta come
#: with pretrained, so they are looked for first).
_MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _model_from_args(args: Any) -> str | None:
    """The model ``config.model_args`` names (``pretrained=EleutherAI/pythia-160m,dtype=float`` or a dict)."""
    pairs: dict[str, Any]
    if isinstance(args, dict):
        pairs = {str(k): v for k, v in args.items()}
    elif isinstance(args, str):
        pairs = {}
        for part in args.split(","):
            key, sep, value = part.partition("=")
            if sep:
                pairs.setdefault(key.strip(), value.strip())
    else:
        return None
    for name in _MODEL_ARG_KEYS:
        found = pairs.get(name)
        if isinstance(found, str) and found:
            return found
    return None


def model_of(results: dict) -> str | None:
    """The model a results file names: ``model_name``, else the one ``config.model_args`` names."""
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = results.get("config")
    return _model_from_args(config.get("model_args")) if isinstance(config, dict) else None


def _date_key(date: str) -> tuple[str, str]:
    """A results date ordered by time: ``2024-05-01T10-00-00`` (no microseconds) before ``...00.5``."""
    whole, _, frac = date.partition(".")
    return whole, frac.ljust(6, "0")


def _results_file(samples: Path, src: Source) -> tuple[Path, str, str] | None:
    """The results file for ``samples`` with the samples' task and date, or None (warned)."""
    m = SAMPLES_NAME.match(samples.name)
    if m is None:
        src.warn("lm-eval-results", "no results file looked for: the samples file's name does not carry lm-eval's "
                                    "task and date (samples_<task>_<date>.jsonl), which its results_<date>.json shares")
        return None
    task, date = m.group("task"), m.group("date")
    folder = samples.parent
    src.side_files.append(folder)
    same = folder / f"results_{date}.json"
    if same.is_file():
        return same, task, date
    try:
        found = sorted((_date_key(r.group("date")), p.name) for p in folder.iterdir()
                       if (r := RESULTS_NAME.match(p.name)) is not None)
    except OSError:
        found = []
    if not found:
        src.warn("lm-eval-results", f"no results_{date}.json beside the samples: the model and lm-eval version "
                                    "are not known (give the run a name in a runs file)")
        return None
    newest = folder / found[-1][1]
    src.warn("lm-eval-results", f"no results_{date}.json beside the samples; read the newest results file, "
                                f"{newest.name}, whose date differs from the samples' (another evaluation?)")
    return newest, task, date


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_results(src: Source) -> None:
    """What the results file beside ``src`` says about its run, into ``src.about``.

    ``model`` (:func:`model_of`), ``lm_eval_version``, ``git_hash``,
    ``task_version`` (``versions[task]``) and ``results_file`` (its name).
    Warned, never refused: no results file, one that is not a JSON object,
    one whose ``configs``/``results`` do not name the samples' task.
    """
    if is_stdio(src.path):
        return
    found = _results_file(src.path, src)
    if found is None:
        return
    path, task, _ = found
    src.side_files.append(path)
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        src.warn("lm-eval-results", f"{path.name} beside the samples is not readable JSON ({exc}): model and "
                                    "lm-eval version not taken from it")
        return
    if not isinstance(value, dict):
        src.warn("lm-eval-results", f"{path.name} beside the samples is not a JSON object: not read")
        return
    tasks: set[str] = set()
    for section in ("configs", "results", "versions"):
        part = value.get(section)
        if isinstance(part, dict):
            tasks.update(map(str, part))
    if task not in tasks:
        shown = ", ".join(sorted(tasks)) or "none"
        src.warn("lm-eval-results", f"{path.name} does not name the samples' task {task!r} (its tasks: {shown}): "
                                    "it may be another evaluation's")
    about = src.about
    about["results_file"] = path.name
    model = model_of(value)
    if model is not None:
        about["model"] = model
    else:
        src.warn("lm-eval-results", f"{path.name} names no model (neither model_name nor a model in "
                                    "config.model_args)")
    for key in ("lm_eval_version", "git_hash"):
        text = _text(value.get(key))
        if text is not None:
            about[key] = text
    versions = value.get("versions")
    version = versions.get(task) if isinstance(versions, dict) else None
    if type(version) in (int, float, str) and version != "":
        about["task_version"] = str(version)
