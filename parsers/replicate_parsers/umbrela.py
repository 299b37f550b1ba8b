"""UMBRELA-style judge output parsers: relevance grades 0-3 read from raw text.

Three readings ship here, all registered through the ``replicate.parsers``
entry point ``umbrela`` (see pyproject.toml):

``umbrela-strict@1``
    the reading of the released all-pairs analysis script, quirks included;
``umbrela-fallback@1``
    the reading of the released regression and stability scripts (the one the
    paper's Table 1 matches), quirks included;
``umbrela-checked@1``
    a corrected reading that is new in this project: whole numbers only, and an
    output whose scores are out of range, fractional or contradict each other is
    left unparsed instead of being read as some digit.

The two ``@1`` readings reproduce the released scripts exactly, which were
written with Python's :mod:`re`; the rule texts below (``details``) spell out
what that means where it matters (case folding, Unicode whitespace and
digits). Released versions never change: a behaviour change is a new name or a
new ``@N``, pinned by the golden table in ``tests/golden/umbrela.jsonl``.
"""

from __future__ import annotations

import re

from replicate.labels import RELEVANCE_0_3
from replicate.parsing import Parser

_I = re.IGNORECASE

# Pieces of the rule texts. "ws" = \s* (any Unicode whitespace, newlines
# included); "stars" = \** ; "number" = [0-3](?:\.\d+)? (greedy; \d is any
# Unicode decimal digit, like the released scripts').
_NUMBER = r"([0-3](?:\.\d+)?)"

# umbrela-strict@1 ---------------------------------------------------------------
_STRICT_FINAL = re.compile(
    r"final\s*score\s*(?:for\s+this\s+passage\s*)?(?:is\s*)?:?\s*\**" + _NUMBER + r"\**", _I
)
_STRICT_OVERALL = re.compile(r"overall(?:\s*score)?\s*(?:\(O\))?\s*[:=]\s*\**" + _NUMBER + r"\**", _I)
# ``^`` without MULTILINE is the start of the text only; a line starts after "\n".
_STRICT_O_LINE = re.compile(
    r"(?:^|\n)\s*#{0,6}\s*O\s*(?:\(\s*Final\s+Score\s*\))?\s*[:=]\s*\**" + _NUMBER + r"\**", _I
)


def _integral(number: str) -> int | None:
    """The scripts' integral test: ``float(number).is_integer()``.

    So ``2``, ``2.0`` and ``2.000`` give 2 and ``2.5`` gives None. A number
    that only rounds to a whole double (``1.99999999999999999``, 17 nines)
    counts as that whole number, as it did in the released script.
    """
    value = float(number)
    return int(value) if value.is_integer() else None


def first_final(pattern: re.Pattern[str], text: str, lowered: str) -> re.Match[str] | None:
    """``pattern.search(text)`` for a pattern that starts with ``final``, tried only where it can match.

    Exact: the characters IGNORECASE lets match "n", "a" and "l" are those
    that ``str.lower`` maps to them (checked over every code point), and when
    ``lowered`` (``text.lower()``) is as long as ``text`` each character
    lowered to one, so a match starting at ``s`` has "nal" at ``lowered[s + 2]``.
    Only those starts are tried, leftmost first, as ``search`` would; a text
    whose lowering changed its length is searched as is.
    """
    if len(lowered) != len(text):
        return pattern.search(text)
    at = lowered.find("nal", 2)
    while at >= 0:
        m = pattern.match(text, at - 2)
        if m is not None:
            return m
        at = lowered.find("nal", at + 1)
    return None


def _strict(text: str) -> int | None:
    text = text.strip()
    # Cheap pre-checks are exact: a rule cannot match without its literal
    # letters; text.lower() maps every character that IGNORECASE lets match
    # "f", "n", "a", "l", "v", "e", "r" to that letter.
    lowered = text.lower()
    if "nal" in lowered:
        m = first_final(_STRICT_FINAL, text, lowered)
        if m is not None:
            return _integral(m.group(1))
    if "overall" in lowered:
        m = _STRICT_OVERALL.search(text)
        if m is not None:
            return _integral(m.group(1))
    if ":" in text or "=" in text:
        found = _STRICT_O_LINE.findall(text)
        if found:
            return _integral(found[-1])
    return None


