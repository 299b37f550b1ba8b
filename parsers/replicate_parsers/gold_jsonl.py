"""``gold-jsonl@1``: a JSONL file of gold labels only, read as ``--gold FILE``.

Human labels are often released apart from the judges' outputs: one JSON
object per item with the item's key and its gold label, e.g.
``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 2}`` or
``{"question_id": 81, "turn": 1, "winner": "tie"}``. The key and gold fields
are the command's ``--key-field`` and ``--gold-field``; a gold stored as text
is read through the label set of ``--parser`` like every other gold.
"""

from __future__ import annotations

import inspect
from typing import Iterator

import orjson

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, first_line
from replicate.reading.jsonl import FieldSpec, json_objects
from replicate.reading.stream import describe, key_text


def _fields(options: ReadOptions) -> FieldSpec:
    return options.fields if options.fields is not None else FieldSpec()


def _sniff(head: bytes, options: ReadOptions) -> Match:
    line = first_line(head)
    if line is None or not line.startswith(b"{"):
        return "no"
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "no"
    fields = _fields(options)
    if not isinstance(obj, dict) or fields.gold_field not in obj or not all(k in obj for k in fields.key_fields):
        return "no"
    # a judge file carries an output beside its gold (judge-jsonl@1 reads it)
    return "no" if any(o in obj for o in fields.output_fields) else "yes"


def _records(src: Source) -> Iterator[Record]:
    """One JSON object per line (``.jsonl`` or ``.jsonl.gz``) holding an item's
    key and its gold label and nothing a judge wrote, e.g.
    ``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 2}``.

    Key: the key fields (``--key-field``, default query_id and corpus_id;
    strings or integers, compared as strings). Gold: the gold field
    (``--gold-field``, default original_qrel_score): a whole-number grade
    (2, 2.0 or "2") or, with a ``--parser`` whose label set names its labels,
    one of those names ("A", "tie", "A>B"). Chosen by content when the first
    object has the key and gold fields and no output field. A file of gold
    only: give it with ``--gold`` (a run of it is refused). Refused, naming
    file and line: a line that is not a JSON object, a missing key or gold
    field, a key that is not a string or integer, a null or unknown gold, a
    key given twice with another gold, a torn last line. Other fields are
    ignored."""
    fields = _fields(src.options)
    for lineno, obj in json_objects(src, fields=(*fields.key_fields, fields.gold_field)):
        key = []
        for name in fields.key_fields:
            if name not in obj:
                raise src.bad(f"record lacks key field {name!r}", lineno)
            text = key_text(obj[name])
            if text is None:
                raise src.bad(f"key field {name!r} must be a string or an integer, got {describe(obj[name])}", lineno)
            key.append(text)
        gold = obj.get(fields.gold_field)
        if gold is None:
            what = "is null" if fields.gold_field in obj else "is missing"
            raise src.bad(f"gold field {fields.gold_field!r} {what}", lineno)
        yield Record(tuple(key), lineno, output=None, gold=gold)


GOLD_JSONL = Reader(
    "gold-jsonl@1",
    "JSONL of gold labels only (key fields and a gold field per line), for --gold FILE.",
    _sniff,
    _records,
    yields="outputs",
    format="gold-jsonl",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=(),
    gold_only=True,
    streams=True,
)
