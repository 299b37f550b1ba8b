"""The reader toolkit, records half: JSON lines of a :class:`~replicate.reading.contract.Source` and the checks of a
flat JSONL record (public; see :mod:`replicate.reading.stream` and ``docs/writing-a-reader.md``).

:func:`json_values` and :func:`json_objects` (every line of a source as JSON, a
blank line skipped with a warning, a torn last line or a line that is not JSON
an error naming file and line), :data:`BLANK`, :class:`FieldSpec` (which fields
hold key, gold and output), :func:`gold_int`, :func:`checked_record` (key,
gold and output of one flat record, or the error naming what is wrong).
Nothing here imports ``replicate.judge``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from replicate.errors import BadInput, Message, Param
from replicate.labels import GOLD_MAX, LabelSet, gold_code, gold_problem
from replicate.reading.stream import KEY_SEP, bad_json_line, describe, key_text, line_chunks, lines_of

__all__ = ["BLANK", "FieldSpec", "gold_int", "json_line", "json_values", "json_objects", "checked_record",
           "check_repeated_fields", "repeated_fields", "record_fields", "KeptPairs", "read_keeping_pairs"]

#: What :func:`json_line` gives for a blank line.
BLANK = object()


class _Warns(Protocol):
    def warn(self, code: str, message: str, *, path: object = None, line: int | None = None) -> None: ...


@dataclass(frozen=True)
class FieldSpec:
    """Which fields of a flat JSONL record hold what.

    ``key_fields`` identify an item (values compared as strings: the number
    19335 and the string "19335" are the same key); ``gold_field`` holds the
    reference grade; the first of ``output_fields`` present in a file's first
    record is that file's output field. ``thought_fields`` and
    ``rewritten_field`` are only counted and reported.
    """

    key_fields: tuple[str, ...] = ("query_id", "corpus_id")
    gold_field: str = "original_qrel_score"
    output_fields: tuple[str, ...] = ("model_output", "gemini_output")
    thought_fields: tuple[str, ...] = ("model_thought", "gemini_thought")
    rewritten_field: str = "original_output"

    def __post_init__(self) -> None:
        for name in ("key_fields", "output_fields", "thought_fields"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
        if not self.key_fields:
            raise ValueError("key_fields must name at least one field")
        if not self.output_fields:
            raise ValueError("output_fields must name at least one field")
        for name in ("key_fields", "output_fields", "thought_fields"):
            if not all(isinstance(f, str) and f for f in getattr(self, name)):
                raise ValueError(f"{name} must be non-empty field names")

    def to_json(self) -> dict:
        return {
            "key_fields": list(self.key_fields),
            "gold_field": self.gold_field,
            "output_fields": list(self.output_fields),
        }


def gold_int(value: Any) -> int | None:
    """A gold grade as an int: 2 and 2.0 give 2; 2.5, -1, "2", true, null give None.

    Grades are non-negative: a negative one could not be told apart from the
    unparsed marker (-1) in label arithmetic.
    """
    t = type(value)
    if t is int:
        v = value
    elif t is float and value.is_integer():
        v = int(value)
    else:
        return None
    return v if 0 <= v <= GOLD_MAX else None


def json_line(path: Path, lineno: int, line: bytes, torn: bool, diag: _Warns) -> Any:
    """One line as a JSON value, or :data:`BLANK` for a blank line (warned ``blank-line``); a line that is not
    JSON is a :class:`BadInput` (:func:`~replicate.reading.stream.bad_json_line`; ``torn``: the file's unterminated last line)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if not line.strip():
            diag.warn("blank-line", "blank line (skipped)", path=path, line=lineno)
            return BLANK
        raise bad_json_line(path, lineno, line, exc, torn=torn) from None


def field_pattern(name: str) -> bytes:
    """How the key ``name`` is written in JSON text (``"model_output"``): counted to find a key written twice."""
    return orjson.dumps(name)


class KeptPairs(dict):
    """A JSON object as read by :func:`keeping_pairs`: :attr:`repeated` holds every value of each of its own keys
    written more than once (the dict keeps the last, as JSON parsers do)."""

    __slots__ = ("repeated",)
    repeated: dict[str, list[Any]]


_NO_REPEATS: dict[str, list[Any]] = {}  # shared by every object with no key written twice (never written to)
#: How deep orjson reads JSON (and so how deep a file it has read can be): Python's parser is given room for it.
_ORJSON_DEPTH = 1024


def keeping_pairs(items: list[tuple[str, Any]]) -> KeptPairs:
    """``object_pairs_hook`` for :func:`json.loads`: each object a :class:`KeptPairs`, its repeated keys noted
    on it (not on the objects around it: a key repeated inside a nested object is that object's)."""
    obj = KeptPairs(items)
    if len(obj) == len(items):
        obj.repeated = _NO_REPEATS
        return obj
    seen: dict[str, list[Any]] = {}
    for k, v in items:
        seen.setdefault(k, []).append(v)
    obj.repeated = {k: vs for k, vs in seen.items() if len(vs) > 1}
    return obj


def read_keeping_pairs(text: bytes | str) -> Any:
    """``text`` as JSON, every object a :class:`KeptPairs`; None when it is not JSON (the reader names that).

    Python's parser recurses once a level: text nested as deep as orjson reads (1,024 levels) is read with
    the recursion limit raised for it, so a key written twice beside a deep value is still found."""
    import json
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 2 * _ORJSON_DEPTH)
    try:
        return json.loads(text, object_pairs_hook=keeping_pairs)
    except (ValueError, RecursionError):
        return None
    finally:
        sys.setrecursionlimit(limit)


