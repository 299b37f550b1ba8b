"""AlpacaEval annotation files: ``alpacaeval-annotations@1``, read by ``alpacaeval-preference@1``.

Registered through the ``replicate.readers`` entry point ``alpacaeval``; see
``replicate_parsers.alpacaeval`` for the file and the reading.
"""

from __future__ import annotations

import inspect
from typing import Iterator

import orjson

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source
from replicate.reading.stream import describe

_KEYS = ("instruction", "generator_1", "generator_2")


# alpacaeval-annotations@1 ------------------------------------------------------
def _sniff(head: bytes, options: ReadOptions) -> Match:
    body = head.lstrip()
    if not body.startswith(b"["):
        return "no"
    if b'"preference"' in head and b'"generator_2"' in head and b'"instruction"' in head:
        return "yes"
    return "no"


def _text(obj: dict, name: str, src: Source, lineno: int) -> str:
    if name not in obj:
        raise src.bad(f"annotation lacks {name!r}", lineno)
    value = obj[name]
    if type(value) is not str:
        raise src.bad(f"{name!r} must be a string, got {describe(value)}", lineno)
    return value


def _records(src: Source) -> Iterator[Record]:
    """AlpacaEval annotation files (``results/<model>/<annotator>/annotations.json``, and the
    annotations its ``evaluate`` writes): one JSON array, an object per
    annotated instruction with ``instruction``, ``output_1``, ``generator_1``
    (the baseline), ``output_2``, ``generator_2`` (the model evaluated),
    ``annotator``, ``preference`` and others (``raw_completion``,
    ``price_per_example``, ``time_per_example``, ``dataset``).

    Key: (instruction, generator_1, generator_2). Raw output: the recorded
    ``preference`` as text (``1``, ``2``, ``1.5``, ``1.73``), read by
    ``--parser`` (``alpacaeval-preference@1``, AlpacaEval's reading); a
    ``null`` preference (no annotation) reads as unparsed, warned. The
    judge's ``raw_completion`` is not read: how a preference follows from it
    depends on the annotator's configuration (a weighted annotator reads token
    log-probabilities the file does not hold). No gold in the file: give
    another annotator's (or human) preferences with ``--gold``, a gold JSONL
    keyed the same way whose values are the label names ``1``, ``1.5``,
    ``2``. ``replicate pairwise`` prints the model's win rate against the baseline as AlpacaEval
    computes it. Refused, naming file and line: a file that is not one JSON
    array of objects (cut short, text after it), an annotation without
    instruction, generator_1, generator_2 or preference, any of the first
    three not a string, a preference that is neither a number nor null; the
    same key twice with another preference. Other fields are ignored."""
    from replicate_parsers.lm_eval_layout import array_objects  # here: listing readers needs no numpy

    annotations = array_objects(src, "annotation", (*_KEYS, "preference"))
    src.lines_total = len(annotations)
    for lineno, obj in annotations:
        key = tuple(_text(obj, name, src, lineno) for name in _KEYS)
        if "preference" not in obj:
            raise src.bad("annotation lacks 'preference'", lineno)
        value = obj["preference"]
        if value is None:
            src.warn("null-output", "'preference' is null (no annotation; read as unparsed)", lineno)
            yield Record(key, lineno, output=None)
            continue
        if type(value) not in (int, float):
            raise src.bad(f"'preference' must be a number or null, got {describe(value)}", lineno)
        yield Record(key, lineno, output=orjson.dumps(value).decode())


ANNOTATIONS = Reader(
    "alpacaeval-annotations@1",
    "AlpacaEval annotations.json: each instruction's recorded preference (baseline generator_1 vs generator_2).",
    _sniff,
    _records,
    yields="outputs",
    key_names=_KEYS,
    has_gold=False,
    format="alpacaeval-annotations",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=(),
    parsers=("alpacaeval-preference@1",),
)

#: The entry point ``alpacaeval = "replicate_parsers.alpacaeval_annotations:READERS"`` loads this list.
READERS: list[Reader] = [ANNOTATIONS]
