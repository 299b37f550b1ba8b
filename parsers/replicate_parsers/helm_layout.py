"""The files of a HELM run directory as ``helm-run@1`` meets them: recognising them, parsing them, locating entries.

HELM's runner writes a run into ``runs/<suite>/<run_spec_name>/``: ``run_spec.json``,
``scenario.json``, ``scenario_state.json``, ``stats.json``,
``per_instance_stats.json`` and, for its web frontend, ``instances.json``,
``display_predictions.json`` and ``display_requests.json``. Each is one JSON
document (a dataclass or a list of them, None fields left out, indented by two
spaces). ``helm-run@1`` reads the first two kinds of entry below; the others are
recognised so that giving one of them says which file to give instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from replicate.command_input import is_stdio
from replicate.reading.contract import HarnessFigure, Match, Source

#: The files a run directory is read through, the first present winning.
RUN_FILES = ("per_instance_stats.json", "display_predictions.json")

PER_INSTANCE_STATS = "per_instance_stats"
DISPLAY_PREDICTIONS = "display_predictions"

# An entry of per_instance_stats.json, display_predictions.json or display_requests.json opens with
# instance_id, the perturbation when there is one (an object, whose fields may be objects: a person-name
# perturbation's source_class), and train_trial_index; the key after those says which of the three it is.
_KEYED_ENTRY = re.compile(
    rb'^\s*\[\s*\{\s*"instance_id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*'
    rb'(?:"perturbation"\s*:\s*\{(?:[^{}]|\{[^{}]*\})*\}\s*,\s*)?"train_trial_index"\s*:\s*\d+\s*,\s*"(\w+)"'
)
_LIST_OF_INSTANCE_IDS = re.compile(rb'^\s*\[\s*\{\s*"instance_id"\s*:')
#: The other files of a run: (pattern of their opening, file name, what it holds).
_OTHERS = (
    (re.compile(rb'^\s*\{\s*"adapter_spec"\s*:'), "scenario_state.json", "the requests and results"),
    (re.compile(rb'^\s*\[\s*\{\s*"input"\s*:\s*\{'), "instances.json", "the instances and their references"),
    (re.compile(rb'^\s*\[\s*\{\s*"name"\s*:\s*\{\s*"name"\s*:'), "stats.json", "the metrics aggregated over instances"),
    (re.compile(rb'^\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"scenario_spec"\s*:'), "run_spec.json", "the run's specification"),
    (re.compile(rb'^\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"description"\s*:'), "scenario.json", "the scenario's description"),
)
_ENTRY_KINDS = {"stats": PER_INSTANCE_STATS, "predicted_text": DISPLAY_PREDICTIONS, "request": "display_requests"}


def kind_of_head(head: bytes) -> str | None:
    """Which HELM run file ``head`` opens (``per_instance_stats``, ``display_predictions``, ``display_requests``,
    or another run file's name), or None when it opens none of them."""
    m = _KEYED_ENTRY.match(head)
    if m is not None:
        return _ENTRY_KINDS.get(m.group(1).decode(), "keyed")
    try:  # a small (or compact) file fits in the head whole
        value = orjson.loads(head)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, list) and value and isinstance(value[0], dict) and "instance_id" in value[0]:
        first = value[0]
        if "train_trial_index" in first:
            for field, kind in _ENTRY_KINDS.items():
                if field in first:
                    return kind
        return "keyed"
    if _LIST_OF_INSTANCE_IDS.match(head):
        return "keyed"
    for pattern, name, _ in _OTHERS:
        if pattern.match(head):
            return name
    return None


def sniff(head: bytes, options: Any) -> Match:
    kind = kind_of_head(head)
    if kind in (PER_INSTANCE_STATS, DISPLAY_PREDICTIONS):
        return "yes"
    return "no" if kind is None else "maybe"


