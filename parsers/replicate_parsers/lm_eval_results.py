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

lm-eval 0.4.0 to 0.4.2 wrote instead one ``results.json`` into the output
folder and, beside it, ``<model_args>_<task>.jsonl`` (``model_args`` with
``/`` and ``=`` replaced by ``__``), which held the samples as one indented
JSON array; lm-eval's main branch of May 2024 wrote ``samples_<task>_<date>.json``.
All three namings are paired with their results file here.

Reading it never fails a samples file: a missing, unreadable or disagreeing
results file is a warning, and the samples are read as they are. What the
samples reader needs besides the provenance (the task's filters, in the order
lm-eval applied them) is returned by :func:`read_results`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replicate.command_input import is_stdio
from replicate.reading.contract import HarnessFigure, Source

#: ``samples_<task>_<date>.jsonl``; the date as lm-eval writes it (``:`` replaced by ``-``).
_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES_NAME = re.compile(rf"^samples_(?P<task>.+)_(?P<date>{_DATE})\.jsonl?(?:\.gz)?$")
RESULTS_NAME = re.compile(rf"^results_(?P<date>{_DATE})\.json$")
#: lm-eval 0.4.0-0.4.2: ``<model_args>_<task>.jsonl`` beside ``results.json``.
OLD_RESULTS = "results.json"
_OLD_SAMPLES = re.compile(r"^(?P<stem>.+)\.jsonl(?:\.gz)?$")
#: lm-eval's filter functions that give ``[invalid]`` (their fallback) when they find no answer.
_MARKING = ("regex", "multi_choice_regex")
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


@dataclass(frozen=True)
class Results:
    """A results file read beside samples: its name, its JSON object and the samples' task (None: not known)."""

    name: str
    value: dict
    task: str | None

    def config(self) -> dict | None:
        """``configs[task]``, the task's config as lm-eval dumped it (None when absent)."""
        configs = self.value.get("configs")
        found = configs.get(self.task) if isinstance(configs, dict) and self.task is not None else None
        return found if isinstance(found, dict) else None

    def filters(self) -> list[str] | None:
        """The task's filter names in the order lm-eval applied them; None when the results do not say.

        ``configs[task].filter_list`` names them (``[{"name": "strict-match",
        "filter": [...]}, ...]``); a config without one had lm-eval's single
        default filter, ``none`` (take the first response). Two entries of one
        name are one filter (lm-eval keys the filtered responses by name).
        """
        config = self.config()
        if config is None:
            return None
        listed = config.get("filter_list")
        if listed is None:
            return ["none"]
        if not isinstance(listed, list) or not all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in listed):
            return None
        return list(dict.fromkeys(f["name"] for f in listed))

    def figure(self, metric: str, filter_name: str) -> HarnessFigure | None:
        """The aggregate lm-eval printed for ``metric`` under filter ``filter_name`` (``results[task]["metric,filter"]``),
        or None when the file holds none."""
        results = self.value.get("results")
        task = results.get(self.task) if isinstance(results, dict) and self.task is not None else None
        value = task.get(f"{metric},{filter_name}") if isinstance(task, dict) else None
        if type(value) not in (int, float):
            return None
        return HarnessFigure(f"{metric},{filter_name}", repr(value), f"{self.name}: results.{self.task}")

    def marks_failures(self, name: str) -> bool | None:
        """Whether filter ``name`` marks an answer it could not extract (a ``regex`` step, whose fallback is
        ``[invalid]``, or a step declaring its ``fallback``); None when the task's config does not say."""
        config = self.config()
        if config is None:
            return None
        listed = config.get("filter_list")
        if listed is None:
            return False  # lm-eval's one default filter, none: take the first response as it is
        if not isinstance(listed, list):
            return None
        for f in listed:
            if isinstance(f, dict) and f.get("name") == name and isinstance(f.get("filter"), list):
                return any(isinstance(s, dict) and (s.get("function") in _MARKING or "fallback" in s) for s in f["filter"])
        return None

    def fallbacks(self, name: str) -> set[str]:
        """The ``fallback`` texts the steps of filter ``name`` declare (what a regex gives when nothing matches)."""
        config = self.config()
        listed = config.get("filter_list") if config is not None else None
        out: set[str] = set()
        for f in listed if isinstance(listed, list) else ():
            if isinstance(f, dict) and f.get("name") == name and isinstance(f.get("filter"), list):
                out.update(s["fallback"] for s in f["filter"] if isinstance(s, dict) and isinstance(s.get("fallback"), str))
        return out


