"""``lm-eval-samples@1``: lm-evaluation-harness ``--log_samples`` files, read as correctness verdicts.

lm-evaluation-harness writes one ``samples_<task>_<date>.jsonl`` per task:
one JSON object a line for each (document, filter) pair, with ``doc_id``,
``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``,
``filter`` (the filter pipeline's name, e.g. ``strict-match``), ``metrics``
(the names of the per-sample metrics) and ``doc_hash`` / ``prompt_hash`` /
``target_hash``, and each metric's value under its own name
(``"exact_match": 1.0``). The task is named only by the file name.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Iterator

import orjson

from replicate.judge.load.fields import describe
from replicate.judge.load.readfile import json_objects
from replicate.reading import Match, Reader, ReadOptions, Record, Source, first_line
from replicate_parsers.lm_eval_results import read_results

#: The fields a samples line must have for the reader to say "yes" when sniffing.
_NEEDED = ("doc_id", "filtered_resps", "metrics")
#: lm-eval's name of a samples file: ``samples_<task>_<date>.jsonl``, the date as
#: ``datetime.isoformat()`` with ``:`` replaced by ``-`` (the only place the task is named).
_FILE_NAME = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d{2}-\d{2}T[0-9.\-]+\.jsonl(?:\.gz)?$")


def task_of(name: str) -> str | None:
    """The task named by a samples file's name (``samples_gsm8k_2024-05-01T10-00-00.000000.jsonl``: gsm8k)."""
    m = _FILE_NAME.match(name)
    return m.group("task") if m else None


def _sniff(head: bytes, options: ReadOptions) -> Match:
    line = first_line(head)
    if line is None or not line.startswith(b"{"):
        return "no"
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        # a first line cut at the head's end (a long doc): lm-eval writes doc_id, then doc, first
        found = all(b'"' + n.encode() + b'"' in line for n in _NEEDED)
        return "yes" if found or line.startswith((b'{"doc_id": ', b'{"doc_id":')) and b'"doc":' in line else "no"
    if isinstance(obj, dict) and all(n in obj for n in _NEEDED):
        return "yes"
    return "no"


def _names(values: Any) -> str:
    return ", ".join(sorted(map(str, values)))


def _verdict(value: Any, metric: str, src: Source, lineno: int) -> bool | None:
    if type(value) is bool:
        return value
    if type(value) in (int, float) and value in (0, 1):
        return bool(value)
    if value is None:
        src.warn("null-metric", f"{metric!r} is null (read as unscored)", lineno)
        return None
    raise src.bad(
        f"{metric!r} is {describe(value)}, not a 0/1 verdict: --correct-field names a per-sample "
        "metric that is 1 (right) or 0 (wrong), such as exact_match or acc",
        lineno,
    )


def _parsed(src: Source) -> list[tuple[int, dict]]:
    out: list[tuple[int, dict]] = []
    for lineno, obj in json_objects(src, " (one logged sample)"):
        for name in ("doc_id", "filter", "metrics"):
            if name not in obj:
                raise src.bad(f"sample lacks {name!r} (an lm-eval --log_samples line has doc_id, filter, metrics)", lineno)
        if type(obj["doc_id"]) not in (int, str):
            raise src.bad(f"'doc_id' must be an integer or a string, got {describe(obj['doc_id'])}", lineno)
        if type(obj["filter"]) is not str:
            raise src.bad(f"'filter' must be a string, got {describe(obj['filter'])}", lineno)
        metrics = obj["metrics"]
        if not isinstance(metrics, list) or not all(type(m) is str for m in metrics):
            raise src.bad(f"'metrics' must be a list of metric names, got {describe(metrics)}", lineno)
        out.append((lineno, obj))
    return out


def _chosen_filter(samples: list[tuple[int, dict]], src: Source) -> str | None:
    present = sorted({obj["filter"] for _, obj in samples})
    wanted = src.options.get("filter")
    if wanted is not None:
        if wanted not in present:
            raise src.bad(f"no sample has filter {wanted!r}; filters in this file: {', '.join(present)}")
        return str(wanted)
    if len(present) > 1:
        raise src.bad(
            f"the file holds {len(present)} filters ({', '.join(present)}); name one with --filter "
            "(each filter scores the same documents differently)"
        )
    return present[0] if present else None


