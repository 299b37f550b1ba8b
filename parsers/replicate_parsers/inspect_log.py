"""``inspect-log@1``: inspect_ai eval logs (``.eval`` and ``.json``), read as correctness verdicts.

The layout and the two ways of reading it (inspect_ai's ``read_eval_log`` when
installed, else a small built-in reader) are in
:mod:`replicate_parsers.inspect_layout`; this module turns a sample's score
into a verdict: which scorer (``--inspect-scorer``), which values mean right and wrong
(inspect_ai's ``value_to_float`` reading, ``--score-map``), which epoch
(``--epoch``).
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any, Iterator

import orjson

from replicate.errors import Message, Param, UsageError
from replicate.reading.contract import HarnessFigure, Match, Reader, ReadOptions, Record, Source, SourceRule
from replicate.reading.stream import describe
from replicate_parsers.cluster_field import asked_field, grouping
from replicate_parsers.inspect_layout import (
    HEADER_JSON,
    SAMPLES_DIR,
    START_JSON,
    Log,
    LogSample,
    is_zip,
    read_log,
)

#: The reader options this reader takes (ReadOptions.extra names; the CLI shows --inspect-scorer, --score-map, --epoch).
OPTIONS = ("scorer", "score_map", "epoch")

#: inspect_ai's value_to_float reading of its letter values: C(orrect) 1, I(ncorrect) 0,
#: N(o answer) 0; P(artial) is 0.5, which is no verdict until --score-map says what it is.
LETTERS: dict[str, bool] = {"C": True, "I": False, "N": False}
#: Strings value_to_float reads as 1 and 0 (compared lower-cased).
WORDS: dict[str, bool] = {"yes": True, "true": True, "no": False, "false": False}

_JSON_LOG_START = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,')


_OPTION_MARK = re.compile(r"<(" + "|".join(OPTIONS) + r")>")


def _msg(text: str) -> Message:
    """``text`` with each ``<option>`` mark a parameter (the CLI shows ``--option``)."""
    parts: list[str | Param] = []
    for i, piece in enumerate(_OPTION_MARK.split(text)):
        if piece:
            parts.append(Param(piece) if i % 2 else piece)
    return Message(*parts)


def _sniff(head: bytes, options: ReadOptions) -> Match:
    if is_zip(head):
        names = (HEADER_JSON.encode(), START_JSON.encode(), SAMPLES_DIR.encode())
        return "yes" if any(n in head for n in names) else "maybe"
    stripped = head.lstrip()
    if not stripped.startswith(b"{"):
        return "no"
    try:  # a small log fits in the head whole
        obj = orjson.loads(head)
    except orjson.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        return "yes" if "eval" in obj and ("samples" in obj or "version" in obj) else "no"
    # inspect_ai writes the EvalLog's fields in a fixed order: version, status, eval, ...
    if _JSON_LOG_START.match(head) and b'"eval"' in head:
        return "yes"
    return "no"


def _score_map(options: ReadOptions) -> dict[str, bool]:
    """``--score-map C=1,I=0,P=0`` -> {value text: verdict}; a UsageError for a malformed entry."""
    given = options.get("score_map")
    if given is None:
        return {}
    out: dict[str, bool] = {}
    for entry in str(given).split(","):
        value, sep, verdict = entry.strip().partition("=")
        if not sep or not value.strip() or verdict.strip() not in ("0", "1"):
            raise UsageError(_msg(f"<score_map> entry {entry.strip()!r} must be VALUE=1 or VALUE=0 (e.g. C=1,I=0,P=0)"))
        out[value.strip()] = verdict.strip() == "1"
    return out


def _mapped_number(value: float, smap: dict[str, bool]) -> bool | None:
    for key, verdict in smap.items():
        try:
            if float(key) == value:
                return verdict
        except ValueError:
            continue
    return None


def _verdict(value: Any, scorer: str, smap: dict[str, bool], s: LogSample, src: Source) -> bool | None:
    where = f"{s.where}: sample {s.id} epoch {s.epoch}: scorer {scorer!r}"
    if type(value) is str:
        if value in smap:
            return smap[value]
        if value in LETTERS:
            return LETTERS[value]
        if value.lower() in WORDS:
            return WORDS[value.lower()]
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None and math.isfinite(number):
            return _number_verdict(number, repr(value), scorer, smap, where, src)
        if value == "P":
            raise src.bad(_msg(
                f"{where} gave 'P' (partial credit, 0.5 to inspect_ai), which is neither right nor wrong: "
                "say what it counts as with <score_map> (P=0 or P=1)"
            ))
        raise src.bad(_msg(
            f"{where} gave {value!r}, not a right/wrong value (C, I, N, yes/no, true/false, 1/0); "
            f"map it with <score_map> ({value}=1 or {value}=0)"
        ))
    if type(value) is bool:
        return value
    if type(value) in (int, float):
        if isinstance(value, float) and math.isnan(value):  # Score.unscored(): excluded from metrics
            src.warn("unscored", f"{where} is NaN (unscored; read as unscored)")
            return None
        return _number_verdict(float(value), str(value), scorer, smap, where, src)
    if value is None:
        src.warn("unscored", f"{where} is null (read as unscored)")
        return None
    shown = f"an object of several values ({', '.join(map(str, value))})" if isinstance(value, dict) else describe(value)
    raise src.bad(
        f"{where} gave {shown}: inspect-log@1 reads one scalar value per scorer, "
        "not a list or an object of several values"
    )


def _number_verdict(value: float, shown: str, scorer: str, smap: dict[str, bool], where: str, src: Source) -> bool:
    mapped = _mapped_number(value, smap)
    if mapped is not None:
        return mapped
    if value in (0.0, 1.0):
        return value == 1.0
    raise src.bad(_msg(
        f"{where} gave {shown}, not 1 (right) or 0 (wrong): inspect-log@1 reads 0/1 scores; "
        f"map this value with <score_map> ({shown}=1 or {shown}=0) or name a 0/1 scorer"
    ))


def _chosen_scorer(log: Log, src: Source) -> str:
    names = sorted({n for s in log.samples if s.scores for n in s.scores})
    wanted = src.options.get("scorer")
    if wanted is not None:
        if str(wanted) not in names:
            listing = ", ".join(names) if names else "none (no sample is scored)"
            raise src.bad(_msg(f"no sample has the scorer {wanted!r} (<scorer>); scorers in this log: {listing}"))
        return str(wanted)
    if len(names) == 1:
        return names[0]
    if not names:
        errored = [s for s in log.samples if s.error is not None]
        if log.samples and len(errored) == len(log.samples):  # nothing to score: every sample failed
            first = errored[0]
            raise src.bad(f"every sample of this log errored without a score ({len(errored)} samples; "
                          f"{first.where}: sample {first.id} epoch {first.epoch}: "
                          f"{first.error.splitlines()[0] if first.error else ''}): nothing to read; rerun them "
                          "(inspect eval-retry LOG)")
        raise src.bad("no sample of this log has scores: score it first (inspect score LOG)")
    raise src.bad(_msg(f"the log holds {len(names)} scorers ({', '.join(names)}); name the one that says right or wrong with <scorer>"))


def _chosen_epoch(log: Log, src: Source) -> int | None:
    wanted = src.options.get("epoch")
    if wanted is None:
        return None
    try:
        epoch = int(wanted)
    except (TypeError, ValueError):
        raise UsageError(_msg(f"<epoch> must be a whole number >= 1, got {wanted!r}")) from None
    present = sorted({s.epoch for s in log.samples})
    if len(present) == 1 and epoch != present[0]:
        # --epoch picks among several epochs; a log run once is read whole (e.g. the other side of an edge)
        src.warn("single-epoch", f"the log holds epoch {present[0]} only: read whole (--epoch {epoch} picks among several)")
        return present[0]
    if epoch not in present:
        raise src.bad(_msg(f"no sample has epoch {epoch} (<epoch>); epochs in this log: {', '.join(map(str, present)) or 'none'}"))
    return epoch


def _records(src: Source) -> Iterator[Record]:
    """inspect_ai eval logs: the ``.eval`` zip (``header.json`` or
    ``_journal/start.json``, one ``samples/<id>_epoch_<n>.json`` per sample
    and epoch) or the ``.json`` log (one object: ``version``, ``status``,
    ``eval``, ``plan``, ``results``, ``stats``, ``samples``). Taken from each
    sample: ``id``, ``epoch``, ``scores`` (scorer name -> ``{value, answer,
    explanation, ...}``: only ``value``) and ``error``; all else is ignored.
    Read through inspect_ai's ``read_eval_log`` when inspect_ai is installed
    (``pip install 'replicate-audit[inspect]'``) and the file is named
    ``.eval``/``.json``, else through the built-in reader of that layout;
    each file's provenance says which (``reader_options.log_reader``).

    Key: the sample ``id`` (compared as a string). Trial: the ``epoch``. A
    log run with several epochs holds several trials per sample: the judge
    commands refuse it unless ``--epoch N`` keeps one; ``replicate import``
    reads them all into a trials table.

    Verdict: the value of the scorer named by ``--inspect-scorer`` (needed when the
    samples carry several): ``C`` right; ``I`` and ``N`` (no answer) wrong;
    ``yes``/``true`` and ``no``/``false`` (any case), ``1``/``0`` (numbers,
    booleans or numeric strings) as 1 and 0, as inspect_ai's value_to_float
    reads them. ``P`` (partial, 0.5 to inspect_ai), other numbers and other
    strings are refused unless ``--score-map`` says what they count as
    (``--score-map P=0``, ``--score-map 0.5=1,A=1,B=0``; entries VALUE=1 or
    VALUE=0, matched before the defaults). Null and NaN (``Score.unscored``)
    are read as unscored, warned. Lists and objects of several values are
    refused. inspect_ai leaves an unscored sample out of its metrics, so the
    default unparsed policy of these runs is ``intersect`` (the source's
    rule); ``--unparsed wrong`` is printed as a departure from it. The
    harness's own figure: the ``accuracy`` (or ``mean``) the log's header
    gives the chosen scorer (``results.scores``), for a log of one epoch,
    shown by ``parse`` and ``compare`` beside the recomputed accuracy. A sample that errored without a score is read as unscored
    (warned, with the error); a log whose status is not ``success`` is read
    as it is, warned.

    Refused, naming file, zip member (or ``samples[i]``) and sample: a
    truncated or corrupt zip (or member), a log format version other than 1
    or 2 (the versions known), a zip with neither ``header.json`` nor
    ``_journal/start.json``, a member or log that is not JSON, a sample
    lacking ``id`` or ``epoch``, a scorer no sample has (listing those that
    exist), several scorers and no ``--inspect-scorer``, a sample without scores
    that did not error, a sample lacking the chosen scorer (listing its
    own), the same (id, epoch) twice, an ``--epoch`` no sample has (listing
    the epochs). ``--cluster metadata.FIELD`` appends each sample's
    ``metadata`` FIELD (a string or an integer) to its key, named
    ``metadata.FIELD``, for the cluster bootstrap; a sample lacking it is
    refused."""
    log = read_log(src)
    src.lines_total = len(log.samples)
    scorer = _chosen_scorer(log, src)
    epoch = _chosen_epoch(log, src)
    smap = _score_map(src.options)
    src.used.update(scorer=scorer)
    if epoch is not None:
        src.used["epoch"] = str(epoch)
    if smap:
        src.used["score_map"] = ",".join(f"{k}={int(v)}" for k, v in smap.items())
    src.used.update(log_reader=log.via, log_version=str(log.version))
    if log.model:
        src.about["model"] = log.model
    if log.task:
        src.about["task"] = log.task
    if len({s.epoch for s in log.samples}) == 1:  # the header's metrics reduce over epochs: one epoch compares
        header = f"{'header.json' if log.kind == 'eval' else 'the log'}: results"
        src.harness.extend(HarnessFigure(f"{metric} of scorer {name}", value, header)
                           for name, metric, value in log.metrics if name == scorer and metric in ("accuracy", "mean"))
    if log.status != "success":
        shown = "not written (the eval has not finished)" if log.status is None else repr(log.status)
        src.warn("log-status", f"the log's status is {shown}: its {len(log.samples)} samples are read as they are")
    group = asked_field(src, "metadata.")
    seen: dict[tuple[str, int], str] = {}
    for line, s in enumerate(log.samples, 1):
        where = (s.id, s.epoch)
        if where in seen:
            raise src.bad(f"{s.where}: sample {s.id} epoch {s.epoch} is given again (first in {seen[where]})")
        seen[where] = s.where
        if epoch is not None and s.epoch != epoch:
            continue
        key = (s.id,) if group is None else \
            (s.id, grouping(src, s.metadata, group, "metadata.", f"{s.where}: sample {s.id} epoch {s.epoch} ", None))
        if s.scores is None or scorer not in s.scores:
            if s.error is not None:
                src.warn("sample-error", f"{s.where}: sample {s.id} epoch {s.epoch} errored without a {scorer!r} score "
                         f"(read as unscored): {s.error.splitlines()[0] if s.error else ''}")
                yield Record(key, line, correct=None, trial=s.epoch)
                continue
            if not s.scores:
                raise src.bad(f"{s.where}: sample {s.id} epoch {s.epoch} has no scores (and no error)")
            raise src.bad(f"{s.where}: sample {s.id} epoch {s.epoch} lacks the scorer {scorer!r}; "
                          f"its scorers: {', '.join(sorted(s.scores))}")
        yield Record(key, line, correct=_verdict(s.scores[scorer], scorer, smap, s, src), trial=s.epoch)


INSPECT_LOG = Reader(
    "inspect-log@1",
    "inspect_ai eval logs (.eval zip or .json): sample id and epoch, correctness from one scorer (--inspect-scorer).",
    _sniff,
    _records,
    yields="verdicts",
    key_names=("sample_id",),
    has_gold=False,
    decided="inspect-score",
    format="inspect-log",
    details=inspect.cleandoc(_records.__doc__ or ""),
    trial_option="epoch",
    options=("scorer", "score_map", "epoch"),
    cluster_prefix="metadata.",
    source_rule=SourceRule("intersect", "inspect_ai leaves an unscored sample (null, NaN, an error) out of its metrics"),
)