def other_file_problem(kind: str) -> str:
    """Why a run file other than the two read is refused, and what to give instead."""
    what = next((w for _, n, w in _OTHERS if n == kind), "requests" if kind == "display_requests" else "")
    shown = f"HELM's {kind if kind.endswith('.json') else kind + '.json'}"
    return (
        f"this is {shown} ({what}), which holds no per-instance verdict: helm-run@1 reads "
        "per_instance_stats.json (or display_predictions.json); give the run directory or one of those files"
        + (" (its completions are read, for a parser, by helm-completions@1)" if kind == "scenario_state.json" else "")
    )


def load_json(src: Source) -> Any:
    """The file's JSON value; a BadInput saying where a truncated or broken document stops.

    orjson first; HELM writes with Python's json, which writes NaN and Infinity for such floats (not
    JSON): a document orjson refuses is read again with Python's json, which takes them.
    """
    data = src.data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise src.bad(f"not valid UTF-8 (byte {exc.start + 1} of the file)", line) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise src.bad("not JSON this reader can take: nested too deeply (thousands of arrays or objects "
                      "within each other)") from None
    except json.JSONDecodeError as exc:
        if not text[exc.pos :].strip():
            raise src.bad(
                "truncated JSON: the document ends before it is complete (incomplete download or an "
                "interrupted write?)", exc.lineno,
            ) from None
        raise src.bad(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", exc.lineno) from None
    except ValueError as exc:  # an integer of more than 4,300 digits, which Python will not convert
        raise src.bad(f"not JSON this reader can take: {exc}".split(";")[0]) from None


_TOP_ENTRY = re.compile(rb"\n  \{")


def entry_lines(data: bytes, n: int) -> list[int] | None:
    """The line where each of the ``n`` entries of a top-level array indented by two spaces opens (as HELM
    writes it), or None when the file is not laid out so (compact JSON: every entry on one line)."""
    lines: list[int] = []
    line, prev = 1, 0
    count = data.count
    for m in _TOP_ENTRY.finditer(data):
        start = m.start()
        line += count(b"\n", prev, start)
        prev = start
        lines.append(line + 1)
    return lines if len(lines) == n else None


def entry_line(data: bytes, index: int) -> int | None:
    """The line where entry ``index`` (0-based) opens, as :func:`entry_lines` (for an error's message)."""
    for i, m in enumerate(_TOP_ENTRY.finditer(data)):
        if i == index:
            return data.count(b"\n", 0, m.start()) + 2
    return None


#: The keys of an entry the HELM reader takes, and of a Stat (per_instance_stats.json) whose value is the verdict.
ENTRY_KEYS = ("instance_id", "perturbation", "train_trial_index", "stats")
STAT_KEYS = ("count", "mean")


def check_repeated_keys(src: Source, entries: list[dict], metric: str | None) -> None:
    """A key the reader takes written twice in one object: an entry's (:data:`ENTRY_KEYS`), a Stat's
    (:data:`STAT_KEYS`) or, in display_predictions.json (``metric`` given), the metric's in an entry's stats.
    Refused when the values differ, else warned (:func:`~replicate.reading.jsonl.repeated_key`), naming the
    line where its entry opens: a JSON parser keeps one value without a word.

    The document is read again keeping every pair only when a key's text occurs more often than the entries
    hold it (instance_id, train_trial_index, stats; and perturbation and the metric in display_predictions.json,
    where they are an entry's alone): one text count per key, so a Stat's key written twice is found when an
    entry's key is (a count per Stat would cost a third of the read of a large file)."""
    from replicate.reading.jsonl import KeptPairs, read_keeping_pairs, repeated_key

    data = src.data
    shown = metric is not None  # display_predictions.json
    trigger = ("instance_id", "train_trial_index", "stats", *(("perturbation", metric) if shown else ()))
    held = {n: sum(n in e for e in entries) for n in trigger[:4]}
    if shown:
        held[metric] = sum(isinstance(e.get("stats"), dict) and metric in e["stats"] for e in entries)
    if not any(data.count(orjson.dumps(n)) > held[n] for n in trigger):
        return
    doc = read_keeping_pairs(data)  # read once already: valid (NaN taken); None only nested past Python's depth
    if not isinstance(doc, list):
        return
    for index, entry in enumerate(doc):
        if not isinstance(entry, KeptPairs):
            continue
        found = [(k, entry.repeated[k]) for k in ENTRY_KEYS if k in entry.repeated]
        stats = entry.get("stats")
        if shown and isinstance(stats, KeptPairs) and metric in stats.repeated:
            found.append((metric, stats.repeated[metric]))
        elif not shown and isinstance(stats, list):
            found.extend((k, s.repeated[k]) for s in stats if isinstance(s, KeptPairs)
                         for k in STAT_KEYS if k in s.repeated)
        for name, values in found:
            repeated_key(name, values, src.path, entry_line(data, index), src.diagnostics)


STATS = "stats.json"


def stats_figure(src: Source, metric: str, split: str | None) -> HarnessFigure | None:
    """HELM's own aggregate of ``metric`` from the ``stats.json`` beside the file: the Stat named ``metric`` with no
    perturbation and no sub-split, of ``split`` (None: the only one there is); None when there is none or several.

    HELM's mean is the mean over train trials of each trial's mean over the unperturbed instances: the caller
    asks for it only for a run of one train trial without perturbations.
    """
    if is_stdio(src.path):
        return None
    path = src.path.parent / STATS
    if not path.is_file():
        return None
    src.side_files.append(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))  # HELM writes NaN, which orjson refuses
    except (OSError, ValueError) as exc:
        src.warn("helm-stats", f"{STATS} beside it is not readable JSON ({exc}): HELM's own figure not shown")
        return None
    hits = []
    for stat in value if isinstance(value, list) else ():
        name = stat.get("name") if isinstance(stat, dict) else None
        if (isinstance(name, dict) and name.get("name") == metric and name.get("perturbation") is None
                and name.get("sub_split") is None and (split is None or name.get("split") == split)):
            hits.append(stat)
    mean = hits[0].get("mean") if len(hits) == 1 else None
    if type(mean) not in (int, float) or mean != mean:  # none, several splits, or NaN
        return None
    shown = hits[0]["name"].get("split")
    return HarnessFigure(metric, repr(mean), f"{STATS}: {metric}" + (f", split {shown}" if shown else ""))


