"""``number@1``: a label that is already a number, written as text (``3``, ``3.0``).

Some released judge files store the judge's grade itself, not the judge's
raw output: a tool has already read the grade, and the output field holds
``"3"`` or ``"3.0"``. This parser reads such a field as written, and nothing
more: any other text is unparsed, never searched for a digit.
"""

from __future__ import annotations

import re

from replicate.labels import LabelSet
from replicate.parsing import Parser

#: The grades number@1 accepts: whole numbers 0-10 (a 0-3 relevance grade, a 1-5 or 1-10 rating).
NUMBER_RANGE = LabelSet.ordinal(0, 10)

# ASCII digits, optionally a decimal point followed by zeros only; nothing else.
_WHOLE = re.compile(r"([0-9]+)(?:\.0+)?", re.ASCII)


def _number(text: str) -> int | None:
    m = _WHOLE.fullmatch(text.strip(" \t\r\n"))
    if m is None:
        return None
    value = int(m.group(1))
    return value if NUMBER_RANGE.low <= value <= NUMBER_RANGE.high else None


_number.__doc__ = """\
The whole text, after removing surrounding spaces, tabs and line breaks, is a
whole number written with ASCII digits, optionally followed by a decimal point
and zeros only: `3`, `03`, `3.0`, `3.00` and ` 3\\n` read as 3.

Unparsed: a number outside 0-10 (`11`, `-1`), a fractional number as written
(`2.5`, `3.0000000000000001`, `3.`), a sign (`+3`), an exponent (`1e1`),
digits that are not ASCII (`\uff13`, `\u0663`), a number with anything around it
(`Rating: 3`, `3/10`, `3 points`, `"3"`), two numbers (`3 4`), words
(`three`, `true`, `nan`) and the empty text.

The label set is ordinal 0-10, so a 0-3 or 1-10 scale's grades keep their
values; when the judge's scale is narrower, MAE and the matrix normalise by
0-10 unless `--scale` says otherwise.
"""

NUMBER = Parser(
    "number@1",
    "A label already a number (3, 3.0): whole numbers 0-10 as written; anything else unparsed.",
    _number,
    _number.__doc__.strip(),
    labels=tuple(range(11)),
    label_set=NUMBER_RANGE,
)

#: The entry point ``number = "replicate_parsers.number:PARSERS"`` loads this list.
PARSERS: list[Parser] = [NUMBER]
