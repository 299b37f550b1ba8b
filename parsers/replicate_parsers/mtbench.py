"""MT-Bench judge outputs (FastChat's ``llm_judge``): single ratings and pairwise verdicts.

Two readings ship here, registered through the ``replicate.parsers`` entry
point ``mtbench`` (see pyproject.toml):

``mtbench-single@2``
    the rating of a single-answer judgment (``Rating: [[7]]``) exactly as
    FastChat's ``run_judge_single`` records it: 0 and 8.5 too (the number
    FastChat's ``show_result`` averages is :meth:`Parser.score`; the label is
    that number when it is a whole grade 0-10);
``mtbench-single@1``
    a stricter reading of the same judgments: FastChat's search, but only a
    whole rating 1-10 is a label (``[[0]]``, ``[[8.5]]``, ``[[11]]`` unparsed,
    where FastChat records 0, 8.5 and 11);
``mtbench-pair@1``
    the verdict of a pairwise judgment (``[[A]]``, ``[[B]]``, ``[[C]]`` for a
    tie), found as FastChat's ``run_judge_pair`` finds it.

Both reproduce the released script's search exactly (Python's :mod:`re` and
``in``); the rule texts below (``details``) say what the script would have
recorded where our labels cannot hold it. Released versions never change: a
behaviour change is a new name or a new ``@N``, pinned by the golden table in
``tests/golden/mtbench.jsonl``.
"""

from __future__ import annotations

import re

from replicate.labels import LabelSet
from replicate.parsing import Parser

#: MT-Bench's rating scale: whole numbers 1-10.
RATING_1_10 = LabelSet.ordinal(1, 10)
#: The whole ratings FastChat keeps on MT-Bench's scale: 0-10 (the judge's [[0]] is averaged in).
RATING_0_10 = LabelSet.ordinal(0, 10)
#: A pairwise verdict: the first answer shown (A), the second (B), or a tie (FastChat's [[C]]).
PAIR_VERDICTS = LabelSet.categorical("A", "B", "tie")

# mtbench-single@1 ---------------------------------------------------------------
# The released patterns, as FastChat compiles them: \d is any Unicode decimal digit.
_RATING = re.compile(r"\[\[(\d+\.?\d*)\]\]")
_RATING_BACKUP = re.compile(r"\[(\d+\.?\d*)\]")


#: Python's limit on the digits of an int read from text (3.11 and later raise past it).
_INT_DIGITS = 4300


def literal_number(number: str) -> int | float | None:
    """What ``ast.literal_eval(number)`` gives for a number FastChat's patterns matched, without evaluating
    anything; None where it raises.

    It raises on digits that are not ASCII, on an integer with a leading zero
    (``07``; ``00`` is 0) and, on Python 3.11 and later, on an integer of more
    than 4300 digits. A number with a dot is a float literal (``7.`` is 7.0;
    a float too large is ``inf``, as the literal is).
    """
    if not number.isascii():
        return None
    if "." in number:
        return float(number)
    if len(number) > 1 and number[0] == "0" and number.strip("0"):
        return None
    if len(number) > _INT_DIGITS:
        return None
    return int(number)


def _literal_rating(number: str) -> int | None:
    """What ``ast.literal_eval(number)`` gives, as a label 1-10: None where literal_eval raises (non-ASCII
    digits; an integer with a leading zero, ``07``), where the value is not whole (``7.5``) and where it lies
    outside 1-10 (``0``, ``11``)."""
    value = literal_number(number)
    if value is None or not float(value).is_integer():
        return None
    whole = int(value)
    return whole if RATING_1_10.low <= whole <= RATING_1_10.high else None


def _match(text: str) -> re.Match[str] | None:
    """The number FastChat's ``run_judge_single`` takes: the first ``[[N]]``, else the first ``[N]``."""
    m = _RATING.search(text)
    return m if m is not None else _RATING_BACKUP.search(text)


def _single(text: str) -> int | None:
    m = _match(text)
    return None if m is None else _literal_rating(m.group(1))