RUN_SPEC = "run_spec.json"
_MODEL_ARGS = ("model=", "model_deployment=")


def task_of(run_spec_name: str) -> str:
    """The task a run spec names: its name without the model arguments
    (``mmlu:subject=anatomy,model=openai_gpt2`` -> ``mmlu:subject=anatomy``)."""
    scenario, sep, args = run_spec_name.partition(":")
    kept = [a for a in args.split(",") if a and not a.startswith(_MODEL_ARGS)] if sep else []
    return f"{scenario}:{','.join(kept)}" if kept else scenario


def run_about(src: Source) -> None:
    """The run's model (``adapter_spec.model``) and task (:func:`task_of` its name) into ``src.about``, from the
    ``run_spec.json`` beside the file; nothing when there is none, a warning when it is not JSON."""
    if is_stdio(src.path):
        return
    path = src.path.parent / RUN_SPEC
    src.side_files.append(path)
    try:
        spec = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return
    except (OSError, orjson.JSONDecodeError) as exc:
        src.warn("run-spec", f"{RUN_SPEC} beside it is not readable JSON ({exc}): model and task not taken from it")
        return
    if not isinstance(spec, dict):
        return
    adapter = spec.get("adapter_spec")
    model = adapter.get("model") if isinstance(adapter, dict) else None
    if type(model) is str and model:
        src.about["model"] = model
    name = spec.get("name")
    if type(name) is str and name:
        src.about["task"] = task_of(name)
