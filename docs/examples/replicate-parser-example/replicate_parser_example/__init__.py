"""An example replicate parser plugin: the grade on the last ``Answer: N`` line."""

from __future__ import annotations

import re

from replicate.parsing import parser

# Compile once, at import: a parser runs on hundreds of thousands of outputs.
_ANSWER_LINE = re.compile(r"^[ \t]*answer[ \t]*:[ \t]*([0-3])[ \t]*$", re.IGNORECASE | re.MULTILINE)


@parser("answer-line@1", "Grade 0-3 from the last line that reads 'Answer: N'.", labels=(0, 1, 2, 3))
def answer_line(text: str) -> int | None:
    """The grade on the last line that consists of `Answer`, a colon and one
    digit 0-3 (case-insensitive, spaces and tabs allowed around each part).
    Any other output is unparsed: `Answer: 4`, `Answer: 2.5` and
    `The answer: 2 or 3` give no label.
    """
    found = _ANSWER_LINE.findall(text)
    return int(found[-1]) if found else None


#: What the entry point loads: a list, so later versions (answer-line@2) can be added beside @1.
PARSERS = [answer_line]