def _newest(folder: Path, date: str, src: Source) -> Path | None:
    try:
        found = sorted((_date_key(r.group("date")), p.name) for p in folder.iterdir()
                       if (r := RESULTS_NAME.match(p.name)) is not None)
    except OSError:
        found = []
    if not found:
        src.warn("lm-eval-results", f"no results_{date}.json beside the samples: the model, the lm-eval version "
                                    "and the task's filters are not known (give the run a name in a runs file)")
        return None
    newest = folder / found[-1][1]
    src.warn("lm-eval-results", f"no results_{date}.json beside the samples; read the newest results file, "
                                f"{newest.name}, whose date differs from the samples' (another evaluation?)")
    return newest


def _results_file(samples: Path, src: Source) -> tuple[Path, str | None] | None:
    """The results file for ``samples`` and the samples' task (None: learnt from the results), or None (warned)."""
    folder = samples.parent
    m = SAMPLES_NAME.match(samples.name)
    if m is None:
        old = folder / OLD_RESULTS
        if _OLD_SAMPLES.match(samples.name) and old.is_file():
            src.side_files.append(old)
            return old, None
        src.warn("lm-eval-results", "no results file looked for: the samples file's name is neither lm-eval's "
                                    "samples_<task>_<date>.jsonl (its results_<date>.json shares the date) nor "
                                    "<model_args>_<task>.jsonl beside a results.json (lm-eval 0.4.0-0.4.2)")
        return None
    task, date = m.group("task"), m.group("date")
    src.side_files.append(folder)
    same = folder / f"results_{date}.json"
    if same.is_file():
        return same, task
    newest = _newest(folder, date, src)
    return (newest, task) if newest is not None else None


def _old_task(name: str, value: dict) -> str | None:
    """The task of an lm-eval 0.4.0-0.4.2 samples file ``<model_args>_<task>.jsonl``, among the results' tasks."""
    m = _OLD_SAMPLES.match(name)
    if m is None:
        return None
    stem = m.group("stem")
    config = value.get("config")
    args = config.get("model_args") if isinstance(config, dict) else None
    tasks = [t for t in _tasks(value) if stem.endswith("_" + t)]
    if isinstance(args, str):
        exact = [t for t in tasks if stem == re.sub("/|=", "__", args) + "_" + t]
        if exact:
            return exact[0]
    return max(tasks, key=len) if tasks else None


def _tasks(value: dict) -> set[str]:
    tasks: set[str] = set()
    for section in ("configs", "results", "versions"):
        part = value.get(section)
        if isinstance(part, dict):
            tasks.update(map(str, part))
    return tasks


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _load(path: Path, src: Source) -> dict | None:
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        src.warn("lm-eval-results", f"{path.name} beside the samples is not readable JSON ({exc}): model, "
                                    "lm-eval version and filters not taken from it")
        return None
    if not isinstance(value, dict):
        src.warn("lm-eval-results", f"{path.name} beside the samples is not a JSON object: not read")
        return None
    return value


def read_results(src: Source) -> Results | None:
    """What the results file beside ``src`` says about its run, into ``src.about``; the file, for its filters.

    ``model`` (:func:`model_of`), ``lm_eval_version``, ``git_hash``,
    ``task_version`` (``versions[task]``), ``results_file`` (its name) and,
    for lm-eval 0.4.0-0.4.2 files, ``task`` (learnt from the results' tasks).
    Warned, never refused: no results file, one that is not a JSON object,
    one whose ``configs``/``results`` do not name the samples' task.
    """
    if is_stdio(src.path):
        return None
    found = _results_file(src.path, src)
    if found is None:
        return None
    path, task = found
    src.side_files.append(path)
    value = _load(path, src)
    if value is None:
        return None
    tasks = _tasks(value)
    if task is None:
        task = _old_task(src.path.name, value)
        if task is None:
            shown = ", ".join(sorted(tasks)) or "none"
            src.warn("lm-eval-results", f"{path.name} names no task the samples file's name ends with "
                                        f"(<model_args>_<task>.jsonl; its tasks: {shown}): it may be another evaluation's")
        else:
            src.about["task"] = task
    elif task not in tasks:
        shown = ", ".join(sorted(tasks)) or "none"
        src.warn("lm-eval-results", f"{path.name} does not name the samples' task {task!r} (its tasks: {shown}): "
                                    "it may be another evaluation's")
    _about(src, path.name, value, task)
    return Results(path.name, value, task if task in tasks else None)


def _about(src: Source, name: str, value: dict, task: str | None) -> None:
    about = src.about
    about["results_file"] = name
    model = model_of(value)
    if model is not None:
        about["model"] = model
    else:
        src.warn("lm-eval-results", f"{name} names no model (neither model_name nor a model in config.model_args)")
    for key in ("lm_eval_version", "git_hash"):
        text = _text(value.get(key))
        if text is not None:
            about[key] = text
    versions = value.get("versions")
    version = versions.get(task) if isinstance(versions, dict) and task is not None else None
    if type(version) in (int, float, str) and version != "":
        about["task_version"] = str(version)
