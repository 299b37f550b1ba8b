"""The difficulty baseline's refit budget: past it the default gives the baseline's point values, no interval, and why.

A real small release (the example's four runs, every ordered pair: 12 pairs x 3 bins x 200 replicates =
7,200 refits) is put past the budget by making the budget small; its point values and every other figure
stay as they were, and ``--difficulty-intervals`` gives the interval an unlimited budget gives.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import replicate.judge.uncertainty as unc
from replicate.cli.app import app
from replicate.judge.render.errors import ratio_reading
from replicate.stats.fourcell import FourCell

ARGS = ["--no-cache", "matrix", "--runs", "fixtures/example/runs.toml", "--parser", "umbrela-fallback@1",
        "--replicates", "200"]
# 4 runs: 12 ordered pairs x 3 bins; 36 x 200 is far below the 400,000 refits a command makes at most, so
# every one of the 200 replicates drawn is refit
REFITS = 12 * 3 * 200


def run(*extra: str) -> str:
    res = CliRunner().invoke(app, [*ARGS, *extra])
    assert res.exit_code == 0, res.output
    return res.stdout


def difficulty(out: str) -> list[dict]:
    return [p["independence_baselines"]["given_item_difficulty"] for p in json.loads(out)["pairs"]]


def test_budget_admits_44_runs_with_every_ordered_pair_not_48() -> None:
    assert unc.difficulty_interval_refits(44 * 43, 43) == 8_135_600 <= unc.DIFFICULTY_INTERVAL_BUDGET
    assert unc.difficulty_interval_refits(47 * 46, 46) <= unc.DIFFICULTY_INTERVAL_BUDGET
    assert unc.difficulty_interval_refits(48 * 47, 47) > unc.DIFFICULTY_INTERVAL_BUDGET
    assert f"{unc.DIFFICULTY_INTERVAL_BUDGET:,}" in CliRunner().invoke(app, ["matrix", "--help"]).output.replace("\n", " ")


def test_past_the_budget_point_values_no_interval_and_why(monkeypatch: pytest.MonkeyPatch) -> None:
    full_json, full_text = run("--format", "json"), run()
    monkeypatch.setattr(unc, "DIFFICULTY_INTERVAL_BUDGET", REFITS - 1)
    cut_json, cut_text = run("--format", "json"), run()
    full, cut = difficulty(full_json), difficulty(cut_json)
    assert all("interval" in d and "reason" not in d for d in full)
    for f, c in zip(full, cut):
        assert "interval" not in c and "resampling" not in c
        assert f"{REFITS:,} (pair, bin, replicate) refits" in c["reason"] and "--difficulty-intervals" in c["reason"]
        assert {k: v for k, v in c.items() if k != "reason"} == {
            k: v for k, v in f.items() if k not in ("interval", "resampling")}
    # every other figure and interval as with the interval
    strip = lambda out: [{**p, "independence_baselines": None} for p in json.loads(out)["pairs"]]  # noqa: E731
    assert strip(cut_json) == strip(full_json)
    assert json.loads(cut_json)["uncertainty"] == json.loads(full_json)["uncertainty"]
    line = f"Intervals: no interval computed: it would take {REFITS:,} (pair, bin, replicate) refits"
    assert line in cut_text and "--difficulty-intervals computes it" in cut_text.replace("\n", " ")
    assert line not in full_text


def test_the_option_gives_the_unlimited_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unc, "DIFFICULTY_INTERVAL_BUDGET", 10**18)
    unlimited = json.loads(run("--format", "json"))
    monkeypatch.setattr(unc, "DIFFICULTY_INTERVAL_BUDGET", REFITS - 1)
    asked = json.loads(run("--format", "json", "--difficulty-intervals"))
    assert asked["uncertainty"] == {**unlimited["uncertainty"], "difficulty_intervals": True}
    for a, u in zip(asked["pairs"], unlimited["pairs"]):  # each pair records the settings too
        assert a.pop("uncertainty").pop("difficulty_intervals") is True
        u.pop("uncertainty")
    assert asked["pairs"] == unlimited["pairs"]
    assert all("interval" in p["independence_baselines"]["given_item_difficulty"] for p in asked["pairs"])


def test_the_reading_names_why_there_is_no_verdict() -> None:
    from replicate.stats.bootstrap import Interval

    iv = Interval(0.5, 0.9, "cluster-bootstrap-percentile", 200, "query_id", 18, 0.95, 0)
    reason = unc.difficulty_over_budget(10_000, 50, unc.Uncertainty())
    assert reason is not None and "no interval computed" in reason
    assert unc.difficulty_over_budget(10_000, 50, unc.Uncertainty(difficulty_intervals=True)) is None
    assert unc.difficulty_over_budget(10_000, 50, unc.Uncertainty(replicates=0)) is None
    err = unc.EdgeUncertainty(
        interval={"independence_ratio": iv}, mcnemar_statistic=1.0, mcnemar_p=0.3, clusters=18, cluster="query_id",
        difficulty_expected=0.1, difficulty_other_runs=48, difficulty_reason=reason,
    )
    text = ratio_reading(FourCell(both=50, only_old=10, only_new=5, neither=35), err)
    assert f"{reason}, so no verdict on shared errors" in text


def test_the_count_is_of_the_replicates_drawn_when_fewer_than_a_hundred() -> None:
    """With --replicates 50 the refits are 50 a pair and bin, not the 100 of the floor: the budget and the
    reason count what would run (100 x 10,000 pairs x 49 bins is past the budget, 10 x 10,000 x 49 is not)."""
    reason = unc.difficulty_over_budget(10_000, 50, unc.Uncertainty(replicates=50))
    assert reason is not None and f"{10_000 * 49 * 50:,} (pair, bin, replicate) refits" in reason
    assert "x 49 bins x 50 replicates" in reason
    assert unc.difficulty_over_budget(10_000, 50, unc.Uncertainty(replicates=10)) is None
