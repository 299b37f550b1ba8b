"""Pure answer extraction and comparison used by the built-in scorers (replicate_parsers.scorers).

Nothing here may change behaviour once a scorer version using it is released;
a new behaviour gets a new function and a new scorer version.
"""

from __future__ import annotations

import re

_ANSWER_LINE = re.compile(
    r"^[ \t>#*_]*(?:final[ \t]+answer|answer)[ \t*_]*[:：][ \t]*(?P<rest>.*)$", re.IGNORECASE | re.MULTILINE
)


def final_answer_line(text: str | None) -> str | None:
    """The answer after the last line starting "Answer:" or "Final answer:" (any case).

    Markdown emphasis and quote/heading marks before the label are allowed
    (``**Final answer:** 42``). If the label ends its line, the next non-empty
    line is the answer. Surrounding ``*``/``_`` emphasis and whitespace are
    stripped. ``None`` when there is no such line or it holds nothing.
    """
    if not text:
        return None
    matches = list(_ANSWER_LINE.finditer(text))
    if not matches:
        return None
    m = matches[-1]
    answer = m["rest"].strip()
    if not answer:
        rest = text[m.end():].lstrip("\n")
        answer = next((ln.strip() for ln in rest.splitlines() if ln.strip()), "")
    answer = answer.strip().strip("*_").strip()
    return answer or None


def normalize(text: str) -> str:
    """Whitespace collapsed to single spaces, trimmed, case-folded."""
    return " ".join(text.split()).casefold()


_LETTER = re.compile(r"^[(\[]?(?P<l>[A-J])[)\].:]?(?:\s|$)")


def choice_letter(answer: str | None) -> str | None:
    """A choice letter A-J at the start of an answer: ``B``, ``(B)``, ``B)``, ``B.``, ``B: text``.

    Upper case only, except when the answer is the single letter itself.
    """
    if answer is None:
        return None
    a = answer.strip()
    if len(a) == 1 and a.upper() in "ABCDEFGHIJ":
        return a.upper()
    m = _LETTER.match(a)
    return m["l"] if m else None


# -- math ----------------------------------------------------------------------------

_BOXED = re.compile(r"\\boxed\s*\{")


def last_boxed(text: str | None) -> str | None:
    """The content of the last ``\\boxed{...}`` (balanced braces), or ``None``."""
    if not text:
        return None
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    i = starts[-1]
    depth = 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip() or None
    return None


def math_answer(text: str | None) -> str | None:
    """The final answer line, else the last ``\\boxed{}``; a boxed value inside the line wins."""
    line = final_answer_line(text)
    if line is not None:
        return last_boxed(line) or line
    return last_boxed(text)


def strip_math(s: str) -> str:
    """Light LaTeX clean-up for exact comparison: ``$``, ``\\(``, ``\\left``/``\\right``, spaces, a final period."""
    s = s.strip()
    for a, b in (("$", ""), ("\\(", ""), ("\\)", ""), ("\\[", ""), ("\\]", ""), ("\\left", ""), ("\\right", ""),
                 ("\\!", ""), ("\\,", ""), ("\\;", ""), ("\\displaystyle", ""), ("\\dfrac", "\\frac"),
                 ("\\tfrac", "\\frac")):
        s = s.replace(a, b)
    s = re.sub(r"\\text\{([^{}]*)\}", r"\1", s)
    s = "".join(s.split()).rstrip(".")
    if "=" in s:  # "x=3" -> "3"
        s = s.rsplit("=", 1)[1]
    return s


_FRAC = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\{([^{}]*)\}")
_SAFE = re.compile(r"^[0-9a-z+\-*/^().\s]*$")
_ALLOWED_NAMES = {"sqrt", "pi", "e", "sin", "cos", "tan", "log", "ln", "exp", "x", "y", "z", "n", "a", "b", "c",
                  "i", "k", "m", "t"}


def to_sympy_text(s: str) -> str | None:
    """A cleaned math string in sympy syntax, or ``None`` if it uses anything outside a safe subset.

    Only digits, operators, parentheses and a short list of names
    (``sqrt pi e sin cos tan log ln exp`` and one-letter variables) pass: the
    text is parsed by sympy, which evaluates Python, so model output is never
    handed over unchecked.
    """
    s = strip_math(s)
    for _ in range(5):
        s2 = _SQRT.sub(r"sqrt(\1)", _FRAC.sub(r"((\1)/(\2))", s))
        if s2 == s:
            break
        s = s2
    s = s.replace("\\cdot", "*").replace("\\times", "*").replace("\\pi", "pi").replace("{", "(").replace("}", ")")
    s = s.replace(",", "") if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s) else s
    if "\\" in s or "__" in s or not _SAFE.match(s) or len(s) > 200:
        return None
    names = set(re.findall(r"[a-z]+", s))
    if not names <= _ALLOWED_NAMES:
        return None
    return s.replace("^", "**").replace("ln", "log")


def math_equivalent(answer: str, reference: str) -> bool:
    """Exact match after :func:`strip_math`, else sympy: ``simplify(a - b) == 0``."""
    a, b = strip_math(answer), strip_math(str(reference))
    if a == b:
        return True
    sa, sb = to_sympy_text(answer), to_sympy_text(str(reference))
    if sa is None or sb is None:
        return False
    try:
        import sympy
        from sympy.parsing.sympy_parser import (
            convert_xor,
            implicit_multiplication_application,
            parse_expr,
            standard_transformations,
        )

        tr = standard_transformations + (implicit_multiplication_application, convert_xor)
        ea = parse_expr(sa, transformations=tr, evaluate=True)
        eb = parse_expr(sb, transformations=tr, evaluate=True)
        return bool(sympy.simplify(ea - eb) == 0)
    except Exception:  # unparseable or unsupported: not shown equivalent
        return False
