"""Scoring K-trial responses into six categories, and the scorer registry.

A scorer (``name@N``, versioned like parsers) reads one response and the
item's reference and returns a :class:`Verdict`: the answer it found (or none)
and whether it is correct, plus a loose verdict where the benchmark has one.
The pipeline (:mod:`replicate.scoring.pipeline`) turns verdicts and the
archive's API-level facts into categories with a fixed precedence:
``api_error`` > ``truncation`` > ``refusal`` > ``format_failure`` > ``correct``/``wrong``.
Built-in scorers ship through the ``replicate.scorers`` entry point group.
"""

from replicate.scoring.base import (
    CATEGORIES,
    SCORERS,
    NoResult,
    ScoreInput,
    Scorer,
    Verdict,
    categorize,
    scorer,
)

__all__ = ["CATEGORIES", "NoResult", "ScoreInput", "Scorer", "SCORERS", "Verdict", "categorize", "scorer"]
