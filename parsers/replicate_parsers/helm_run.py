"""``helm-run@1``: HELM run output, read as correctness verdicts from a named per-instance metric.

The files of a run directory and how they are recognised are in
:mod:`replicate_parsers.helm_layout`; this module turns one metric of each
(instance, perturbation, train trial) into a verdict: which metric
(``--correct-field``), which values mean right and wrong (1 and 0;
``--score-map`` for others), which train trial (``--epoch``).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Iterator

from replicate.errors import Message, Param, UsageError
from replicate.reading.contract import Reader, Record, Source, SourceRule
from replicate.reading.stream import describe
from replicate_parsers.helm_layout import (
    DISPLAY_PREDICTIONS,
    PER_INSTANCE_STATS,
    RUN_FILES,
    check_repeated_keys,
    entry_line,
    entry_lines,
    kind_of_head,
    load_json,
    other_file_problem,
    run_about,
    sniff,
    stats_figure,
)

#: The reader options this reader takes (ReadOptions.extra names; the CLI shows --correct-field, --score-map, --epoch).
OPTIONS = ("correct_field", "score_map", "epoch")


@dataclass(frozen=True, slots=True)
class _Entry:
    index: int  # 0-based position in the file's array
    instance_id: str
    perturbation: str | None  # the perturbation's name
    trial: int  # HELM's train_trial_index (0-based)
    obj: dict
    line: int  # the line the entry opens on (HELM's indented layout), else its 1-based number

    @property
    def where(self) -> str:
        pert = f", perturbation {self.perturbation}" if self.perturbation is not None else ""
        return f"entry {self.index + 1} (instance {self.instance_id}{pert}, train trial {self.trial})"

    @property
    def key(self) -> tuple[str, str | None, int]:
        return self.instance_id, self.perturbation, self.trial


def _bad(src: Source, message: str | Message, line: int | None = None):
    return src.bad(message, line)


def _bad_at(src: Source, message: str, index: int):
    """An error about entry ``index`` (0-based) before its line is known."""
    return src.bad(message, entry_line(src.data, index))


def _perturbation(obj: dict, src: Source, i: int) -> str | None:
    p = obj.get("perturbation")
    if p is None:
        return None
    if not isinstance(p, dict) or type(p.get("name")) is not str or not p["name"]:
        raise _bad_at(src, f"entry {i + 1}: 'perturbation' must be an object with a 'name' (HELM's "
                        f"PerturbationDescription), got {describe(p)}", i)
    return p["name"]


def _entries(value: Any, src: Source, fname: str) -> list[_Entry]:
    if not isinstance(value, list):
        raise src.bad(f"expected a JSON array of per-instance entries ({fname}), got {describe(value)}")
    out: list[tuple[int, str, str | None, int, dict]] = []
    for i, obj in enumerate(value):
        if not isinstance(obj, dict):
            raise _bad_at(src, f"entry {i + 1}: expected an object, got {describe(obj)}", i)
        iid = obj.get("instance_id")
        if type(iid) is not str or not iid:
            shown = "lacks 'instance_id'" if "instance_id" not in obj else f"has 'instance_id' {describe(iid)}"
            raise _bad_at(src, f"entry {i + 1} {shown}: a HELM instance id is a non-empty string such as 'id12'", i)
        trial = obj.get("train_trial_index")
        if type(trial) is not int or trial < 0:
            shown = "lacks 'train_trial_index'" if "train_trial_index" not in obj else f"has 'train_trial_index' {describe(trial)}"
            raise _bad_at(src, f"entry {i + 1} (instance {iid}) {shown}: HELM numbers train trials 0, 1, ...", i)
        out.append((i, iid, _perturbation(obj, src, i), trial, obj))
    lines = entry_lines(src.data, len(out))
    return [_Entry(*t, lines[t[0]] if lines is not None else t[0] + 1) for t in out]


def _kind(entries: list[_Entry], src: Source) -> str:
    first = entries[0].obj
    stats = first.get("stats")
    if isinstance(stats, list):
        return PER_INSTANCE_STATS
    if isinstance(stats, dict) and "predicted_text" in first:
        return DISPLAY_PREDICTIONS
    if "request" in first:
        raise src.bad(other_file_problem("display_requests"))
    raise _bad(src, f"{entries[0].where} has no 'stats' (a list in per_instance_stats.json, an object in "
                    "display_predictions.json)", entries[0].line)


# verdicts -----------------------------------------------------------------------------------------
def _score_map(src: Source) -> dict[float, bool]:
    """``--score-map 0.5=0,0.75=1`` -> {metric value: verdict}; a UsageError for a malformed entry."""
    given = src.options.get("score_map")
    if given is None:
        return {}
    out: dict[float, bool] = {}
    for entry in str(given).split(","):
        value, sep, verdict = entry.strip().partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not math.isfinite(number) or verdict.strip() not in ("0", "1"):
            raise UsageError(Message(Param("score_map"), f" entry {entry.strip()!r} must be VALUE=1 or VALUE=0 with a "
                                     "numeric VALUE for helm-run@1 (e.g. 0.5=0)"))
        out[number] = verdict.strip() == "1"
    return out


def _verdict(value: Any, metric: str, smap: dict[float, bool], e: _Entry, src: Source) -> bool | None:
    if value is None:
        src.warn("unscored", f"{e.where}: {metric!r} has no value (count 0; read as unscored)")
        return None
    if type(value) is bool:
        return value
    if type(value) not in (int, float):
        raise _bad(src, f"{e.where}: {metric!r} is {describe(value)}, not a number", e.line)
    if math.isnan(value):
        src.warn("unscored", f"{e.where}: {metric!r} is NaN (read as unscored)")
        return None
    if value in smap:
        return smap[value]
    if value in (0, 1):
        return value == 1
    raise _bad(src, Message(
        f"{e.where}: {metric!r} is {value!r}, not 1 (right) or 0 (wrong): helm-run@1 reads a 0/1 metric such as "
        "exact_match; name one with ", Param("correct_field"), " or say what this value counts as with ",
        Param("score_map"), f" ({value!r}=1 or {value!r}=0)",
    ), e.line)


def _stat_value(stat: dict) -> Any:
    """A HELM Stat's value: its mean (absent when count is 0)."""
    if "mean" in stat:
        return stat["mean"]
    count = stat.get("count")
    if type(count) is int and count > 0 and type(stat.get("sum")) in (int, float):
        return stat["sum"] / count
    return None


