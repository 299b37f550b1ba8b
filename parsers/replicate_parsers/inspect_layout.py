"""The layout of inspect_ai eval logs, read with or without inspect_ai (for ``inspect-log@1``).

inspect_ai writes two kinds of log file (``inspect_ai/log/_recorders``):

``.eval``: a zip archive
    ``_journal/start.json`` (``version``, ``eval``, ``plan``; written first),
    ``samples/<id>_epoch_<n>.json`` (one ``EvalSample`` each: ``id``,
    ``epoch``, ``input``, ``target``, ``messages``, ``output``, ``scores``,
    ``metadata``, ``events``, ``error``, ...), ``_journal/summaries/<k>.json``
    (sample summaries as they were flushed) and, once the eval finished,
    ``summaries.json``, ``reductions.json`` (scores reduced over epochs) and
    ``header.json`` (the ``EvalLog`` without samples: ``version``, ``status``,
    ``eval``, ``plan``, ``results``, ``stats``, ``error``).
``.json``: one JSON object
    the ``EvalLog``: ``version``, ``status``, ``eval``, ``plan``, ``results``,
    ``stats``, ``error``, ``samples`` (a list of ``EvalSample``),
    ``reductions``.

A sample's ``scores`` maps a scorer's name to its ``Score`` (``value``,
``answer``, ``explanation``, ``metadata``). Only ``id``, ``epoch``, each
score's ``value`` and ``error`` are taken; everything else is ignored.

:func:`read_log` reads a log through inspect_ai's own ``read_eval_log`` when
inspect_ai is installed (and the file is named as inspect_ai expects: ``.eval``
or ``.json``), else through the small reader of the layout below; the result
says which. Both give samples in inspect_ai's order (epoch, then id).
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from replicate.errors import BadInput
from replicate.reading.contract import Source
from replicate.reading.stream import MAX_MEMBER, MAX_RATIO, RATIO_FROM, describe

#: Log format versions this reader knows: 1 (2024, before ``.eval``) and 2 (what inspect_ai writes today).
KNOWN_VERSIONS = (1, 2)
ZIP_MAGIC = b"PK\x03\x04"
#: The zip compression method number of zstandard (what inspect_ai writes today; zipfile reads it from Python 3.14).
ZIP_ZSTANDARD = 93
HEADER_JSON = "header.json"
START_JSON = "_journal/start.json"
SAMPLES_DIR = "samples/"
#: ``log_reader`` option value that keeps inspect_ai out even when it is installed (tests, comparisons).
BUILTIN = "builtin"
#: A zip member is refused when it would inflate to more than MAX_MEMBER bytes (its declared size, and what
#: is read: never more), or, once over RATIO_FROM bytes, to more than MAX_RATIO times its compressed size:
#: the toolkit's bounds (:mod:`replicate.reading.stream`), the same as a ``.gz`` file's.


@dataclass(frozen=True, slots=True)
class LogSample:
    """What ``inspect-log@1`` takes from one sample of a log."""

    id: str
    epoch: int
    scores: dict[str, Any] | None  # scorer name -> the Score's value; None: the sample has no scores
    error: str | None  # the error that halted the sample, if any
    where: str  # the zip member or JSON path holding it, for messages
    sort_id: str = ""  # inspect_ai's ordering of ids: integers zero-filled (2 before 10), strings as they are
    metadata: Any = None  # the sample's ``metadata`` as logged (read only by ``--cluster metadata.FIELD``)


@dataclass(frozen=True, slots=True)
class Log:
    kind: Literal["eval", "json"]
    version: int
    status: str | None  # None: no header (an .eval whose eval has not finished)
    samples: list[LogSample]
    via: str  # "built-in" or "inspect_ai <version>"
    model: str | None = None  # eval.model, e.g. "openai/gpt-4o"
    task: str | None = None  # eval.task
    #: the header's results: (scorer name, metric name, value as written), e.g. ("match", "accuracy", "0.8")
    metrics: tuple[tuple[str, str, str], ...] = ()


def _eval_names(header: Any) -> tuple[str | None, str | None]:
    """(eval.model, eval.task) of a log header, where they are strings."""
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        return None, None
    model, task = spec.get("model"), spec.get("task")
    return (model if isinstance(model, str) and model else None, task if isinstance(task, str) and task else None)


def header_metrics(header: Any) -> tuple[tuple[str, str, str], ...]:
    """(scorer, metric, value) of every numeric metric in a log header's ``results.scores``."""
    results = header.get("results") if isinstance(header, dict) else None
    scores = results.get("scores") if isinstance(results, dict) else None
    out = []
    for s in scores if isinstance(scores, list) else ():
        metrics = s.get("metrics") if isinstance(s, dict) else None
        if not isinstance(s.get("name"), str) or not isinstance(metrics, dict):
            continue
        for name, m in metrics.items():
            value = m.get("value") if isinstance(m, dict) else None
            if type(value) in (int, float):
                out.append((s["name"], str(name), repr(value)))
    return tuple(out)


