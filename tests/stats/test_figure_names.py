"""A built-in four-cell figure's name is spelled as a string only in its table (replicate/stats/fourcell.py).

Elsewhere in replicate/ and parsers/ code names a figure by its declaration (``REGRESSION_RATE.name`` as a JSON
key, a dict key or a column) or reads it as a typed attribute (``cells.regression_rate``), so renaming or
removing a figure is one edit that the type checker and these tests follow. The source is scanned token by
token (:mod:`tokenize`): a string literal, or the literal text of an f-string, whose whole text is a figure's
name fails, listed as file:line. Prose that mentions a figure (a docstring, a message) is not a spelling of it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from replicate.stats.fourcell import BUILT_IN

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("replicate", "parsers")
TABLE = Path("replicate/stats/fourcell.py")

#: (file, figure name) -> why it may spell the name. Each entry must still be needed (see the last test).
ALLOWED: dict[tuple[str, str], str] = {}

#: Token types whose text is a string's content: a literal, and (Python 3.12+) an f-string's literal parts.
_STRING = tokenize.STRING
_FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", None)


def _text(tok: tokenize.TokenInfo) -> str:
    """What a string token holds: a literal's value; for an f-string (one STRING token before Python 3.12) its
    text between the quotes."""
    if tok.type == _FSTRING_MIDDLE:
        return tok.string
    try:
        value = ast.literal_eval(tok.string)
    except ValueError:  # an f-string: no value without running it
        body = tok.string.lstrip("rRbBfFuU")
        quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
        return body[len(quote):-len(quote)]
    return value if isinstance(value, str) else value.decode("latin-1")


def spellings(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every string in ``source`` whose whole text is one of ``names``; adjacent literals
    (``"regression_" "rate"``) are read joined, as Python joins them."""
    out = []
    joined: tuple[int, str] | None = None  # the literals met since the last other token: (first line, text)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == _STRING:
            joined = (tok.start[0], _text(tok)) if joined is None else (joined[0], joined[1] + _text(tok))
            if joined[1] in names:
                out.append(joined)
            continue
        if tok.type == _FSTRING_MIDDLE and tok.string in names:
            out.append((tok.start[0], tok.string))
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            joined = None
    return sorted(set(out))


def _scan() -> dict[tuple[str, str], list[int]]:
    names = {f.name for f in BUILT_IN}
    found: dict[tuple[str, str], list[int]] = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel == TABLE:
                continue
            for line, name in spellings(path.read_text(encoding="utf-8"), names):
                found.setdefault((rel.as_posix(), name), []).append(line)
    return found


def test_the_scanner_finds_a_figure_spelled_as_a_string_and_nothing_else():
    source = '''\
"""Mentions regression_rate in prose: not a spelling."""
a = {"regression_rate": 1}
b = x['change_rate']
c = f"em_old"
d = ("backward_rate"
     )
e = r"independence_ratio"
f = """label_agreement"""
g = "expected_regression_rate", "regression rate", "regression_rate_with_error"
h = cells.regression_rate
i = f"{cells.change_rate}"
j = "accuracy_" "difference"
'''
    names = {f.name for f in BUILT_IN}
    assert spellings(source, names) == [
        (2, "regression_rate"), (3, "change_rate"), (4, "em_old"), (5, "backward_rate"), (7, "independence_ratio"),
        (8, "label_agreement"), (12, "accuracy_difference"),
    ]


def test_no_built_in_figure_name_is_a_string_outside_its_table():
    found = _scan()
    assert {f.name for f in BUILT_IN} >= {"regression_rate", "change_rate", "independence_ratio"}
    spelled = [f"{file}:{line}: {name!r}" for (file, name), lines in sorted(found.items()) if (file, name) not in ALLOWED
               for line in lines]
    assert not spelled, (
        "a built-in figure's name is written as a string outside replicate/stats/fourcell.py; name it by its "
        "declaration (e.g. REGRESSION_RATE.name) or read it as an attribute:\n" + "\n".join(spelled))


def test_every_allowed_spelling_is_still_there():
    found = _scan()
    stale = [f"{file}: {name!r}" for file, name in ALLOWED if (file, name) not in found]
    assert not stale, "allowed spellings that are gone (remove them from ALLOWED):\n" + "\n".join(stale)