# metrics ------------------------------------------------------------------------------------------
def _stat_name(stat: Any) -> str | None:
    name = stat.get("name") if isinstance(stat, dict) else None
    value = name.get("name") if isinstance(name, dict) else None
    return value if type(value) is str else None


def _check_stats(e: _Entry, src: Source) -> list:
    stats = e.obj.get("stats")
    if not isinstance(stats, list):
        raise _bad(src, f"{e.where}: 'stats' must be a list of HELM Stats, got {describe(stats)}", e.line)
    for j, s in enumerate(stats):
        if _stat_name(s) is None:
            raise _bad(src, f"{e.where}: stats[{j}] is not a HELM Stat (an object with name {{name, split, ...}}): "
                            f"{describe(s)}", e.line)
    return stats


def _metric_values(kind: str, entries: list[_Entry]) -> dict[str, list]:
    """Every metric of the file -> its values (the error path: listing what there is)."""
    out: dict[str, list] = {}
    for e in entries:
        stats = e.obj.get("stats")
        if kind == PER_INSTANCE_STATS:
            for s in stats if isinstance(stats, list) else ():
                name = _stat_name(s)
                if name is not None:
                    out.setdefault(name, []).append(_stat_value(s))
        elif isinstance(stats, dict):
            for name, v in stats.items():
                out.setdefault(str(name), []).append(v)
    return out


def _listing(kind: str, entries: list[_Entry]) -> str:
    values = _metric_values(kind, entries)
    binary = sorted(n for n, vs in values.items() if all(v in (0, 1) and type(v) in (int, float, bool) for v in vs))
    other = sorted(set(values) - set(binary))
    parts = []
    if binary:
        parts.append(f"0/1 in every entry: {', '.join(binary)}")
    if other:
        parts.append(f"others: {', '.join(other)}")
    return "; ".join(parts) or "none"


def _chosen_metric(kind: str, entries: list[_Entry], src: Source) -> str:
    wanted = src.options.get("correct_field")
    if wanted is None:
        raise src.bad(Message("name the per-instance metric that says right or wrong with ", Param("correct_field"),
                              f" (e.g. exact_match); metrics in this file: {_listing(kind, entries)}"))
    return str(wanted)


def _unknown_metric(metric: str, kind: str, entries: list[_Entry], src: Source):
    return src.bad(Message(f"no entry has the metric {metric!r} (", Param("correct_field"),
                           f"); metrics in this file: {_listing(kind, entries)}"))