def _loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        # Python's json writer (and so inspect_ai's) may write NaN and Infinity, which orjson refuses
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError("nested too deeply (thousands of arrays or objects within each other)") from None


def _order(s: LogSample) -> tuple[int, str]:
    # inspect_ai's sort_samples: epoch, then the id
    return s.epoch, s.sort_id


def _sort_id(sid: int | str) -> str:
    return sid if isinstance(sid, str) else str(sid).zfill(20)


def _sample(obj: Any, where: str, src: Source) -> LogSample:
    if not isinstance(obj, dict):
        raise src.bad(f"{where}: expected a JSON object (one sample), got {describe(obj)}")
    for name in ("id", "epoch"):
        if name not in obj:
            raise src.bad(f"{where}: sample lacks {name!r}")
    sid, epoch = obj["id"], obj["epoch"]
    if type(sid) not in (int, str):
        raise src.bad(f"{where}: sample 'id' must be an integer or a string, got {describe(sid)}")
    if type(epoch) is not int or epoch < 1:
        raise src.bad(f"{where}: sample {sid!r}: 'epoch' must be a whole number >= 1, got {describe(epoch)}")
    if "score" in obj and "scores" not in obj:
        raise src.bad(
            f"{where}: sample {sid!r} has the single 'score' field of early (2024) inspect logs; "
            "inspect-log@1 reads 'scores' (install inspect_ai, which converts old logs, or rewrite the log with it)"
        )
    raw_scores = obj.get("scores")
    scores: dict[str, Any] | None = None
    if raw_scores is not None:
        if not isinstance(raw_scores, dict):
            raise src.bad(f"{where}: sample {sid!r}: 'scores' must be an object (scorer name -> score), got {describe(raw_scores)}")
        scores = {}
        for name, score in raw_scores.items():
            if not isinstance(score, dict) or "value" not in score:
                raise src.bad(f"{where}: sample {sid!r}: score {name!r} must be an object with a 'value', got {describe(score)}")
            scores[name] = score["value"]
    error = obj.get("error")
    message = None
    if error is not None:
        message = str(error.get("message", "")) if isinstance(error, dict) else str(error)
    return LogSample(str(sid), epoch, scores, message, where, _sort_id(sid), obj.get("metadata"))


def _version(header: Any, where: str, src: Source) -> int:
    if not isinstance(header, dict):
        raise src.bad(f"{where}: expected a JSON object (the log header), got {describe(header)}")
    version = header.get("version")
    if type(version) is not int:
        raise src.bad(f"{where}: the log has no format 'version' (an inspect_ai log starts with one)")
    if version not in KNOWN_VERSIONS:
        known = ", ".join(map(str, KNOWN_VERSIONS))
        raise src.bad(
            f"{where}: inspect log format version {version} is not known to inspect-log@1 (known: {known}); "
            "a newer inspect_ai wrote it: install that inspect_ai so the log is read through it"
        )
    return version