_strict.__doc__ = """\
The reading of the released all-pairs analysis script, quirks included.
The text is trimmed; matching is case-insensitive. "ws" is optional
whitespace, "stars" is optional asterisks, "number" is a digit 0-3 optionally
followed by a dot and digits (as many as there are). Rules, in order:

1. The first place where this whole pattern matches: `final`, ws, `score`,
   ws, optionally (`for`, whitespace, `this`, whitespace, `passage`, ws),
   optionally (`is`, ws), an optional colon, ws, stars, number, stars.
   If found, that number decides and no later rule is tried: a whole number
   (`2`, `2.0`, `2.00`) is the label, a fractional one (`2.5`) makes the
   output unparsed.
2. Otherwise the first match of: `overall`, optionally (ws, `score`), ws,
   optionally `(O)`, ws, `:` or `=`, ws, stars, number, stars. Same
   whole-number rule.
3. Otherwise the last match that starts at the start of the text or right
   after a newline: ws, zero to six `#`, ws, the letter `O`, ws, optionally
   `(Final Score)` (whitespace allowed inside the parentheses, at least one
   between the words), ws, `:` or `=`, ws, stars, number, stars. Same
   whole-number rule.
4. Otherwise unparsed.

Readings worth knowing (all pinned by golden tests):

- Nothing is required after the number: `final score: 10` reads as 1 and
  `final score: 3/3` as 3; `Final Score: 02` reads as 0. `3.` is the number
  3 followed by a full stop.
- A pattern that fails at one place is looked for further on: in
  `final score is high ... Final score: 2` rule 1 matches at the second
  phrase (2). A "final score" that gives no 0-3 digit where the pattern
  wants it (`final score: 4`, `Final score = 2`, `**Final Score**: 2`,
  `final score: ** 2`) is not a match, so it neither decides nor stops the
  search.
- "ws" crosses line ends, so `final score:` followed by `2` on the next line
  reads as 2, and the O of rule 3 may sit on a later line than the line
  start that anchors it. Rule 3 allows `#` but not `*` before the O
  (`**O:** 2` is unparsed), and at most six `#`.
- Case-insensitive means Python's `re.IGNORECASE`: the dotted capital I and
  the dotless small i (U+0130, U+0131) match `i`, the long s (U+017F) matches
  `s`. Whitespace is any Unicode whitespace (no-break space included). A line
  starts only after a line feed: CRLF works, a lone carriage return does not
  start a line.
- The digits after the dot may be decimal digits of any script, and the
  number is read as a double: `2.` followed by an Arabic-Indic zero is 2, and
  a fraction that rounds to a whole double (`1.99999999999999999`, 17 nines)
  counts as that whole number.
"""


# umbrela-fallback@1 -------------------------------------------------------------
_FALLBACK_FINAL = re.compile(r"final\s*score:?\s*\**([0-3])", _I)
# The reference form of rule 2 (the released scripts'): \b on both sides, i.e.
# no Unicode letter, digit or underscore (Python's \w) touches the digit.
# _last_standalone_digit computes the same thing faster on long texts.
_FALLBACK_DIGIT = re.compile(r"\b([0-3])\b")


def _is_word(ch: str) -> bool:
    # exactly re's \w for str patterns: Py_UNICODE_ISALNUM or "_"
    return ch.isalnum() or ch == "_"


def _last_standalone_digit(text: str) -> int | None:
    """The label of the last match of ``\b([0-3])\b``, scanning from the end.

    Each digit's last position is found with ``str.rfind`` and only the digit
    just rejected is looked up again, so the text is scanned about once.
    """
    last = {d: text.rfind(d) for d in "0123"}
    n = len(text)
    while True:
        digit = max(last, key=last.__getitem__)
        pos = last[digit]
        if pos < 0:
            return None
        if not (pos > 0 and _is_word(text[pos - 1])) and not (pos + 1 < n and _is_word(text[pos + 1])):
            return ord(digit) - 48
        last[digit] = text.rfind(digit, 0, pos)


def _fallback(text: str) -> int | None:
    text = text.strip()
    lowered = text.lower()
    if "nal" in lowered:  # exact pre-check, see _strict
        m = first_final(_FALLBACK_FINAL, text, lowered)
        if m is not None:
            return ord(m.group(1)) - 48
    return _last_standalone_digit(text)


_fallback.__doc__ = """\
The reading of the released regression and stability scripts (the reading
the paper's Table 1 matches), quirks included. The text is trimmed; matching
is case-insensitive. "ws" is optional whitespace, "stars" optional asterisks.
Rules, in order:

1. The first place where this matches: `final`, ws, `score`, an optional
   colon directly after `score`, ws, stars, then one digit 0-3. That digit
   is the label, whatever follows it: `final score: 10` reads as 1,
   `final score: 2.5` as 2, `final score: 3/3` as 3.
2. Otherwise the last digit 0-3 that stands alone as a word: no letter,
   digit or underscore directly before or after it. Letters and digits are
   meant in the Unicode sense of Python's `\\w`, so the 2 of `é2` does not
   stand alone, while `-1`, `(2)`, `2.0` and `2/3` have standalone digits.
3. Otherwise unparsed.

Readings worth knowing (all pinned by golden tests):

- Rule 2 reads any number anywhere: a bare `1` is 1, three lines `1`, `2`,
  `2` give 2, `2.0` gives 0 (the last standalone digit is the 0 after the
  dot), `Final score: -1` gives 1, `score 4` is unparsed (4 is outside 0-3),
  and `Final score : 2 (scale 0-3)` gives 3.
- Rule 1 needs the digit right after `score`, the colon and the stars:
  `Final Score for this passage is: 2`, `Final score = 2`, `Final score : 2`
  and `**Final Score**: 2` all fall through to rule 2.
- Several final scores: the first one wins.
- Case-insensitive means Python's `re.IGNORECASE` (U+0130 and U+0131 match
  `i`, U+017F matches `s`); whitespace is any Unicode whitespace. Only the
  ASCII digits 0-3 are labels.
"""


