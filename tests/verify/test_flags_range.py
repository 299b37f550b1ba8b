"""A printed four-cell figure outside its kind's range is flagged impossible; one inside it is not (a difference
of accuracies may be negative, a rate may not)."""

from __future__ import annotations

import pytest

from replicate.parsing import PARSERS, Parser
from replicate.verify.api import verify_runs
from replicate.verify.claims_file import parse_claims

from .test_recompute import make_run

DIGIT = Parser("testflags-digit@1", "a bare digit 0-3", lambda t: int(t) if t in "0123" and len(t) == 1 else None,
               labels=(0, 1, 2, 3))


def _impossible(metric: str, value: str, unit: str) -> list[str]:
    data = {"runs": {"a": ["a.jsonl"], "b": ["b.jsonl"]},
            "claims": [{"id": "c", "metric": metric, "old": "a", "new": "b", "value": value, "unit": unit}]}
    PARSERS.register(DIGIT)
    try:
        runs = {"a": make_run("a", [0, 1, 2, 3], ["0", "1", "2", "0"]),
                "b": make_run("b", [0, 1, 2, 3], ["0", "1", "0", "3"])}
        v = verify_runs(parse_claims(data, path="c.toml"), runs, parsers=[DIGIT.name], date="2026-01-01")
    finally:
        PARSERS.unregister(DIGIT.name)
    return [f.message for f in v.flags if f.kind == "impossible"]


@pytest.mark.parametrize("metric, value, unit, problem", [
    ("regression_rate", "120", "percent", "a share cannot be 120%"),
    ("regression_share_of_old_correct", "-0.1", "fraction", "a share cannot be -0.1"),
    ("accuracy_difference", "-150", "percent", "a difference of shares cannot be -150%"),
    ("independence_ratio", "-0.5", "ratio", "a ratio of rates cannot be negative (-0.5)"),
])
def test_a_figure_outside_its_range_is_impossible(metric, value, unit, problem):
    assert _impossible(metric, value, unit) == [f"claim 'c' ({metric}): {problem}"]


@pytest.mark.parametrize("metric, value, unit", [
    ("accuracy_difference", "-25.0", "percent"), ("regression_rate", "100", "percent"),
    ("independence_ratio", "3.5", "ratio"),
])
def test_a_figure_within_its_range_is_not(metric, value, unit):
    assert _impossible(metric, value, unit) == []