_single.__doc__ = """\
A stricter reading of an MT-Bench single-answer judgment than FastChat's
(`mtbench-single@2` reads as FastChat records): the number is found as
FastChat's `run_judge_single` (`fastchat/llm_judge/common.py`) finds it,
but only a whole rating 1-10 is kept. "number" is
one or more digits, an optional dot, then any digits (`7`, `7.`, `7.5`,
`10`); a digit is any Unicode decimal digit, as in the released pattern.

1. The first place where `[[`, number, `]]` occurs (case and surrounding
   text do not matter). If found, that number decides: no later rule is
   tried and no later rating looked at.
2. Only if there is none: the first place where `[`, number, `]` occurs,
   which is also the first `[7]` inside a `[[7]`.
3. Otherwise unparsed (FastChat records the score -1).

FastChat reads the number with `ast.literal_eval`. The label is that value
when it is a whole number 1-10: `[[7]]`, `[[7.0]]` and `[[7.]]` read as 7,
`[[10]]` as 10, `[[07.0]]` as 7. Everything else is unparsed, with what
the released script did instead:

- a value that is not whole: `[[7.5]]` is unparsed; FastChat records 7.5
  and averages it into the model's score. Labels here are whole grades.
- a value outside 1-10: `[[0]]`, `[[00]]` and `[[11]]` are unparsed; FastChat
  keeps 0 and 11 as scores. The scale is 1-10, so they are no rating of it.
- a number literal_eval refuses: `[[07]]` (an integer with a leading zero)
  and digits that are not ASCII (`[[\u0667]]`, Arabic-Indic seven; `[[\uff17]]`,
  fullwidth seven) make the released script raise, stopping the judging run.

Readings worth knowing (all pinned by golden tests):

- The first match wins, even when a later one is the verdict:
  `[[8]] ... Rating: [[3]]` reads as 8.
- Rule 2 only runs when rule 1 finds nothing, and then takes any bracketed
  number: a citation `[1]` before `Rating: [8]` makes the output read as 1,
  but `[1] ... Rating: [[8]]` reads as 8.
- A first match that is unparsed here (`[[7.5]]`, `[[0]]`) is not skipped in
  favour of a later rating: `[[0]] ... [[7]]` is unparsed, as FastChat
  would have recorded 0.
- Nothing else is allowed inside the brackets: `[[ 7 ]]`, `[[7/10]]`,
  `[[-1]]` and `[[+7]]` do not match (so rule 2 may still find `[5]`).
"""

# mtbench-single@2 ---------------------------------------------------------------
def _fastchat_value(text: str) -> float | None:
    m = _match(text)
    if m is None:
        return None  # FastChat records -1, which show_result leaves out
    value = literal_number(m.group(1))
    if value is None:
        return None  # literal_eval raises: the judging run stops, so no such record is written
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float (hundreds of digits)
        return None


def _fastchat_label(text: str) -> int | None:
    value = _fastchat_value(text)
    if value is None or not value.is_integer() or not RATING_0_10.low <= value <= RATING_0_10.high:
        return None
    return int(value)


_fastchat_label.__doc__ = """\
The rating of an MT-Bench single-answer judgment exactly as FastChat records
it: `run_judge_single` (`fastchat/llm_judge/common.py`), the number its
`show_result.py` averages. "number" is one or more digits, an optional dot,
then any digits (`7`, `7.`, `8.5`, `10`); a digit is any Unicode decimal
digit, as in the released pattern.

1. The first place where `[[`, number, `]]` occurs (case and surrounding
   text do not matter). If found, that number decides: no later rule is
   tried and no later rating looked at.
2. Only if there is none: the first place where `[`, number, `]` occurs,
   which is also the first `[7]` inside a `[[7]`.
3. Otherwise no rating: FastChat records the score -1, and `show_result.py`
   leaves every -1 out of the mean.

The rating is the number as `ast.literal_eval` reads it, whatever it is:
`[[7]]` 7, `[[8.5]]` 8.5, `[[0]]` 0, `[[11]]` 11, `[[7.]]` 7.0. This is the
score `replicate mtbench` averages, per model and turn, as `show_result.py`
does.

The label (for tables, agreement and comparisons with gold) is the rating
when it is a whole number 0-10 (`[[7.0]]` is 7). A rating that is not a
whole grade of that scale (`[[8.5]]`, `[[11]]`) has a score but no label: it
counts as unparsed in label tables and is averaged in by `replicate mtbench`.
A number `literal_eval` refuses (`[[07]]`, an integer with a leading zero;
digits that are not ASCII, `[[\u0667]]`) made the released script raise,
stopping the judging run, so no file FastChat wrote holds one: no rating,
no label.

Readings worth knowing (all pinned by golden tests):

- The first match wins, even when a later one is the verdict:
  `[[8]] ... Rating: [[3]]` reads as 8.
- Rule 2 only runs when rule 1 finds nothing, and then takes any bracketed
  number: a citation `[1]` before `Rating: [8]` makes the output read as 1,
  but `[1] ... Rating: [[8]]` reads as 8.
- Nothing else is allowed inside the brackets: `[[ 7 ]]`, `[[7/10]]`,
  `[[-1]]` and `[[+7]]` do not match (so rule 2 may still find `[5]`).

`mtbench-single@1` is the stricter reading (whole ratings 1-10 only).
"""