def _zstd_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, src: Source) -> bytes:
    """A zstandard-compressed member (what inspect_ai writes today) on a Python whose zipfile lacks zstd."""
    try:
        import zstandard  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        raise src.bad(
            f"member {info.filename}: compressed with zstandard (as inspect_ai writes .eval logs today), which this "
            "Python's zipfile cannot undo: install the 'zstandard' package, or inspect_ai (the 'inspect' extra)"
        ) from None
    fp = zf.fp
    assert fp is not None
    fp.seek(info.header_offset)
    local = fp.read(30)
    if len(local) < 30 or local[:4] != ZIP_MAGIC:
        raise zipfile.BadZipFile("bad local file header")
    start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
    fp.seek(start)
    packed = fp.read(info.compress_size)
    if len(packed) != info.compress_size:
        raise zipfile.BadZipFile("member data cut short")
    try:
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(packed), read_across_frames=True).read(
            info.file_size + 1)  # never more than declared (and checked): a lying header cannot inflate it
    except zstandard.ZstdError as exc:
        raise zipfile.BadZipFile(f"zstandard: {exc}") from None
    if zlib.crc32(data) != info.CRC or len(data) != info.file_size:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
    return data


def check_members(zf: zipfile.ZipFile, src: Source) -> None:
    """Refuse a member whose declared size is over :data:`MAX_MEMBER` or expands over :data:`MAX_RATIO` times.

    zipfile reads a member up to its declared size and checks its CRC, so the declared size bounds what is
    inflated; the zstandard path below reads no more than it either.
    """
    for info in zf.infolist():
        big = info.file_size > MAX_MEMBER
        if big or (info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1)):
            why = (f"more than {MAX_MEMBER >> 30} GiB" if big else
                   f"{info.file_size // max(info.compress_size, 1):,} times its compressed size, more than {MAX_RATIO:,}")
            raise src.bad(f"member {info.filename}: would inflate to {info.file_size:,} bytes ({why}): "
                          "refused as a zip bomb, not an inspect log")


def _member(zf: zipfile.ZipFile, name: str, src: Source) -> Any:
    try:
        try:
            data = zf.read(name)
        except NotImplementedError:
            info = zf.getinfo(name)
            if info.compress_type != ZIP_ZSTANDARD:
                raise
            data = _zstd_member(zf, info, src)
    except NotImplementedError as exc:  # another compression method
        raise src.bad(f"member {name}: cannot be decompressed here ({exc}); install inspect_ai to read this log") from None
    except BadInput:  # already says what is wrong (zstandard missing), not a damaged member
        raise
    except Exception as exc:  # zipfile (or a zstd plugin patched into it) raises many kinds for damaged data
        raise src.bad(f"member {name}: corrupt zip member ({type(exc).__name__}: {exc})") from None
    try:
        return _loads(data)
    except ValueError as exc:
        raise src.bad(f"member {name}: not valid JSON ({exc})") from None


def _read_zip(src: Source) -> Log:
    try:
        zf = zipfile.ZipFile(io.BytesIO(src.data))
    except zipfile.BadZipFile as exc:
        raise src.bad(
            f"truncated or corrupt .eval zip ({exc}): its table of contents at the end is missing or damaged "
            "(an incomplete download or copy?)"
        ) from None
    with zf:
        check_members(zf, src)
        names = zf.namelist()
        present = set(names)
        if HEADER_JSON in present:
            where, header = HEADER_JSON, _member(zf, HEADER_JSON, src)
        elif START_JSON in present:
            where, header = START_JSON, _member(zf, START_JSON, src)
        else:
            raise src.bad(f"not an inspect .eval log: the zip holds neither {HEADER_JSON} nor {START_JSON}")
        version = _version(header, where, src)
        status = header.get("status") if where == HEADER_JSON else None
        samples: list[LogSample] = []
        seen: set[str] = set()
        for name in names:
            if not name.startswith(SAMPLES_DIR) or not name.endswith(".json"):
                continue
            if "/" in name[len(SAMPLES_DIR):]:
                raise src.bad(
                    f"member {name}: a sample split into several members (the chunked .eval2 layout), "
                    "which inspect-log@1 does not read"
                )
            if name in seen:
                raise src.bad(f"member {name} is in the zip twice (the log was appended to): which copy holds is unclear")
            seen.add(name)
            samples.append(_sample(_member(zf, name, src), f"member {name}", src))
    samples.sort(key=_order)
    metrics = header_metrics(header) if where == HEADER_JSON else ()
    return Log("eval", version, status, samples, "built-in", *_eval_names(header), metrics=metrics)


