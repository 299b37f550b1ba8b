"""Arena-Hard-Auto judge outputs: five-way verdicts ``[[A>>B]]`` .. ``[[B>>A]]``.

Two readings ship here, registered through the ``replicate.parsers`` entry
point ``arena_hard`` (see pyproject.toml):

``arena-hard@1``
    the reading of Arena-Hard-Auto v0.1 (``gen_judgment.py``'s ``get_score``
    with the ``regex_pattern`` of ``config/judge_config.yaml``, then
    ``show_result.py``'s table of verdicts): every ``[[...]]`` verdict must
    agree, or the judgment counts as none;
``arena-hard-last@1``
    the reading of the later Arena-Hard-Auto (v2.0's ``get_score`` with the
    ``regex_patterns`` of ``config/arena-hard-v2.0.yaml``): the text is
    upper-cased and the last verdict found wins, single brackets as fallback.

The label set is the ordered scale of the five verdicts, grade 0 ``B>>A`` ..
grade 4 ``A>>B`` (A is the first answer shown), so MAE and Pearson r apply.
The ten spellings the released table accepts map onto the five grades:
``A<<B`` is ``B>>A``, ``A<B`` is ``B>A``, ``B=A`` is ``A=B``, ``B<A`` is
``A>B``, ``B<<A`` is ``A>>B``. Released versions never change; pinned by
``tests/golden/arena-hard.jsonl``.
"""

from __future__ import annotations

import re

from replicate.labels import LabelSet
from replicate.parsing import Parser

#: Arena-Hard's verdicts as an ordered scale: grade 0 (B much better) .. 4 (A much better).
VERDICTS = LabelSet.named_ordinal("B>>A", "B>A", "A=B", "A>B", "A>>B")

#: Every spelling show_result.py accepts, with the grade it stands for.
SPELLINGS: dict[str, int] = {
    "A>>B": 4, "A>B": 3, "A=B": 2, "A<B": 1, "A<<B": 0,
    "B<<A": 4, "B<A": 3, "B=A": 2, "B>A": 1, "B>>A": 0,
}

# The released patterns (Python's re; the character class is ASCII only).
_DOUBLE = re.compile(r"\[\[([AB<>=]+)\]\]")
_SINGLE = re.compile(r"\[([AB<>=]+)\]")


# arena-hard@1 -------------------------------------------------------------------
def _v01(text: str) -> int | None:
    found = set(_DOUBLE.findall(text))
    if len(found) != 1:
        return None  # none (the judge is asked again), or several distinct: None
    return SPELLINGS.get(found.pop())  # show_result raises KeyError on any other string


_v01.__doc__ = """\
The reading of Arena-Hard-Auto v0.1: `get_score` in `gen_judgment.py` with
the pattern of `config/judge_config.yaml`, then the verdict table of
`show_result.py`. A "verdict" is `[[`, one or more of the characters `A`,
`B`, `<`, `>`, `=`, then `]]` (upper case only: the text is not
case-folded).

1. Collect every verdict in the text, left to right.
2. None found: unparsed (the script records `None`; while judging it asks
   the judge to continue, and the stored judgment is every attempt joined
   by line breaks, which is what is read here).
3. Two or more different verdicts: unparsed (the script records `None`),
   even when they mean the same (`[[A>B]]` and `[[B<A]]`). The same verdict
   repeated counts once.
4. Exactly one distinct verdict: its grade, when it is one of the ten
   spellings `show_result.py` scores: `A>>B` and `B<<A` are `A>>B` (4);
   `A>B` and `B<A` are `A>B` (3); `A=B` and `B=A` are `A=B` (2); `B>A` and
   `A<B` are `B>A` (1); `B>>A` and `A<<B` are `B>>A` (0). Any other string
   of those characters (`[[A]]`, `[[AB]]`, `[[A>>>B]]`, `[[A>B>A]]`) is
   unparsed: `show_result.py` raises a KeyError on it.

Readings worth knowing (all pinned by golden tests):

- A judge that lists the options before its verdict (`[[A>>B]]`, `[[A>B]]`,
  ... then `My final verdict: [[A>B]]`) is unparsed: several distinct
  verdicts. So is a verdict followed by a correction.
- `[[a>b]]`, `[[A > B]]`, `[A>B]` and `**A>B**` are no verdicts; neither
  is `[[A≫B]]` (U+226B) or a fullwidth `[[Ａ>B]]`.
- A stray `[[A]]` beside a real verdict makes two distinct strings:
  unparsed. `[[[A>B]]]` holds the verdict `A>B`.
- The grade is the judge's verdict on the order shown (A first). In
  Arena-Hard's files game 1 shows the baseline as A and game 2 swaps the
  two; compare a game's judgments with gold written in the same order.
"""


# arena-hard-last@1 --------------------------------------------------------------
def _last(text: str) -> int | None:
    upper = text.upper()
    for pattern in (_DOUBLE, _SINGLE):
        found = pattern.findall(upper)
        if found:
            return SPELLINGS.get(found[-1])
    return None


_last.__doc__ = """\
The reading of the later Arena-Hard-Auto (v2.0): `get_score` in
`gen_judgment.py` with the `regex_patterns` of `config/arena-hard-v2.0.yaml`,
then the same verdict table. The text is first upper-cased (Python's
`str.upper`). A verdict is a bracketed run of `A`, `B`, `<`, `>`, `=`.

1. If the upper-cased text holds any `[[`verdict`]]`, the last one decides.
2. Otherwise, if it holds any `[`verdict`]`, the last one decides.
3. Otherwise unparsed (the script records `None`).

The deciding verdict is graded as under `arena-hard@1` (ten spellings onto
five grades, `B>>A` 0 .. `A>>B` 4); any other string (`[[A]]`, `[[AB]]`) is
unparsed, and the search does not go back to an earlier verdict.

Readings worth knowing (all pinned by golden tests):

- Several verdicts are fine: listing the options and then giving
  `[[A>B]]` reads as `A>B`; a correction after a verdict wins.
- Case does not matter: `[[a>b]]` reads as `A>B`. Spaces do: `[[A > B]]` is
  none, and then a single-bracket verdict elsewhere may decide.
- Rule 2 runs only when rule 1 finds nothing: `[B>A] ... [[A>B]]` reads as
  `A>B`, while `[[A>B]] ... [B>A]` also reads as `A>B` (the double bracket
  wins wherever it is). `[A>B]` alone reads as `A>B`.
- The last verdict decides even when it is not gradable: `[[A>B]] ... [[A]]`
  is unparsed.
"""


ARENA_HARD = Parser(
    "arena-hard@1",
    "Arena-Hard v0.1 verdict: the one distinct [[A>>B]]..[[B>>A]] in the text; several or none unparsed.",
    _v01,
    _v01.__doc__.strip(),
    labels=VERDICTS.codes,
    label_set=VERDICTS,
)
ARENA_HARD_LAST = Parser(
    "arena-hard-last@1",
    "Arena-Hard v2.0 verdict: upper-cased text, the last [[...]] verdict, else the last [...].",
    _last,
    _last.__doc__.strip(),
    labels=VERDICTS.codes,
    label_set=VERDICTS,
)

#: The entry point ``arena_hard = "replicate_parsers.arena_hard:PARSERS"`` loads this list.
PARSERS: list[Parser] = [ARENA_HARD, ARENA_HARD_LAST]