# umbrela-checked@1 --------------------------------------------------------------
# A value is a whole token: ASCII digits, optionally a dot and digits, and no
# further digit or ".digit" (in any script) directly after it. Any size is read,
# so that an out-of-range score is seen (and refused) rather than skipped.
_VALUE = r"([0-9]+(?:\.[0-9]+)?)(?!\d|\.\d)"
# Between a label and its value: whitespace and asterisks, one optional ":" or "=".
_SEP = r"[\s*]*[:=]?[\s*]*"
_CHECKED_RULES = (
    re.compile(
        r"(?<![a-z])final\s*score(?:\s+for\s+this\s+passage)?(?:\s*is)?" + _SEP + _VALUE, _I
    ),
    re.compile(r"(?<![a-z])overall(?:\s*score)?\s*(?:\(O\))?[\s*]*[:=][\s*]*" + _VALUE, _I),
    re.compile(
        r"^[^\S\n]*(?:#{1,6}[^\S\n]*)?\**O\**[^\S\n]*(?:\(\s*final\s+score\s*\))?[\s*]*[:=][\s*]*"
        + _VALUE,
        _I | re.MULTILINE,
    ),
)


def _checked(text: str) -> int | None:
    # exact pre-checks (see _strict): each rule needs these literals
    lowered = text.lower()
    needs = ("nal" in lowered, "overall" in lowered, ":" in text or "=" in text)
    for rule, possible in zip(_CHECKED_RULES, needs):
        if not possible:
            continue
        values = rule.findall(text)
        if not values:
            continue
        labels = set()
        for value in values:
            whole, _, frac = value.partition(".")
            if frac.strip("0") or whole.lstrip("0") not in ("", "1", "2", "3"):
                return None  # fractional or out of range: the judge gave no valid grade
            labels.add(int(whole))
        if len(labels) != 1:
            return None  # contradicting scores: refuse to guess
        return labels.pop()
    return None


_checked.__doc__ = """\
A corrected reading of the same outputs, new in this project (no released
script reads this way). Matching is case-insensitive; "ws" is optional
whitespace, "stars" optional asterisks, "sep" is any run of whitespace and
asterisks with at most one `:` or `=` in it. A "value" is a whole number
token: ASCII digits, optionally a dot and digits, with no digit (of any
script) and no dot-digit directly after it, so `10` is ten, never 1. The
first statement kind that occurs decides:

1. final-score statements: `final` (not preceded by a letter a-z in either
   case; Python's case-insensitive matching also counts `ſ`, `ı`, `İ` and
   the Kelvin sign as such letters, while `é` is not one), ws, `score`,
   optionally (whitespace, `for`, whitespace, `this`, whitespace, `passage`),
   optionally (ws, `is`), sep, value. This accepts `Final score: 2`,
   `**Final Score:** 2`, `**Final Score**: 2`, `Final score = 2`,
   `Final Score for this passage is: 2` and `1final score: 0`.
2. otherwise overall statements: `overall` (not preceded by a letter a-z,
   as in rule 1),
   optionally (ws, `score`), ws, optionally `(O)`, stars and whitespace, `:`
   or `=`, stars and whitespace, value.
3. otherwise O lines: a line that starts with optional spaces, optionally one
   to six `#` and spaces, the letter `O` (optionally in asterisks), spaces,
   optionally `(Final Score)`, then stars and whitespace, `:` or `=`, stars
   and whitespace, value.
4. otherwise unparsed.

Every statement of the deciding kind must give the same whole number 0-3
(`2`, `2.0` and `02` are 2). A fractional value (`2.5`), a value out of range
(`4`, `10`) or two statements that disagree (`final score: 1` then
`final score: 2`) make the output unparsed rather than read as some digit.
Bare numbers (`1`, `1: 2`) are unparsed, as under umbrela-strict@1.
"""


STRICT = Parser(
    "umbrela-strict@1",
    "UMBRELA grade as the released all-pairs script read it: final score, overall, O line.",
    _strict,
    _strict.__doc__.strip(),
    label_set=RELEVANCE_0_3,
)
FALLBACK = Parser(
    "umbrela-fallback@1",
    "UMBRELA grade as the released regression scripts read it: final score, else last 0-3.",
    _fallback,
    _fallback.__doc__.strip(),
    label_set=RELEVANCE_0_3,
)
CHECKED = Parser(
    "umbrela-checked@1",
    "UMBRELA grade, corrected: whole numbers only; out-of-range or conflicting scores unparsed.",
    _checked,
    _checked.__doc__.strip(),
    released=False,
    label_set=RELEVANCE_0_3,
)

#: The entry point ``umbrela = "replicate_parsers.umbrela:PARSERS"`` loads this list.
PARSERS: list[Parser] = [STRICT, FALLBACK, CHECKED]