def _read_json(src: Source) -> Log:
    try:
        obj = _loads(src.data)
    except ValueError as exc:
        raise src.bad(f"not valid JSON: {exc} (a .json inspect log is one JSON object; was it cut short?)") from None
    version = _version(obj, "the log", src)
    if "eval" not in obj:
        raise src.bad("not an inspect log: the object has no 'eval'")
    raw = obj.get("samples")
    if raw is None:
        raise src.bad("the log holds no samples ('samples' is absent: was it written with log_samples off, or header only?)")
    if not isinstance(raw, list):
        raise src.bad(f"'samples' must be a list, got {describe(raw)}")
    samples = [_sample(s, f"samples[{i}]", src) for i, s in enumerate(raw)]
    samples.sort(key=_order)
    status = obj.get("status")
    return Log("json", version, status if isinstance(status, str) else None, samples, "built-in", *_eval_names(obj),
               metrics=header_metrics(obj))


def is_zip(data: bytes) -> bool:
    return data.startswith(ZIP_MAGIC) or data.startswith(b"PK\x05\x06")


def _via_inspect_ai(src: Source, kind: Literal["eval", "json"]) -> Log | None:
    """The log read through inspect_ai's read_eval_log, or None when that path does not apply."""
    if src.options.get("log_reader") == BUILTIN or src.path.suffix != f".{kind}":
        return None
    try:
        import inspect_ai  # type: ignore[import-not-found]
        from inspect_ai.log import read_eval_log  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        if src.path.stat().st_size != len(src.data):  # gzipped or otherwise not the bytes inspect_ai would read
            return None
    except OSError:  # standard input, a pipe
        return None
    via = f"inspect_ai {getattr(inspect_ai, '__version__', '?')}"
    try:
        log = read_eval_log(str(src.path))
    except Exception as exc:  # inspect_ai raises many kinds: the built-in reading names the problem exactly
        builtin = _read_zip(src) if kind == "eval" else _read_json(src)  # raises when the layout is broken too
        src.warn(
            "inspect-ai-failed",
            f"{via} could not read this log ({type(exc).__name__}: {exc}); read with the built-in reader of the layout",
        )
        return builtin
    samples = []
    for i, s in enumerate(log.samples or []):
        where = f"member samples/{s.id}_epoch_{s.epoch}.json" if kind == "eval" else f"samples[{i}]"
        scores = None if s.scores is None else {name: score.value for name, score in s.scores.items()}
        error = None if s.error is None else str(s.error.message)
        samples.append(LogSample(str(s.id), int(s.epoch), scores, error, where, _sort_id(s.id), s.metadata))
    samples.sort(key=_order)
    spec = getattr(log, "eval", None)
    model, task = getattr(spec, "model", None), getattr(spec, "task", None)
    results = getattr(log, "results", None)
    metrics = tuple(
        (str(s.name), str(name), repr(m.value))
        for s in (getattr(results, "scores", None) or ()) for name, m in (s.metrics or {}).items()
        if type(getattr(m, "value", None)) in (int, float)
    )
    return Log(kind, int(log.version), str(log.status), samples, via,
               model if isinstance(model, str) and model else None, task if isinstance(task, str) and task else None,
               metrics=metrics)


def read_log(src: Source) -> Log:
    """The samples of one inspect log (``.eval`` zip or ``.json``), through inspect_ai when it is installed."""
    kind: Literal["eval", "json"] = "eval" if is_zip(src.data) else "json"
    if kind == "eval":  # before inspect_ai inflates anything
        try:
            with zipfile.ZipFile(io.BytesIO(src.data)) as zf:
                check_members(zf, src)
        except zipfile.BadZipFile:
            pass  # the built-in reading names the damage
    log = _via_inspect_ai(src, kind)
    return log if log is not None else (_read_zip(src) if kind == "eval" else _read_json(src))


__all__ = ["KNOWN_VERSIONS", "BUILTIN", "Log", "LogSample", "read_log", "is_zip", "BadInput"]
