"""`Parser.released`: a reading that reproduces a released script (True) or a correction new here (False)."""

from __future__ import annotations

import dataclasses

import pytest

from replicate.parsing import PARSERS, Parser, parser


def _first_digit(text: str) -> int | None:
    return next((int(c) for c in text if c in "0123"), None)


def test_released_defaults_to_true_and_is_keyword_only():
    p = Parser("toy-a@1", "first digit", _first_digit)
    assert p.released is True and p.reading == "released"
    q = Parser("toy-a@1", "first digit", _first_digit, released=False)
    assert q.released is False and q.reading == "correction"
    # a sixth positional argument is not accepted: released cannot be set by position
    with pytest.raises(TypeError):
        Parser("toy-a@1", "first digit", _first_digit, "", (0, 1, 2, 3), False)  # type: ignore[misc]
    assert dataclasses.replace(q, released=True).released is True


def test_released_must_be_a_bool():
    with pytest.raises(ValueError, match=r"parser toy-a@1: released must be True \(a released reading\) "
                                         r"or False \(a correction\), got 'no'"):
        Parser("toy-a@1", "first digit", _first_digit, released="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"released must be .* got 0"):
        Parser("toy-a@1", "first digit", _first_digit, released=0)  # type: ignore[arg-type]


def test_decorator_passes_released_through():
    @parser("toy-b@1", "first digit", released=False, labels=(0, 1, 2, 3))
    def read(text: str) -> int | None:
        """Rule text."""
        return _first_digit(text)

    assert read.released is False and read.details == "Rule text." and read("x 2") == 2

    @parser("toy-c@1", "first digit")
    def read_c(text: str) -> int | None:
        return _first_digit(text)

    assert read_c.released is True


def test_builtins_mark_only_the_project_correction():
    builtin = {p.name: p.released for p in PARSERS if PARSERS.origin(p.name) == "replicate-audit"}
    assert builtin == {
        "umbrela-checked@1": False, "umbrela-fallback@1": True, "umbrela-strict@1": True,
        "number@1": True,  # a stored number read as that number: what any released analysis of such a file does
        # FastChat's reading (@2) and a stricter one (@1: whole 1-10 only, no paper's reading)
        "mtbench-single@2": True, "mtbench-single@1": False, "mtbench-pair@1": True, "mtbench-pair-scores@1": True,
        "arena-hard@1": True, "arena-hard-last@1": True,  # Arena-Hard-Auto v0.1 and v2.0's get_score
        "helm-choice@1": True,  # HELM's own reading of a multiple_choice_joint completion
        "alpacaeval-preference@1": True,  # AlpacaEval's own reading of a recorded preference
    }