def _hits_per_instance_stats(entries: list[_Entry], metric: str, src: Source) -> dict[tuple, tuple[_Entry, Any, Any]]:
    """(instance, perturbation, trial) -> (entry, value, split) of the metric's stat; HELM writes one entry per
    metric class for each, so the stat is looked for in all of them and must be in exactly one."""
    found: dict[tuple, tuple[_Entry, Any, Any]] = {}
    seen: dict[tuple, _Entry] = {}
    for e in entries:
        stats = e.obj.get("stats")
        try:
            hits = [s for s in stats if s["name"]["name"] == metric]  # type: ignore[union-attr]
        except (TypeError, KeyError):
            stats = _check_stats(e, src)
            hits = [s for s in stats if _stat_name(s) == metric]
        key = e.key
        seen.setdefault(key, e)
        if not hits:
            continue
        if len(hits) > 1 or key in found:
            first = found[key][0] if key in found else e
            raise _bad(src, f"{e.where}: a second {metric!r} stat for this instance, perturbation and train trial "
                            f"(first in entry {first.index + 1}): the file holds the same (instance, perturbation, "
                            "train trial) twice", e.line)
        stat = hits[0]
        name = stat["name"]
        found[key] = (e, _stat_value(stat), name.get("split") if isinstance(name, dict) else None)
    if not found:
        raise _unknown_metric(metric, PER_INSTANCE_STATS, entries, src)
    if len(found) < len(seen):
        missing = next(e for k, e in seen.items() if k not in found)
        names = sorted({_stat_name(s) or "?" for x in entries if x.key == missing.key for s in x.obj.get("stats") or ()})
        raise _bad(src, f"{missing.where} has no {metric!r} stat in any of its entries (other instances have one); "
                        f"its stats: {', '.join(names)}", missing.line)
    return found


def _hits_display_predictions(entries: list[_Entry], metric: str, src: Source) -> dict[tuple, tuple[_Entry, Any, Any]]:
    """(instance, perturbation, trial) -> (entry, value, None): display_predictions.json holds one entry for each."""
    found: dict[tuple, tuple[_Entry, Any, Any]] = {}
    for e in entries:
        stats = e.obj.get("stats")
        if not isinstance(stats, dict):
            raise _bad(src, f"{e.where}: 'stats' must be an object of metric values, got {describe(stats)}", e.line)
        if e.key in found:
            raise _bad(src, f"{e.where} is given again (first in entry {found[e.key][0].index + 1}): the file holds "
                            "the same (instance, perturbation, train trial) twice", e.line)
        if metric not in stats:
            if not found and not any(isinstance(x.obj.get("stats"), dict) and metric in x.obj["stats"] for x in entries):
                raise _unknown_metric(metric, DISPLAY_PREDICTIONS, entries, src)
            raise _bad(src, f"{e.where} lacks the metric {metric!r}; its stats: {', '.join(sorted(map(str, stats)))}",
                       e.line)
        found[e.key] = (e, stats[metric], None)
    return found


# train trials -------------------------------------------------------------------------------------
def chosen_trial(trials: set[int], src: Source) -> int | None:
    """The train_trial_index kept (``--epoch N`` keeps N - 1), or None to read every one."""
    wanted = src.options.get("epoch")
    if wanted is None:
        return None
    try:
        epoch = int(wanted)
    except (TypeError, ValueError):
        raise UsageError(Message(Param("epoch"), f" must be a whole number >= 1, got {wanted!r}")) from None
    present = sorted(trials)
    if len(present) == 1 and epoch - 1 != present[0]:
        src.warn("single-trial", f"the run holds train trial {present[0]} only: read whole "
                                 f"(--epoch {epoch}, train trial {epoch - 1}, picks among several)")
        return present[0]
    if epoch - 1 not in trials:
        shown = ", ".join(f"{t} (--epoch {t + 1})" for t in present)
        raise src.bad(Message("no entry has train trial ", f"{epoch - 1} (", Param("epoch"), f" {epoch}); "
                              f"train trials in this run: {shown}"))
    return epoch - 1


