"""MT-Bench pairwise judgments in FastChat's two-score format ``[[rating_a,rating_b]]``: ``mtbench-pair-scores@1``.

FastChat's ``run_judge_pair`` (``fastchat/llm_judge/common.py``) reads a
pairwise judgment one of two ways, chosen by the judge prompt's
``output_format``: ``[[A]]`` (``mtbench-pair@1``) or ``[[rating_a,rating_b]]``,
two scores from which the verdict follows (this module). Registered through
the ``replicate.parsers`` entry point ``mtbench_scores``; pinned by
``tests/golden/mtbench-pair-scores.jsonl``. Released versions never change.
"""

from __future__ import annotations

import re

from replicate.parsing import Parser
from replicate_parsers.mtbench import PAIR_VERDICTS, literal_number

# The released patterns, as FastChat compiles them (its strings are not raw, but every escape
# in them is kept as written, so they equal these): \d and \s are Unicode classes.
_TWO = re.compile(r"\[\[(\d+\.?\d*),\s?(\d+\.?\d*)\]\]")
_TWO_BACKUP = re.compile(r"\[(\d+\.?\d*),\s?(\d+\.?\d*)\]")
#: FastChat's TIE_DELTA: scores this close (or closer) are a tie.
TIE_DELTA = 0.1
_A, _B, _TIE = (PAIR_VERDICTS.code(name) for name in PAIR_VERDICTS.names)


def _scores(text: str) -> int | None:
    m = _TWO.search(text)
    if m is None:
        m = _TWO_BACKUP.search(text)
        if m is None:
            return None
    a, b = literal_number(m.group(1)), literal_number(m.group(2))
    if a is None or b is None:
        return None
    try:
        close = abs(a - b) <= TIE_DELTA
    except OverflowError:  # an int too large for a float set against a float: FastChat raises too
        return None
    if close:
        return _TIE
    return _A if a > b else _B


_scores.__doc__ = """\
The verdict of an MT-Bench pairwise judgment given as two scores, found as
FastChat's `run_judge_pair` (`fastchat/llm_judge/common.py`, output format
`[[rating_a,rating_b]]`) finds it. Labels: `A` (the first answer shown is
better), `B` (the second), `tie`, the label set of `mtbench-pair@1`.
"number" is one or more digits, an optional dot, then any digits (`8`, `8.`,
`8.5`); a digit is any Unicode decimal digit, as in the released pattern;
"space" is at most one whitespace character (any Unicode whitespace, a line
break too).

1. The first place where `[[`, number, `,`, optional space, number, `]]`
   occurs (case and surrounding text do not matter). If found, it decides: no
   later pair is looked at.
2. Only if there is none: the first place where `[`, number, `,`, optional
   space, number, `]` occurs (which is also the `[8, 7]` inside `[[8, 7]`).
3. Otherwise unparsed (FastChat records the winner "error").

FastChat reads each number with `ast.literal_eval` and then decides, with
its `TIE_DELTA` of 0.1, in this order:

- `abs(a - b) <= 0.1`: `tie` (`[[8, 8]]`, `[[8.05, 8]]`);
- otherwise `a > b`: `A`;
- otherwise: `B`.

The comparison is Python's float arithmetic, exactly as FastChat's:
`[[8.1, 8]]` is a tie (8.1 - 8 is 0.0999...), but `[[1.1, 1]]` is `A`
(1.1 - 1 is 0.10000000000000009). There is no range check: `[[0, 11]]` is
`B`, `[[100, 99]]` is `A`. Unparsed where `literal_eval` raises, which makes
the released script stop the judging run: an integer with a leading zero
(`[[07, 8]]`; `[[07.0, 8]]` reads as 7.0), digits that are not ASCII
(`[[\u0668, 7]]`), an integer of more than 4300 digits (Python 3.11 and later),
and an integer too large for a float set against a float.

Readings worth knowing (all pinned by golden tests):

- The first pair wins, even when a later one is the verdict:
  `[[8, 7]] ... [[3, 9]]` reads as `A`.
- Rule 2 runs only when rule 1 finds nothing, and then takes any bracketed
  pair: a list `[1, 2]` before `Scores: [8, 7]` reads as `B`, but
  `[1, 2] ... [[8, 7]]` reads as `A`.
- Spacing is strict: `[[8,7]]`, `[[8, 7]]` and `[[8,\\n7]]` match; `[[8 , 7]]`,
  `[[8,  7]]` (two spaces) and `[[ 8, 7]]` do not (nor do `[[8/10, 7/10]]`,
  `[[-1, 5]]` or `[[8, 7, 6]]`).
- The verdict is on the order shown. In a FastChat pairwise record
  `g1_judgment` shows `model_1` as A and `g2_judgment` shows `model_2` as A
  (read with `fastchat-pair@1`, whose keys name the models in that order).
- The single-answer format `[[7]]` is not a pair: unparsed here (read it with
  `mtbench-single@1`).
"""

PAIR_SCORES = Parser(
    "mtbench-pair-scores@1",
    "MT-Bench two-score pair verdict as FastChat reads it: first [[a, b]], else [a, b]; tie within 0.1.",
    _scores,
    _scores.__doc__.strip(),
    labels=PAIR_VERDICTS.codes,
    label_set=PAIR_VERDICTS,
)

#: The entry point ``mtbench_scores = "replicate_parsers.mtbench_scores:PARSERS"`` loads this list.
PARSERS: list[Parser] = [PAIR_SCORES]