def repeated_fields(line: bytes, names: Iterable[str]) -> list[tuple[str, list[Any]]]:
    """Each of ``names`` written as a key more than once in the JSON object ``line`` (its own keys, not a
    nested object's), with its values.

    A JSON parser keeps one of two values of a repeated key and drops the other without a word; a key of
    the fields a reader takes (the output, gold, key fields) must not be resolved that way. The line is
    parsed again keeping every pair only when a name's text occurs twice in it, so ordinary lines cost
    one ``bytes.count`` per name.
    """
    wanted = [n for n in names if line.count(field_pattern(n)) > 1]
    if not wanted:
        return []
    obj = read_keeping_pairs(line)
    if not isinstance(obj, KeptPairs):
        return []  # not an object: the reader names that
    return [(n, obj.repeated[n]) for n in wanted if n in obj.repeated]


def check_repeated_fields(line: bytes, names: Iterable[str], path: Path, lineno: int, diag: _Warns) -> None:
    """A key of ``names`` written twice in one record: :class:`BadInput` when its values differ (which one is
    meant cannot be known), else a ``repeated-key`` warning (an error under ``--strict``)."""
    for name, values in repeated_fields(line, names):
        repeated_key(name, values, path, lineno, diag)


def repeated_key(name: str, values: list[Any], path: Path, lineno: int | None, diag: _Warns) -> None:
    """The key ``name`` written with ``values`` in one record: :class:`BadInput` when they differ (which one is
    meant cannot be known), else a ``repeated-key`` warning (an error under ``--strict``)."""
    shown = ", ".join(describe(v) if not isinstance(v, str) else repr(v[:40] + ("..." if len(v) > 40 else ""))
                      for v in values)
    if any(v != values[0] for v in values[1:]):
        raise BadInput(f"key {name!r} appears {len(values)} times in one record, with different values "
                       f"({shown}): which one is meant cannot be known; keep one", path=path, line=lineno)
    diag.warn("repeated-key", f"key {name!r} appears {len(values)} times in one record, with the same value",
              path=path, line=lineno)