def _records(src: Source) -> Iterator[Record]:
    """HELM run output (``runs/<suite>/<run_spec_name>/``): the run directory
    or one of its files. Given the directory, ``per_instance_stats.json`` is
    read (``display_predictions.json`` when it is missing); either file can
    be given itself. Other run files (``scenario_state.json``,
    ``instances.json``, ``stats.json``, ``run_spec.json``,
    ``display_requests.json``) hold no per-instance verdict and are refused,
    saying which file to give.

    ``per_instance_stats.json``: a list of HELM PerInstanceStats
    (``instance_id``, ``perturbation``, ``train_trial_index``, ``stats``: a
    list of Stats ``{name: {name, split, sub_split, perturbation}, count,
    sum, sum_squared, min, max, mean, ...}``). HELM writes one entry per
    metric class for each (instance, perturbation, train trial): the metric
    is looked for in all of them. Its split (``name.split``: ``valid``,
    ``test``) is kept in the file's provenance (``reader_options.split``).
    ``display_predictions.json``: a list of DisplayPredictions
    (``instance_id``, ``perturbation``, ``train_trial_index``,
    ``predicted_text``, ``mapped_output``, ``stats``: metric name -> value,
    only the metrics HELM's schema shows). Other fields are ignored.

    Key: the instance id, with the perturbation's name after it when the
    entry has one (``id12`` and ``id12`` + ``typos`` are two items).
    Trial: ``train_trial_index`` + 1 (replicate counts trials from 1): a run
    of several train trials is refused unless ``--epoch N`` keeps one
    (train_trial_index N - 1); a run of one train trial is read whole.

    Verdict: the metric named by ``--correct-field`` (needed: every HELM run
    carries many metrics; the error lists the file's metrics, those 0/1 in
    every entry first): 1 right, 0 wrong; a Stat of count 0 (no mean) and
    NaN are unscored (warned); other values (an F1 of 0.67, a runtime) are
    refused unless ``--score-map`` says what they count as (``0.5=0``;
    entries VALUE=1 or VALUE=0, numeric values). The records carry no gold
    and need none; the parser is shown as ``helm-metric``. HELM leaves a Stat
    of count 0 out of its mean, so the default unparsed policy of these runs
    is ``intersect`` (the source's rule); ``--unparsed wrong`` is printed as a
    departure. The harness's own figure: the metric's mean in the
    ``stats.json`` beside the file (split as read, no perturbation), for a run
    of one train trial without perturbations, shown by ``parse`` and
    ``compare`` beside the recomputed accuracy.

    Refused, naming file, line and instance (entry number, instance id,
    perturbation, train trial): a directory holding neither file, a file
    that is not JSON or is truncated, an entry that is not an object or
    lacks ``instance_id`` or ``train_trial_index``, a metric no entry has
    (listing the metrics there are), an instance lacking the metric when
    others have it (listing its stats), the same (instance, perturbation,
    train trial) given twice (with the metric, in per_instance_stats.json),
    an ``--epoch`` no entry has (listing the train trials).

    The run's model and task (the defaults of ``replicate import``'s
    ``--model`` and ``--benchmark``) come from the ``run_spec.json`` beside
    the file when there is one: ``adapter_spec.model`` and the run spec's
    name without its ``model=`` argument."""
    value = load_json(src)
    run_about(src)
    kind = kind_of_head(src.data[:4096])
    if kind is not None and kind.endswith(".json"):
        raise src.bad(other_file_problem(kind))
    fname = src.path.name
    entries = _entries(value, src, fname)
    src.lines_total = len(entries)
    if not entries:
        src.warn("empty-run", "the file holds no entry")
        return
    kind = _kind(entries, src)
    metric = _chosen_metric(kind, entries, src)
    check_repeated_keys(src, value, None if kind == PER_INSTANCE_STATS else metric)
    smap = _score_map(src)
    hits = (_hits_per_instance_stats if kind == PER_INSTANCE_STATS else _hits_display_predictions)(entries, metric, src)
    keep = chosen_trial({k[2] for k in hits}, src)
    src.used.update(file=f"{kind}.json", correct_field=metric)
    if keep is not None:
        src.used["epoch"] = str(keep + 1)
    if smap:
        src.used["score_map"] = ",".join(f"{k:g}={int(v)}" for k, v in smap.items())
    splits = sorted({str(s) for _, _, s in hits.values() if s is not None})
    if splits:
        src.used["split"] = ",".join(splits)
    if len({k[2] for k in hits}) == 1 and all(k[1] is None for k in hits) and len(splits) <= 1:
        figure = stats_figure(src, metric, splits[0] if splits else None)  # one trial, no perturbation: comparable
        if figure is not None:
            src.harness.append(figure)
    for (iid, pert, trial), (e, v, _) in hits.items():
        if keep is not None and trial != keep:
            continue
        key = (iid,) if pert is None else (iid, pert)
        yield Record(key, e.line, correct=_verdict(v, metric, smap, e, src), trial=trial + 1)


HELM_RUN = Reader(
    "helm-run@1",
    "HELM run output (a run directory, per_instance_stats.json or display_predictions.json): "
    "correctness from a 0/1 metric (--correct-field).",
    sniff,
    _records,
    yields="verdicts",
    key_names=("instance_id", "perturbation"),
    has_gold=False,
    decided="helm-metric",
    format="helm-run",
    details=inspect.cleandoc(_records.__doc__ or ""),
    trial_option="epoch",
    options=OPTIONS,
    run_files=RUN_FILES,
    source_rule=SourceRule("intersect", "HELM leaves a Stat of count 0 (no value) out of its mean"),
)