# mtbench-pair@1 -----------------------------------------------------------------
_A, _B, _TIE = (PAIR_VERDICTS.code(name) for name in PAIR_VERDICTS.names)


def _pair(text: str) -> int | None:
    if "[[A]]" in text:
        return _A
    if "[[B]]" in text:
        return _B
    if "[[C]]" in text:
        return _TIE
    return None


_pair.__doc__ = """\
The verdict of an MT-Bench pairwise judgment, found as FastChat's
`run_judge_pair` (`fastchat/llm_judge/common.py`, output format `[[A]]`)
finds it. Labels: `A` (the first answer shown is better), `B` (the
second), `tie`. Rules, in order, each a plain substring test (case matters,
nothing may sit inside the brackets):

1. the text contains `[[A]]` anywhere: `A`;
2. otherwise it contains `[[B]]`: `B`;
3. otherwise it contains `[[C]]`: `tie`;
4. otherwise unparsed (FastChat records the winner "error").

Readings worth knowing (all pinned by golden tests):

- Order in the text does not matter, the rule order does: an output with
  both `[[B]]` and `[[A]]`, in any order, is `A`; `[[C]]` and `[[B]]` is `B`.
  A judge that quotes the instructions ("output [[A]] if ...") reads as A.
- `[[a]]`, `[[ A ]]`, `[A]`, `**A**`, `[[tie]]` and `[[A=B]]` are unparsed;
  `[[[A]]]` contains `[[A]]` and reads as A.
- The label is the judge's verdict on the order shown. A FastChat pairwise
  record holds two games: `g1_judgment` shows `model_1` as A, `g2_judgment`
  shows `model_2` as A (FastChat stores `g1_winner`/`g2_winner` as
  `model_1`, `model_2`, `tie` or `error` after undoing that swap). Compare a
  game's judgments with gold written in the same order.
"""

SINGLE = Parser(
    "mtbench-single@1",
    "MT-Bench single rating, stricter than FastChat: whole 1-10 only (0, 8.5, 11 unparsed).",
    _single,
    _single.__doc__.strip(),
    labels=RATING_1_10.codes,
    label_set=RATING_1_10,
    released=False,
)
SINGLE_FASTCHAT = Parser(
    "mtbench-single@2",
    "MT-Bench single rating as FastChat records it: first [[N]], else first [N]; 0 and 8.5 kept (score).",
    _fastchat_label,
    _fastchat_label.__doc__.strip(),
    labels=RATING_0_10.codes,
    label_set=RATING_0_10,
    value=_fastchat_value,
)
PAIR = Parser(
    "mtbench-pair@1",
    "MT-Bench pairwise verdict as FastChat reads it: [[A]], else [[B]], else [[C]] (tie).",
    _pair,
    _pair.__doc__.strip(),
    labels=PAIR_VERDICTS.codes,
    label_set=PAIR_VERDICTS,
)

#: The entry point ``mtbench = "replicate_parsers.mtbench:PARSERS"`` loads this list.
PARSERS: list[Parser] = [SINGLE_FASTCHAT, SINGLE, PAIR]
