"""AlpacaEval annotations: ``alpacaeval-annotations@1`` (reader) and ``alpacaeval-preference@1`` (parser).

AlpacaEval writes ``results/<model>/<annotator>/annotations.json``: one JSON
array, an object per instruction with ``instruction``, ``output_1`` and
``generator_1`` (the baseline), ``output_2`` and ``generator_2`` (the model
evaluated), ``annotator``, ``preference`` (1: output_1 preferred, 2:
output_2 preferred, 1.5 a draw, fractional for weighted annotators; ``null``
when the annotator gave none), ``raw_completion`` and others. The reader gives
each annotation's recorded ``preference`` as its output, read by
``alpacaeval-preference@1`` as AlpacaEval's ``metrics/helpers.py`` reads it.
Registered through the ``replicate.readers`` and ``replicate.parsers`` entry
points ``alpacaeval``.
"""

from __future__ import annotations

import inspect
import math
from typing import Iterator

import orjson

from replicate.labels import LabelSet
from replicate.parsing import Parser
from replicate.reading import Match, Reader, ReadOptions, Record, Source
from replicate.readkit import describe
from replicate_parsers.lm_eval_layout import array_objects

#: AlpacaEval's preferences, discrete: output_1 preferred, a draw, output_2 preferred (an ordered scale).
PREFERENCES = LabelSet.named_ordinal("1", "1.5", "2")
_KEYS = ("instruction", "generator_1", "generator_2")


# alpacaeval-preference@1 --------------------------------------------------------
def _value(text: str) -> float | None:
    try:
        p = float(text)
    except ValueError:
        return None
    if p == 0:
        p = 1.5  # AlpacaEval's old encoding of a draw
    if math.isnan(p) or not 1 <= p <= 2:
        return None  # not a preference: AlpacaEval drops it
    return p


def _label(text: str) -> int | None:
    p = _value(text)
    if p is None:
        return None
    return 1 if p == 1.5 else (0 if p < 1.5 else 2)


_label.__doc__ = """\
A preference as AlpacaEval's `metrics/helpers.py` reads it, given as the
number the annotation recorded (`alpacaeval-annotations@1` writes the
`preference` field as text: `1`, `2`, `1.5`, `1.73`).

- A preference of 0 is a draw (AlpacaEval's old encoding): 1.5.
- A number outside 1-2 (or not a number) is not a preference: unparsed,
  as AlpacaEval drops it ("drop ... outputs that are not preferences").

The score (what `replicate pairwise` averages) is the preference itself;
AlpacaEval's `win_rate` is the mean of preference - 1, times 100. The label is
the discrete preference of AlpacaEval's `discrete_win_rate`
(`ZeroOneScoringRule`): `1.5` a draw, below 1.5 `1` (output_1, the
baseline, preferred), above `2` (output_2, the model); so 1.3 is `1` and
1.7 is `2`. The label set is the ordered scale `1` < `1.5` < `2`.

AlpacaEval's discrete reading rounds before it checks the range, so a
stray 2.4 would count there as a win of output_2; here, as in AlpacaEval's
`win_rate`, it is no preference. AlpacaEval never writes one.
"""

PREFERENCE = Parser(
    "alpacaeval-preference@1",
    "AlpacaEval preference as AlpacaEval reads it: 1-2 (0 a draw, 1.5); label 1, 1.5 or 2 as its discrete rate rounds.",
    _label,
    _label.__doc__.strip(),
    labels=PREFERENCES.codes,
    label_set=PREFERENCES,
    value=_value,
)


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
    annotations = array_objects(src, "annotation")
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

#: The entry points ``alpacaeval`` load these lists.
PARSERS: list[Parser] = [PREFERENCE]
READERS: list[Reader] = [ANNOTATIONS]
