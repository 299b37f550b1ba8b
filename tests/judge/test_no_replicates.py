"""``--replicates 0``: no intervals, but everything that needs no resampling, with the same values.

The clustered McNemar test, the difficulty baseline's point values and the
``--min-items`` flags come from counts alone; turning the bootstrap off must
not drop them (nor change them).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.judge.align import align
from replicate.judge.compare import compare
from replicate.judge.floor import floor
from replicate.judge.floor.checks import POINT_RULE
from replicate.judge.matrix import matrix
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import Uncertainty, edge_uncertainty
from replicate.stats.independence import difficulty_baseline
from support.clustered import runs_over, write_judge_files

P = "umbrela-fallback@1"


def test_settings_take_zero_replicates_but_not_fewer():
    assert Uncertainty(replicates=0).resampled is False
    assert Uncertainty(replicates=1).resampled is True
    assert Uncertainty(replicates=0).to_json()["replicates"] == 0
    with pytest.raises(ValueError, match="replicates must be an integer >= 0"):
        Uncertainty(replicates=-1)


@pytest.mark.parametrize("cluster", [None, "item"])
def test_unresampled_edges_keep_mcnemar_and_difficulty_with_the_resampled_values(cluster):
    runs = runs_over(20, 9, 5, seed=4, skip={1: 7})
    al = align(runs)
    pairs = [(i, j) for i in range(5) for j in range(5) if i != j]
    off = edge_uncertainty(al, pairs, Uncertainty(replicates=0, cluster=cluster))
    on = edge_uncertainty(al, pairs, Uncertainty(replicates=120, cluster=cluster))
    direct = difficulty_baseline(al.labels, al.gold, pairs)
    for k, (a, b) in enumerate(zip(off, on)):
        assert a.interval == {} and not a.resampled and a.difficulty_interval is None and a.difficulty_resampling is None
        assert b.resampled
        assert (a.mcnemar_statistic, a.mcnemar_p) == (b.mcnemar_statistic, b.mcnemar_p)
        assert (a.cluster, a.clusters) == (b.cluster, b.clusters)
        assert a.difficulty_expected == b.difficulty_expected == float(direct.expected[k])
        assert a.difficulty_other_runs == b.difficulty_other_runs == 3
    if cluster == "item":  # one item per cluster: the classic statistic, counted by hand
        old, new = al.labels[pairs[0][0]], al.labels[pairs[0][1]]
        right_old, right_new = old == al.gold, new == al.gold
        only_old = int((right_old & ~right_new).sum())
        only_new = int((~right_old & right_new).sum())
        assert off[0].mcnemar_statistic == pytest.approx((only_old - only_new) ** 2 / (only_old + only_new), rel=1e-12)
        assert off[0].cluster is None and off[0].clusters == al.n_items
    else:
        assert off[0].cluster == "query_id" and off[0].clusters == 20


def test_compare_without_replicates_flags_a_small_sample_and_keeps_the_clustered_test():
    old, new = runs_over(12, 10, 2, seed=2)
    cmp = compare(old, new, uncertainty=Uncertainty(replicates=0, min_items=500))
    js = cmp.to_json()
    assert "interval" not in js
    assert js["small_sample"] is True and js["uncertainty"]["replicates"] == 0
    assert js["mcnemar_clustered"]["clusters"] == 12 and 0 <= js["mcnemar_clustered"]["p"] <= 1
    classic = js["independence_baselines"]["classic"]
    assert "interval" not in classic and classic["ratio"] == js["independence_ratio"]
    assert js["independence_baselines"]["given_item_difficulty"]["available"] is False  # two runs only
    assert not compare(old, new, uncertainty=Uncertainty(replicates=0, min_items=120)).small  # n = 120


def test_matrix_without_replicates_gives_the_difficulty_ratio_and_flags_small_pairs():
    runs = runs_over(10, 8, 4, seed=9, skip={3: 30})
    off = matrix(runs, uncertainty=Uncertainty(replicates=0, min_items=60))
    on = matrix(runs, uncertainty=Uncertainty(replicates=100, min_items=60))
    np.testing.assert_array_equal(off.difficulty_matrix(), on.difficulty_matrix())
    assert not np.isnan(off.difficulty_matrix()[0, 1])
    assert all(b.interval is None for b in off.baselines)
    small = [f for f in off.flags if f.code == "small_sample"]
    assert len(small) == 1 and "12 pair(s)" in small[0].message and "no intervals computed" in small[0].message
    assert [f.code for f in on.flags] == [f.code for f in off.flags]
    js = off.to_json()
    assert js["uncertainty"]["replicates"] == 0
    assert all("interval" not in p and "interval" not in p["independence_baselines"]["given_item_difficulty"]
               for p in js["pairs"])
    on_pairs = on.to_json()["pairs"]
    for p, q in zip(js["pairs"], on_pairs):
        assert p["mcnemar_clustered"] == q["mcnemar_clustered"]
        assert p["independence_baselines"]["given_item_difficulty"]["ratio"] == q["independence_baselines"]["given_item_difficulty"]["ratio"]


def test_floor_without_replicates_places_the_point_rate_and_still_flags_small_samples():
    repeats = runs_over(10, 6, 3, seed=5)
    old, new = runs_over(10, 6, 2, seed=6)
    fl = floor(repeats, edge=(old, new), uncertainty=Uncertainty(replicates=0, min_items=100))
    assert all(p.interval is None for p in fl.pairs) and fl.regression_span_with_error is None
    assert [f.where for f in fl.sample_flags] == ["floor"]
    assert fl.edge is not None and fl.edge.interval is None
    # the small-sample flag is raised: no verdict (insufficient data, with n and why); the point placement is kept
    assert fl.edge.verdict == "insufficient_data" and fl.edge.point_verdict in ("below", "inside", "above")
    info = fl.edge.insufficient_json()
    assert info is not None and info["n"] == fl.edge.comparison.cells.n and "fewer than --min-items 100" in info["reason"]
    assert [f.code for f in fl.edge.sample_flags] == ["small_sample"]
    assert fl.edge.sample_flags[0].message.endswith("(no intervals computed: --replicates 0)")
    js = fl.to_json()
    assert js["edge"]["verdict_rule"] == POINT_RULE
    assert "interval" not in js["edge"]["placement"]["regression_rate"]
    assert js["regression_rate_with_error"] is None and js["uncertainty"]["replicates"] == 0


@pytest.fixture()
def files(tmp_path):
    return write_judge_files(tmp_path, runs_over(12, 10, 4, seed=7))


def _run(*args: str):
    res = CliRunner().invoke(app, ["--no-cache", *args, "-p", P, "--replicates", "0", "--min-items", "500"])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_cli_compare_and_chain_without_replicates(files):
    text = _run("compare", files[0], files[1])
    assert "McNemar clustered p              by query_id (Durkalski)" in text
    assert "Warning: only n = 120 items compared (fewer than --min-items 500)" in text
    assert "clustered test (12 query_id clusters) does not" in text
    js = json.loads(_run("compare", files[0], files[1], "-f", "json"))
    assert js["small_sample"] is True and "interval" not in js
    chain = _run("chain", *files)
    assert "McNemar p" in chain and "(clustered)" in chain and "95%" not in chain
    assert "Expected regression given item difficulty (from the other 2 runs)" in chain
    assert chain.count("fewer than --min-items 500: too few for a verdict (no intervals computed: --replicates 0)") == 3


def test_cli_matrix_and_floor_without_replicates(files):
    text = _run("matrix", *files)
    assert "Clustered McNemar test of every pair" in text
    assert "regression / rate expected from errors independent given item difficulty" in text
    assert "No bootstrap intervals were computed (--replicates 0)." in text
    assert "12 pair(s) compared on fewer than --min-items 500 items" in text
    assert "[" not in text.split("Baselines against gold")[1].split("EM is over")[0]  # no EM intervals
    fl = json.loads(_run("floor", files[0], files[1], "--edge", f"{files[2]}:{files[3]}", "-f", "json"))
    assert [f["where"] for f in fl["sample_flags"]] == ["floor"]
    assert [f["code"] for f in fl["edge"]["sample_flags"]] == ["small_sample"]
    assert "interval" not in fl["pairs"][0]


def test_cli_parsers_audit_without_replicates_warns_on_small_edges(files):
    res = CliRunner().invoke(app, ["--no-cache", "parsers", "audit", "-p", P, "-p", "umbrela-strict@1", *files[:2],
                                   "--edge", f"{files[0]}:{files[1]}", "--replicates", "0", "--min-items", "500"])
    assert res.exit_code == 0, res.output
    assert "too few for a verdict; no intervals were computed (--replicates 0)." in res.stdout
    assert "Intervals:" not in res.stdout


def test_cli_matrix_without_replicates_has_the_resampled_mcnemar_p(files):
    """The CLI's --replicates 0 matrix JSON carries the same McNemar p as the library's resampled one."""
    js = json.loads(_run("matrix", *files, "-f", "json"))
    runs = []
    for path in files:
        rows = [json.loads(line) for line in open(path)]
        keys = np.array([f"{r['query_id']}{KEY_SEP}{r['corpus_id']}" for r in rows], dtype=object)
        labels = np.array([int(r["model_output"][-1]) for r in rows], np.int8)
        runs.append(LabelledRun(path, keys, np.zeros(len(rows), np.int16), labels, P))
    on = matrix(runs, uncertainty=Uncertainty(replicates=50)).to_json()
    assert [p["mcnemar_clustered"]["p"] for p in js["pairs"]] == [p["mcnemar_clustered"]["p"] for p in on["pairs"]]
