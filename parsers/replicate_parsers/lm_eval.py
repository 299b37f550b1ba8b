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
from typing import Any, Iterator

import orjson

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, SourceRule, first_line
from replicate.reading.jsonl import json_objects
from replicate.reading.stream import describe
from replicate_parsers.cluster_field import asked_field, grouping
from replicate_parsers.lm_eval_layout import INVALID, array_objects, metric_names, no_answer, positions
from replicate_parsers.lm_eval_results import SAMPLES_NAME, Results, read_results

#: The fields a samples line has, whatever lm-eval wrote it (``filter`` and ``metrics`` came in 0.4.7).
_NEEDED = ("doc_id", "filtered_resps")
_LATER = ("resps", "metrics")


def task_of(name: str) -> str | None:
    """The task named by a samples file's name (``samples_gsm8k_2024-05-01T10-00-00.000000.jsonl``: gsm8k)."""
    m = SAMPLES_NAME.match(name)
    return m.group("task") if m else None


def _sniff(head: bytes, options: ReadOptions) -> Match:
    stripped = head.lstrip()
    if stripped.startswith(b"["):
        # lm-eval 0.4.0-0.4.2: one JSON array, indented: '[\n  {\n    "doc_id": 0,\n    "doc": ...'
        body = stripped[1:].lstrip()
        first = body[1:].lstrip()
        if body.startswith(b"{") and first.startswith(b'"doc_id":') and (b'"filtered_resps":' in head or b'"doc":' in first[:64]):
            return "yes"  # (a first document longer than the head: doc_id, then doc, as lm-eval writes them)
        return "no"
    line = first_line(head)
    if line is None or not line.startswith(b"{"):
        return "no"
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        # a first line cut at the head's end (a long doc): lm-eval writes doc_id, then doc, first
        found = all(b'"' + n.encode() + b'"' in line for n in _NEEDED)
        return "yes" if found or line.startswith((b'{"doc_id": ', b'{"doc_id":')) and b'"doc":' in line else "no"
    if isinstance(obj, dict) and all(n in obj for n in _NEEDED) and any(n in obj for n in _LATER):
        return "yes"
    return "no"


def _names(values: Any) -> str:
    return ", ".join(sorted(map(str, values)))


def metric_verdict(value: Any, metric: str, src: Source, lineno: int) -> bool | None:
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


def _samples(src: Source) -> list[tuple[int, dict]]:
    """Every logged sample: one JSON object a line, or (lm-eval 0.4.0-0.4.2) one JSON array."""
    metric = src.options.get("correct_field")  # the fields taken (a key of them twice: refused, or warned)
    taken = (*_NEEDED, "filter", "metrics", *([metric] if isinstance(metric, str) else []))
    if src.data.lstrip()[:1] == b"[":
        found = array_objects(src, "sample", taken)
        src.lines_total = len(found)  # the file's 'lines' are its samples, as for a zip log
        return found
    return list(json_objects(src, " (one logged sample)", fields=taken))


def _checked(samples: list[tuple[int, dict]], src: Source) -> bool:
    """Check every sample's own fields; True when the lines name their filter (lm-eval 0.4.7 on)."""
    named = None
    for lineno, obj in samples:
        if "doc_id" not in obj:
            raise src.bad("sample lacks 'doc_id' (an lm-eval --log_samples line has doc_id, doc, target, "
                          "arguments, resps, filtered_resps)", lineno)
        if type(obj["doc_id"]) not in (int, str):
            raise src.bad(f"'doc_id' must be an integer or a string, got {describe(obj['doc_id'])}", lineno)
        has = "filter" in obj
        if named is None:
            named = has
        elif has != named:
            raise src.bad(f"sample {'has' if has else 'lacks'} 'filter' unlike line {samples[0][0]}: lm-eval "
                          "0.4.7 on names each line's filter and metrics, earlier versions neither; this file "
                          "mixes both", lineno)
        if not has:
            continue
        if "metrics" not in obj:
            raise src.bad("sample lacks 'metrics' (an lm-eval --log_samples line with a 'filter' has doc_id, "
                          "filter, metrics)", lineno)
        if type(obj["filter"]) is not str:
            raise src.bad(f"'filter' must be a string, got {describe(obj['filter'])}", lineno)
        metrics = obj["metrics"]
        if not isinstance(metrics, list) or not all(type(m) is str for m in metrics):
            raise src.bad(f"'metrics' must be a list of metric names, got {describe(metrics)}", lineno)
    return bool(named)


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


