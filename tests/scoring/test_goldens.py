"""Goldens for the built-in scorers: real response shapes and the verdict each version must give.

Never edit a released row: a behaviour change is a new scorer version with its own table.
"""

from __future__ import annotations

import pytest

from replicate.scoring import CATEGORIES, SCORERS, Verdict, categorize
from replicate.scoring.refusal import refusal_phrases_v1

# (response text, reference, expected answer, expected correct)
FINAL_ANSWER_LINE_V1 = [
    ("Let me add.\nFinal answer: 42", "42", "42", True),
    ("Answer: Paris", "paris", "Paris", True),
    ("answer:   New   York  City ", "new york city", "New   York  City", True),
    ("**Final answer:** 42", "42", "42", True),
    ("> Final Answer: yes", "Yes", "yes", True),
    ("Final answer:\n\n  17\n", "17", "17", True),
    ("Answer: 3\nOn reflection...\nFinal answer: 4", "4", "4", True),
    ("Final answer: 42.", "42", "42.", False),  # only whitespace and case are normalised
    ("The answer is 42", "42", None, False),  # no answer line
    ("My answer: 42", "42", None, False),  # label must start the line
    ("Final answer:", "42", None, False),
    ("", "42", None, False),
]

MCQ_LETTER_V1 = [
    ("Reasoning...\nFinal answer: B", "B", "B", True),
    ("Final answer: (C)", "C", "C", True),
    ("Answer: D) four", "D", "D", True),
    ("Answer: a", "A", "A", True),
    ("Final answer: J.", "(J)", "J", True),
    ("Final answer: B: two", "C", "B", False),
    ("Final answer: apple", "A", None, False),  # a word, not a letter
    ("Final answer: K", "K", None, False),  # outside A-J
    ("I pick B", "B", None, False),
]

MATH_EQUIVALENCE_V1 = [
    ("Final answer: 12", "12", "12", True),
    ("Final answer: $\\frac{1}{2}$", "0.5", "$\\frac{1}{2}$", True),
    ("Final answer: \\boxed{2\\sqrt{2}}", "\\sqrt{8}", "2\\sqrt{2}", True),
    ("so x = \\boxed{3}", "3", "3", True),  # no answer line: last boxed
    ("Final answer: x = 3", "3", "x = 3", True),
    ("Final answer: 2x + 2x", "4x", "2x + 2x", True),
    ("Final answer: 1,000", "1000", "1,000", True),
    ("Final answer: \\left( \\pi \\right)", "\\pi", "\\left( \\pi \\right)", True),
    ("Final answer: 13", "12", "13", False),
    ("Final answer: __import__('os')", "0", "import__('os')", False),  # emphasis marks stripped; never handed to sympy
    ("The result is 12.", "12", None, False),
]


def _check(name, rows):
    sc = SCORERS.get(name)
    for text, ref, answer, correct in rows:
        v = sc(text, ref)
        assert (v.answer, v.correct) == (answer, correct), (name, text)
        assert v.correct_loose is None


def test_final_answer_line_v1_goldens():
    _check("final-answer-line@1", FINAL_ANSWER_LINE_V1)


def test_mcq_letter_v1_goldens():
    _check("mcq-letter@1", MCQ_LETTER_V1)


def test_math_equivalence_v1_goldens():
    pytest.importorskip("sympy", reason="math-equivalence@1 needs sympy (the 'math' or 'test' extra)")
    _check("math-equivalence@1", MATH_EQUIVALENCE_V1)


def test_builtins_ship_through_the_entry_point():
    assert {"final-answer-line@1", "mcq-letter@1", "math-equivalence@1", "ifbench@1"} <= set(SCORERS.names())
    assert SCORERS.origin("ifbench@1") == "replicate-audit"
    assert SCORERS.get("ifbench@1").has_loose and not SCORERS.get("mcq-letter@1").has_loose


def test_unknown_scorer_names_versions():
    from replicate.errors import UsageError

    with pytest.raises(UsageError, match=r"unknown scorer 'mcq-letter': name its version, one of mcq-letter@1"):
        SCORERS.get("mcq-letter")


@pytest.mark.parametrize(
    "kw, expected",
    [
        (dict(error_kind="http_400", finish_reason="length", refusal="no", verdict=Verdict("1", True)), "api_error"),
        (dict(error_kind=None, finish_reason="length", refusal="no", verdict=Verdict("1", True)), "truncation"),
        (dict(error_kind=None, finish_reason="stop", refusal="I can't", verdict=Verdict("1", True)), "refusal"),
        (dict(error_kind=None, finish_reason="stop", refusal=None, verdict=Verdict(None)), "format_failure"),
        (dict(error_kind=None, finish_reason="stop", refusal=None, verdict=Verdict(None),
              detector_says_refusal=True), "refusal"),
        (dict(error_kind=None, finish_reason="stop", refusal=None, verdict=Verdict("1", True)), "correct"),
        (dict(error_kind=None, finish_reason="stop", refusal=None, verdict=Verdict("1", False)), "wrong"),
    ],
)
def test_category_precedence(kw, expected):
    assert categorize(**kw) == expected
    assert expected in CATEGORIES


@pytest.mark.parametrize(
    "text, fires",
    [
        ("I'm sorry, but I can't help with that.", True),
        ("I\u2019m unable to help with this request.", True),
        ("I cannot provide instructions for that.", True),
        ("Sure! Let me help with that.", False),
        ("x" * 400 + " I can't help with", False),  # only the first 300 characters count
        (None, False),
    ],
)
def test_refusal_phrases_v1(text, fires):
    assert refusal_phrases_v1(text) is fires