def _chosen_metric(first: dict, src: Source, lineno: int) -> str:
    wanted = src.options.get("correct_field")
    listed = first["metrics"]
    if wanted is not None:
        return str(wanted)
    if len(listed) == 1:
        return str(listed[0])
    raise src.bad(
        f"the samples carry {len(listed)} metrics ({_names(listed)}); name the 0/1 one with --correct-field",
        lineno,
    )


def _records(src: Source) -> Iterator[Record]:
    """lm-evaluation-harness ``--log_samples`` files (``samples_<task>_<date>.jsonl``):
    one JSON object a line per (doc, filter), with ``doc_id``, ``doc``,
    ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``,
    ``metrics`` (the metric names), ``doc_hash``, ``prompt_hash``,
    ``target_hash`` and each metric's value under its name
    (``"exact_match": 1.0``). Other fields are ignored.

    Key: ``doc_id`` (compared as a string). Only the lines of one filter are
    read: ``--filter NAME`` (e.g. ``strict-match`` or ``flexible-extract`` of
    gsm8k); a file with one filter needs none; a file with several and no
    ``--filter`` is refused, listing them. Verdict: the per-sample metric named
    by ``--correct-field`` (e.g. ``exact_match``, ``acc``; needed when the
    samples carry several metrics): 1 (or true) right, 0 (or false) wrong,
    null unscored (warned); anything else (0.5, a BLEU score) is refused.
    The records carry no gold and need none (the verdict is correctness);
    the parser is shown as ``lm-eval-metric``, and each file's provenance
    keeps the filter and metric used (``reader_options``).

    Repeats: a task's ``repeats`` give several responses per request in
    ``resps``, but the file keeps one metric value per (doc, filter), computed
    by the filter over all repeats (take-first, majority vote); per-repeat
    correctness is not in the file, so repeats are not read as trials. The
    task is taken from the file name (``samples_<task>_<date>.jsonl``).

    Model: the samples name none; it is in the ``results_<date>.json`` lm-eval
    writes beside them with the same date. That file is read when present
    (else the newest ``results_*.json`` there, warned: its date differs):
    ``model_name`` (else the model ``config.model_args`` names:
    ``pretrained=``, ``model=``, ...), ``lm_eval_version``, ``git_hash``
    and ``versions[task]`` go into the file's provenance (``about`` in JSON),
    and the model is the run's name when the command line names the run by
    its file. No results file, one that is not JSON, or one that does not
    name the samples' task is warned, never refused.

    Refused, naming file and line: a line that is not a JSON object, a sample
    lacking doc_id, filter or metrics, a sample lacking the chosen metric
    (listing those it has), a sample whose metric names differ from the first
    sample's or a (doc_id, filter) given twice (the file mixes tasks or runs:
    lm-eval appends to an existing samples file), a torn last line."""
    samples = _parsed(src)
    chosen = _chosen_filter(samples, src)
    if chosen is None:
        return
    first_line_no, first = samples[0]
    metric = _chosen_metric(first, src, first_line_no)
    src.used.update(filter=chosen, correct_field=metric)
    task = task_of(src.path.name)
    if task is not None:
        src.about["task"] = task
    read_results(src)
    seen: dict[tuple[str, str], int] = {}
    for lineno, obj in samples:
        if obj["metrics"] != first["metrics"]:
            raise src.bad(
                f"this sample's metrics ({_names(obj['metrics'])}) differ from line {first_line_no}'s "
                f"({_names(first['metrics'])}): a samples file holds one task; this one mixes tasks",
                lineno,
            )
        doc_id = str(obj["doc_id"])
        where = (doc_id, obj["filter"])
        if where in seen:
            raise src.bad(
                f"doc_id {doc_id} with filter {obj['filter']!r} is given again (first at line {seen[where]}): "
                "the file mixes tasks or runs (lm-eval appends to an existing samples file)",
                lineno,
            )
        seen[where] = lineno
        if obj["filter"] != chosen:
            continue
        if metric not in obj:
            raise src.bad(
                f"sample lacks the metric {metric!r} (--correct-field); its metrics: {_names(obj['metrics'])}",
                lineno,
            )
        yield Record((doc_id,), lineno, correct=_verdict(obj[metric], metric, src, lineno))


LM_EVAL_SAMPLES = Reader(
    "lm-eval-samples@1",
    "lm-evaluation-harness --log_samples JSONL: one filter (--filter), correctness from a 0/1 metric (--correct-field).",
    _sniff,
    _records,
    yields="verdicts",
    key_names=("doc_id",),
    has_gold=False,
    decided="lm-eval-metric",
    format="lm-eval-samples",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=("filter", "correct_field"),
)