def json_values(src: Any, fields: Iterable[str] = ()) -> Iterator[tuple[int, Any]]:
    """(1-based line, JSON value) for every non-blank line of a :class:`~replicate.reading.contract.Source`, streamed
    in chunks of whole lines; a blank line is skipped (warned, counted in ``src.skipped``). A key of
    ``fields`` (those the reader takes) written twice in one record is refused or warned
    (:func:`check_repeated_fields`)."""
    chunks = src.chunks() if hasattr(src, "chunks") else line_chunks([src.data], path=src.path)
    names = tuple(fields)
    for lineno, line, torn in lines_of(chunks):
        value = json_line(src.path, lineno, line, torn, src.diagnostics)
        if value is BLANK:
            src.skipped += 1
            continue
        if names:
            check_repeated_fields(line, names, src.path, lineno, src.diagnostics)
        yield lineno, value


def json_objects(src: Any, what: str = "", fields: Iterable[str] = ()) -> Iterator[tuple[int, dict]]:
    """(1-based line, object) for every line of a reader's :class:`~replicate.reading.contract.Source`.

    The loop every JSONL reader shares: :func:`json_values`, and a value that is
    not an object is an error (``what`` says what a line holds, e.g. " (one logged sample)").
    """
    for lineno, obj in json_values(src, fields):
        if not isinstance(obj, dict):
            raise src.bad(f"expected a JSON object{what}, got {describe(obj)}", lineno)
        yield lineno, obj


def _output_field(path: Path, obj: dict, fields: FieldSpec, lineno: int) -> str:
    for name in fields.output_fields:
        if name in obj:
            return name
    raise BadInput(
        Message(f"record has no output field: looked for {', '.join(map(repr, fields.output_fields))} "
                "(set the output field name, e.g. ", Param("output_fields"), "; a file of gold alone goes with ",
                Param("gold"), ")"),
        path=path,
        line=lineno,
    )


def record_fields(fields: FieldSpec) -> tuple[str, ...]:
    """The fields of a flat record a reader takes: key fields, gold field and the output fields."""
    return (*fields.key_fields, fields.gold_field, *fields.output_fields)


def checked_record(
    obj: object, fields: FieldSpec, out_field: str | None, path: Path, lineno: int,
    gold_labels: LabelSet | None = None,
) -> tuple[str, int, str | None, str]:
    """(key, gold, output, output field) of one flat record, or a BadInput naming what is wrong.

    The key's parts are joined by :data:`~replicate.reading.stream.KEY_SEP`. ``out_field`` None: this is the
    file's first record, which decides the output field. ``gold_labels``: the label set gold is read
    against (:func:`~replicate.labels.gold_code`).
    """

    def bad(message: str) -> BadInput:
        return BadInput(message, path=path, line=lineno)

    if not isinstance(obj, dict):
        raise bad(f"expected a JSON object, got {describe(obj)}")
    parts = []
    for name in fields.key_fields:
        if name not in obj:
            raise bad(f"record lacks key field {name!r}")
        text = key_text(obj[name])
        if text is None:
            raise bad(f"key field {name!r} must be a string or an integer, got {describe(obj[name])}")
        parts.append(text)
    gf = fields.gold_field
    if gf not in obj:
        raise bad(f"record lacks gold field {gf!r}")
    gold = gold_code(obj[gf], gold_labels)
    if gold is None:
        if gold_labels is not None and (gold_labels.names or not gold_labels.is_ordinal):
            raise bad(f"gold field {gf!r}: {gold_problem(obj[gf], gold_labels)}")
        raise bad(f"gold field {gf!r} must be a non-negative integer grade (2 or 2.0, at most {GOLD_MAX}), got {describe(obj[gf])}")
    if out_field is None:
        out_field = _output_field(path, obj, fields, lineno)
    if out_field not in obj:
        raise bad(f"record lacks output field {out_field!r}")
    output = obj[out_field]
    if output is not None and not isinstance(output, str):
        raise bad(f"output field {out_field!r} must be a string, got {describe(output)}")
    return KEY_SEP.join(parts), gold, output, out_field
