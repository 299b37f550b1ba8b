"""No verdict the data cannot carry: too few items or clusters, figures that are not computable, tests on no items."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from replicate.judge.compare import compare
from replicate.judge.floor import floor
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.render import reading
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.fourcell import FourCell
from support.ci import used


def run(name: str, right: np.ndarray, clusters: int) -> LabelledRun:
    """A run over ``len(right)`` items in ``clusters`` query clusters; gold 0, a wrong item labelled 1."""
    n = len(right)
    keys = np.array([f"q{i * clusters // n}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    return LabelledRun(name, keys, np.zeros(n, np.int16), np.where(right, 0, 1).astype(np.int8), "toy@1")


def test_one_cluster_floor_gives_insufficient_data_not_below():
    """One query of 300 items: the old rule read a zero-width interval as 'below'; now no verdict, and why."""
    rng = np.random.default_rng(1)
    base = rng.random(300) < 0.7
    r1, r2 = base.copy(), base.copy()
    r2[:30] = ~r2[:30]  # the repeats differ on 30 items
    new = base.copy()
    old = base.copy()
    old[:3] = True
    new[:3] = False  # the edge regresses on at most 3 of 300: well under the floor's rate
    fl = floor([run("R1", r1, 1), run("R2", r2, 1)], edge=(run("old", old, 1), run("new", new, 1)),
               uncertainty=Uncertainty(replicates=200))
    e = fl.edge
    assert e is not None and e.point_verdict == "below" and e.verdict == "insufficient_data"
    info = e.insufficient_json()
    assert info is not None and (info["n"], info["clusters"], info["cluster"]) == (300, 1, "query_id")
    assert info["reason"].startswith("too few query_id clusters for an interval: 1")
    assert e.interval is not None and e.interval.low is None
    assert fl.to_json()["edge"]["verdict"] == "insufficient_data"


def test_enough_clusters_and_items_keep_the_verdict():
    rng = np.random.default_rng(2)
    base = rng.random(400) < 0.7
    r2 = base.copy()
    r2[::40] = ~r2[::40]
    old, new = base.copy(), base.copy()
    old[::4] = True
    new[::4] = False  # regresses on many items spread over every cluster
    fl = floor([run("R1", base, 20), run("R2", r2, 20)], edge=(run("old", old, 20), run("new", new, 20)),
               uncertainty=Uncertainty(replicates=300))
    assert fl.edge is not None and fl.edge.insufficient is None and fl.edge.verdict == "above"


def test_no_items_gives_null_mcnemar_p_not_1():
    cells = FourCell(0, 0, 0, 0)
    assert cells.mcnemar_p() is None and cells.figures()["mcnemar_p"] is None
    assert cells.figures()["mcnemar_log10_p"] is None
    assert FourCell(3, 0, 0, 2).mcnemar_p() == 1.0  # items, but no discordant pair: p is 1
    a = run("a", np.ones(12, bool), 6)
    a = replace(a, labels=np.full(12, -1, np.int8))  # every item unparsed: none compared under intersect
    cmp = compare(a, run("b", np.ones(12, bool), 6), uncertainty=Uncertainty(replicates=50))
    assert cmp.cells.n == 0 and cmp.uncertainty is not None and cmp.uncertainty.mcnemar_p is None
    js = cmp.to_json()
    assert js["mcnemar_p"] is None and js["mcnemar_clustered"]["p"] is None


def test_change_rate_of_correctness_only_runs_has_no_interval():
    rng = np.random.default_rng(3)
    a, b = (replace(run(n, rng.random(60) < 0.6, 6), yields="verdicts") for n in ("a", "b"))
    cmp = compare(a, b, uncertainty=Uncertainty(replicates=100))
    assert cmp.change_rate is None
    iv = cmp.uncertainty.interval["change_rate"]
    assert iv.low is None and iv.high is None and "change_rate needs labels" in iv.reason
    assert cmp.uncertainty.interval["regression_rate"].low is not None
    assert used(cmp.to_json())["change_rate"]["low"] is None


def test_reading_gives_no_verdict_on_a_small_sample():
    cells = FourCell(40, 2, 10, 8)
    text = reading(cells, None, "only n = 60 items compared, fewer than --min-items 100")
    assert "insufficient data for a verdict (only n = 60 items compared" in text
    assert "more regressions" not in text and "fewer regressions" not in text