def chosen_metric(listed: list[str], src: Source, lineno: int) -> str:
    wanted = src.options.get("correct_field")
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

    Files written before lm-eval 0.4.7 lack ``filter`` and ``metrics`` (0.4.0
    to 0.4.2 wrote ``<model_args>_<task>.jsonl`` holding one JSON array, beside
    ``results.json``): a document's k-th line is the task's k-th filter (the
    evaluator logs every document under one filter, then the next, in
    ``filter_list`` order, per process), named by ``configs.<task>.filter_list``
    of the results file beside the samples; ``--filter`` takes a name it lists
    or a position 1..N. Without the names, a file with several lines per
    document needs ``--filter N``. The metrics are the fields that are not
    lm-eval's own.

    Extraction failures: a sample whose filtered responses are all
    ``[invalid]`` (a regex filter's fallback: no answer found; or a fallback
    the filter declares in the results file) is read as unparsed and counted
    (``extraction_failures``). lm-eval scores it 0 and averages over every
    document, so the default unparsed policy of these runs is ``wrong`` (the
    source's rule): the figures are lm-eval's own; ``--unparsed intersect`` is
    a departure, printed as one. A file with no ``[invalid]`` whose filter has
    no regex step (lm-eval's ``none``, or a task that extracts the answer in its
    own scoring: math tasks) or whose filter's steps no results file names
    cannot tell its failures: they are "not recorded", never 0.

    The harness's own figure: the results file's ``results[task]["metric,filter"]``
    (e.g. ``exact_match,strict-match``), shown by ``parse`` and ``compare``
    beside the recomputed accuracy at its printed precision.

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
    lacking doc_id (or with filter but no metrics), documents of an unnamed
    file logged a differing number of times or whose lines differ in resps,
    a JSON array cut short, a sample lacking the chosen metric
    (listing those it has), a sample whose metric names differ from the first
    sample's or a (doc_id, filter) given twice (the file mixes tasks or runs:
    lm-eval appends to an existing samples file), a torn last line.
    ``--cluster doc.FIELD`` appends each sample's ``doc`` FIELD (a string or
    an integer) to its key, named ``doc.FIELD``, for the cluster bootstrap;
    a sample lacking it is refused, naming its line."""
    samples = _samples(src)
    if samples:
        yield from verdict_records(samples, src, read_results(src))


def verdict_records(samples: list[tuple[int, dict]], src: Source, results: Results | None) -> Iterator[Record]:
    """The records of ``samples`` (``(line, logged sample)``; a Parquet file's rows alike), by the rules of
    :data:`LM_EVAL_SAMPLES`; ``results``: the results file beside them, if any."""
    if not samples:
        return
    named = _checked(samples, src)

    def listed(obj: dict) -> list[str]:
        return obj["metrics"] if named else metric_names(obj)

    first_line_no, first = samples[0]
    for lineno, obj in samples:
        if listed(obj) != listed(first):
            raise src.bad(
                f"this sample's metrics ({_names(listed(obj))}) differ from line {first_line_no}'s "
                f"({_names(listed(first))}): a samples file holds one task; this one mixes tasks",
                lineno,
            )
    task = task_of(src.path.name)
    if task is not None:
        src.about["task"] = task
    if named:
        chosen = _chosen_filter(samples, src)
        picked = [(n, o) for n, o in _unique(samples, src) if o["filter"] == chosen]
        src.used["filter"] = str(chosen)
    else:
        chosen, picked = _by_position(samples, results, src)
    metric = chosen_metric(listed(first), src, first_line_no)
    src.used["correct_field"] = metric
    fallbacks = {INVALID} | (results.fallbacks(chosen) if results is not None and chosen is not None else set())
    src.extraction_failures = 0
    group = asked_field(src, "doc.")
    for lineno, obj in picked:
        if metric not in obj:
            raise src.bad(
                f"sample lacks the metric {metric!r} (--correct-field); its metrics: {_names(listed(obj))}",
                lineno,
            )
        correct = metric_verdict(obj[metric], metric, src, lineno)
        failed = no_answer(obj.get("filtered_resps"), fallbacks)
        if failed:
            src.extraction_failures += 1
        key = (str(obj["doc_id"]),) if group is None else \
            (str(obj["doc_id"]), grouping(src, obj.get("doc"), group, "doc.", f"doc_id {obj['doc_id']} ", lineno))
        yield Record(key, lineno, correct=None if failed else correct, no_answer=failed)
    if results is not None and chosen is not None:
        figure = results.figure(metric, chosen)
        if figure is not None:
            src.harness.append(figure)
    if not src.extraction_failures:
        why = _unrecorded(results, chosen)
        if why is not None:
            src.extraction_failures, src.failures_unrecorded = None, why


def _unrecorded(results: Results | None, chosen: str | None) -> str | None:
    """Why a file with no ``[invalid]`` cannot say it had no extraction failure (None: its filter marks them)."""
    marks = results.marks_failures(chosen) if results is not None and chosen is not None else None
    if marks:
        return None
    if marks is False:
        return (f"filter {chosen!r} has no regex step, so the log does not mark an answer it could not extract "
                "(the task's own scoring may extract one)")
    named = f"filter {chosen!r}" if chosen is not None else "the filter"
    return f"no results file beside the samples names the steps of {named}: the log cannot tell whether it marks failures"


def _unique(samples: list[tuple[int, dict]], src: Source) -> list[tuple[int, dict]]:
    """``samples``, refused when a (doc_id, filter) is given twice (the file mixes tasks or runs)."""
    seen: dict[tuple[str, str], int] = {}
    for lineno, obj in samples:
        where = (str(obj["doc_id"]), obj["filter"])
        if where in seen:
            raise src.bad(
                f"doc_id {where[0]} with filter {where[1]!r} is given again (first at line {seen[where]}): "
                "the file mixes tasks or runs (lm-eval appends to an existing samples file)",
                lineno,
            )
        seen[where] = lineno
    return samples


def _by_position(samples: list[tuple[int, dict]], results: Results | None, src: Source
                 ) -> tuple[str | None, list[tuple[int, dict]]]:
    """The chosen filter's name (None: not known) and lines of a file whose lines do not name their filter."""
    pos, n = positions(samples, src)
    names = results.filters() if results is not None else None
    if names is not None and len(names) != n:
        assert results is not None
        src.warn("lm-eval-results", f"{results.name} lists {len(names)} filter(s) for task {results.task!r} "
                                    f"({', '.join(names)}), but each document is logged {n} time(s) in the samples "
                                    "(once per filter): the names are not used (another evaluation's results?)")
        names = None
    k = _position(n, names, results, src)
    src.used["filter"] = names[k] if names is not None else str(k + 1)
    src.used["filter_position"] = f"{k + 1} of {n}"
    return (names[k] if names is not None else None), [s for s, p in zip(samples, pos) if p == k]


def _position(n: int, names: list[str] | None, results: Results | None, src: Source) -> int:
    """The 0-based position of the filter ``--filter`` names (a name the results give, or a position 1..n)."""
    wanted = src.options.get("filter")
    if wanted is not None:
        text = str(wanted)
        if names is not None and text in names:
            return names.index(text)
        if text.isdigit() and 1 <= int(text) <= n:
            return int(text) - 1
        known = f"its filters, in lm-eval's order: {', '.join(names)}" if names else "its filters are not named"
        raise src.bad(f"no filter {text!r} in this file ({known}); --filter also takes a position 1-{n} "
                      "in the task's filter_list")
    if n == 1:
        return 0
    if names is not None:
        assert results is not None
        raise src.bad(f"the file holds {n} filters ({', '.join(names)}, as {results.name} lists them); name one "
                      "with --filter (each filter scores the same documents differently)")
    raise src.bad(
        f"each document is logged {n} times, once per filter, and lm-eval before 0.4.7 does not name a line's "
        "filter; no results file beside the samples names the task's filters: put the results file of this "
        "evaluation beside the samples (results_<date>.json; results.json for lm-eval 0.4.0-0.4.2), or pick "
        f"a filter by its position in the task's filter_list with --filter 1..{n} (lm-eval logs them in that order)"
    )


#: How lm-eval counts a sample it could not score, whatever file its samples are stored in (JSONL or Parquet).
LM_EVAL_RULE = SourceRule("wrong", "lm-eval scores a sample whose answer its filter did not find ([invalid]) 0 "
                                   "and averages over every document")

LM_EVAL_SAMPLES = Reader(
    "lm-eval-samples@1",
    "lm-evaluation-harness --log_samples files (0.4.0 on): one filter (--filter), correctness from a 0/1 metric (--correct-field).",
    _sniff,
    _records,
    yields="verdicts",
    key_names=("doc_id",),
    has_gold=False,
    decided="lm-eval-metric",
    format="lm-eval-samples",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=("filter", "correct_field"),
    cluster_prefix="doc.",
    source_rule=LM_EVAL_RULE,
)
