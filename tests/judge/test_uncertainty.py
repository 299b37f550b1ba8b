"""Intervals, clustered McNemar, floor verdicts with sampling error and sample flags, through the library and the CLI."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.judge.align import align
from replicate.judge.compare import chain, compare
from replicate.judge.floor import floor
from replicate.judge.matrix import matrix
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.bootstrap import Clusters, bootstrap_pairs, interval_figures
from support.ci import used
from support.clustered import runs_over, write_judge_files

FIGURES = interval_figures()  # every edge figure of the one table

P = "umbrela-fallback@1"


def test_compare_carries_an_interval_per_figure_matching_a_direct_bootstrap():
    old, new = runs_over(30, 8, 2, seed=1)
    st = Uncertainty(replicates=400, seed=3)
    cmp = compare(old, new, uncertainty=st)
    js = cmp.to_json()
    assert "interval" not in js and set(used(js)) == set(FIGURES)
    al = align([old, new])
    clusters = Clusters.from_keys(al.keys, field=0, name="query_id", sep=KEY_SEP)
    direct = bootstrap_pairs(al.labels, al.gold, [(0, 1)], clusters=clusters, n_resamples=400, seed=3).intervals()[0]
    for f in FIGURES:
        assert used(js)[f]["low"] == direct[f].low and used(js)[f]["high"] == direct[f].high
        assert used(js)[f]["cluster"] == "query_id" and used(js)[f]["clusters"] == 30
    reg = used(js)["regression_rate"]
    assert reg["low"] <= js["regression_rate"] <= reg["high"]
    assert js["uncertainty"] == {"replicates": 400, "seed": 3, "cluster": "query_id", "confidence_level": 0.95, "min_items": 100}
    assert js["mcnemar_clustered"]["cluster"] == "query_id" and 0 <= js["mcnemar_clustered"]["p"] <= 1
    assert js["independence_baselines"]["given_item_difficulty"]["available"] is False  # two runs only
    assert js["small_sample"] is False and "independent" in js["mcnemar_assumes"]


def test_cluster_item_gives_the_item_bootstrap_and_a_narrower_interval_on_clustered_items():
    old, new = runs_over(20, 15, 2, seed=2)
    by_query = compare(old, new, uncertainty=Uncertainty(replicates=800)).uncertainty
    by_item = compare(old, new, uncertainty=Uncertainty(replicates=800, cluster="item")).uncertainty
    assert by_item is not None and by_query is not None
    assert by_item.cluster is None and by_item.interval["em_old"].method == "item-bootstrap-percentile"
    width = {k: u.interval["em_old"].high - u.interval["em_old"].low for k, u in (("q", by_query), ("i", by_item))}
    assert width["i"] < width["q"]


def test_unknown_cluster_field_is_a_usage_error_naming_the_fields(tmp_path):
    old, new = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (old, new):
        path.write_text(json.dumps({"query_id": "1", "corpus_id": "x", "original_qrel_score": 1, "model_output": "##final score: 1"}) + "\n")
    res = CliRunner().invoke(app, ["compare", str(old), str(new), "-p", P, "--cluster", "topic"])
    assert res.exit_code == 2
    assert "--cluster: cluster must be one of the key fields (query_id, corpus_id) or 'item'; got 'topic'" in res.output


def test_chain_reports_dropped_items_per_run_and_small_edges():
    runs = runs_over(10, 5, 3, seed=4, skip={1: 7})
    st = Uncertainty(replicates=200, min_items=60)
    edges = chain(runs, uncertainty=st)
    from replicate.judge.samples import dropped_per_run, edge_flags

    assert [(r["name"], r["dropped"]) for r in dropped_per_run(edges)] == [("r0", 7), ("r1", 0), ("r2", 7)]
    flags = edge_flags(edges, min_items=60)
    assert [f.code for f in flags] == ["items_dropped", "items_dropped", "small_sample", "small_sample"]
    assert "7 of its 50 items are missing from other runs" in flags[0].message
    assert "only n = 43 items, fewer than --min-items 60" in flags[2].message


def test_chain_and_matrix_with_four_runs_give_the_difficulty_baseline():
    runs = runs_over(20, 10, 5, seed=5)
    m = matrix(runs, uncertainty=Uncertainty(replicates=200))
    js = m.to_json()
    base = js["pairs"][0]["independence_baselines"]
    assert base["given_item_difficulty"]["available"] and base["given_item_difficulty"]["other_runs"] == 3
    exp = base["given_item_difficulty"]["expected_regression_rate"]
    assert base["given_item_difficulty"]["ratio"] == pytest.approx(js["pairs"][0]["regression_rate"] / exp)
    # the shared difficulty lowers the expectation below the classic EM_old x (1 - EM_new)
    assert exp < base["classic"]["expected_regression_rate"]
    assert np.isfinite(m.difficulty_matrix()[0, 1]) and np.isnan(m.difficulty_matrix()[0, 0])


def _edge_runs(n_queries: int, regress_per_query: int):
    """Repeats that regress 1 item per 20-item query; an edge that regresses ``regress_per_query``."""
    per = 20
    n = n_queries * per
    keys = np.array([f"q{i // per}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    gold = np.zeros(n, np.int16)
    base = np.zeros(n, np.int8)
    rep = base.copy()
    rep[::per] = 1  # repeat 2 wrong on one item per query
    rep3 = base.copy()
    rep3[1::per] = 1
    new = base.copy()
    for k in range(regress_per_query):
        new[k + 2 :: per] = 1
    mk = lambda name, lab: LabelledRun(name, keys, gold, lab, "toy@1")  # noqa: E731
    return [mk("R1", base), mk("R2", rep), mk("R3", rep3)], (mk("old", base), mk("new", new))


def test_floor_verdict_above_needs_the_interval_to_clear_the_range():
    repeats, edge = _edge_runs(30, 4)  # repeats regress 0-5%, the edge 20% in every query: clears it
    fl = floor(repeats, edge=edge, uncertainty=Uncertainty(replicates=300))
    assert fl.edge is not None and fl.edge.verdict == "above" and fl.edge.interval is not None
    assert fl.edge.interval.low > fl.regression_span.max
    assert fl.edge.floor_mean == Fraction(1, 30)  # mean over the 6 ordered pairs: (0 + .05 + .05 + ... ) / 6
    assert fl.edge.floor_ratio == pytest.approx(0.2 / (1 / 30))


def test_floor_verdict_is_indistinguishable_when_the_interval_reaches_the_range():
    repeats, (old, new) = _edge_runs(10, 1)
    # the edge regresses 5% of items, in 2 of 10 queries only: just above a 0-5% floor? make it 6% on few queries
    lab = np.zeros(len(old.keys), np.int8)
    lab[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]] = 1  # 12 of 200 = 6%, all in query 0
    new = LabelledRun("new", old.keys, old.gold, lab, "toy@1")
    fl = floor(repeats, edge=(old, new), uncertainty=Uncertainty(replicates=300))
    assert fl.edge is not None
    assert fl.edge.point_verdict == "above" and fl.edge.verdict == "indistinguishable"
    js = fl.to_json()["edge"]
    assert js["verdict"] == "indistinguishable" and js["point_verdict"] == "above"
    assert fl.to_json()["regression_rate_with_error"]["high"] >= fl.regression_span.max
    # without intervals the old point placement is the verdict
    assert floor(repeats, edge=(old, new)).edge.verdict == "above"


def test_floor_flags_an_edge_over_other_items_and_a_small_floor():
    repeats, (old, new) = _edge_runs(3, 1)
    fewer = LabelledRun("new", new.keys[:50], new.gold[:50], new.labels[:50], "toy@1")
    fl = floor(repeats, edge=(old, fewer), uncertainty=Uncertainty(replicates=100, min_items=100))
    assert [f.code for f in fl.sample_flags] == ["small_sample"]
    codes = [f.code for f in fl.edge.sample_flags]
    assert codes == ["items_differ_from_floor", "small_sample"]
    assert "the edge has 50 items and the floor 60: 0 of the edge's are not in the floor and 10" in fl.edge.sample_flags[0].message


def test_cli_json_of_compare_chain_matrix_floor_carries_intervals(tmp_path):
    files = write_judge_files(tmp_path, runs_over(12, 10, 3, seed=7))
    invoke = lambda *a: CliRunner().invoke(app, [*a, "-p", P, "-f", "json", "--replicates", "150"])  # noqa: E731
    cmp = json.loads(invoke("compare", files[0], files[1]).stdout)
    assert used(cmp)["regression_rate"]["replicates"] == 150
    ch = json.loads(invoke("chain", *files).stdout)
    assert all(used(e)["regression_rate"]["replicates"] == 150 for e in ch["edges"]) and ch["uncertainty"]["replicates"] == 150
    assert ch["runs"][0] == {"name": "r0", "items": 120, "dropped": 0, "unparsed": 0}
    mx = json.loads(invoke("matrix", *files).stdout)
    assert len(mx["pairs"]) == 6 and all(used(p)["independence_ratio"]["method"] for p in mx["pairs"])
    fl = json.loads(invoke("floor", files[0], files[1], "--edge", f"{files[1]}:{files[2]}").stdout)
    assert fl["pairs"][0]["interval"]["regression_rate"]["cluster"] == "query_id"
    assert fl["edge"]["verdict"] in ("above", "below", "inside", "indistinguishable")
    off = json.loads(CliRunner().invoke(app, ["compare", files[0], files[1], "-p", P, "-f", "json", "--replicates", "0"]).stdout)
    assert "interval" not in off and "mcnemar_log10_p" in off


def test_floor_range_widened_by_its_own_error_turns_an_old_above_into_indistinguishable_under_the_range_rule():
    """Hand-made: the floor's max pair regresses 5% all in 4 of 40 queries (a wide interval), the edge 7.5% evenly.

    The edge's interval (about 7.1-7.9%) clears the floor's range 0-5%, so the old rule said "above"; the
    floor's max pair has an interval reaching well past 7.5% (its 40 regressions sit in 4 queries), so
    against the widened range the edge is "indistinguishable".
    """
    from replicate.judge.floor.checks import interval_verdict

    per, queries = 20, 40
    n = per * queries
    keys = np.array([f"q{i // per}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    gold = np.zeros(n, np.int16)
    mk = lambda name, lab: LabelledRun(name, keys, gold, lab, "toy@1")  # noqa: E731
    right = np.zeros(n, np.int8)
    r2 = right.copy()
    r2[: 4 * per : 2] = 1  # 10 wrong items in each of queries 0-3: 40 of 800 = 5%
    new = right.copy()
    for q in range(queries):  # 1 wrong item in even queries, 2 in odd ones: 60 of 800 = 7.5%
        new[q * per : q * per + 1 + q % 2] = 1
    fl = floor([mk("R1", right), mk("R2", r2)], edge=(mk("old", right), mk("new", new)),
               uncertainty=Uncertainty(replicates=1000, seed=0))
    e = fl.edge
    assert e is not None and fl.regression_span.lo == 0 and fl.regression_span.hi == Fraction(1, 20)
    assert e.regression.exact == Fraction(3, 40)
    assert e.interval.low > 0.05  # the old rule: the interval clears the range's max
    assert interval_verdict(e.regression.exact, fl.regression_span, e.interval) == "above"
    bounds = fl.regression_span_with_error
    # the max pair R1 -> R2: its interval high is that of the pair at 5%, not the lower pair R2 -> R1 at 0
    max_pair = next(p for p in fl.pairs if p.old == "R1")
    assert bounds.high == fl.range_interval["max"].high > e.interval.low
    assert bounds.high == pytest.approx(max_pair.interval["regression_rate"].high, abs=0.005)  # same draws, no Wilson floor
    assert bounds.low == 0.0
    assert e.point_verdict == "above" and e.range_verdict == "indistinguishable"
    js = fl.to_json()
    assert js["edge"]["range_verdict"] == "indistinguishable"
    assert js["edge"]["floor_with_error"]["high"] == bounds.high
    # the verdict is the paired test's (tests/judge/test_floor_paired.py): 7.5% against the pairs' mean 2.5%
    assert e.paired is not None and js["edge"]["verdict"] == e.verdict == ("above" if e.paired.low > 0 else "indistinguishable")
    assert js["regression_rate_with_error"]["method"].startswith("the floor's range widened")


def test_a_cluster_bootstrap_over_one_cluster_gives_no_interval_and_says_why(tmp_path):
    import json

    from typer.testing import CliRunner

    from replicate.cli.app import app

    # every item in query 7: resampling that one query whole gives the sample itself in every replicate
    for name, outs in (("old", "0101010111"), ("new", "0111010011")):
        rows = [{"query_id": "7", "corpus_id": f"d{i}", "original_qrel_score": float(i % 2),
                 "model_output": f"##final score: {o}"} for i, o in enumerate(outs)]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["compare", str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl"), "-p", "umbrela-strict@1",
            "--replicates", "200"]
    js = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)
    def walk(node):
        if isinstance(node, dict):
            if {"low", "high", "clusters", "cluster"} <= set(node):
                yield node
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)

    ivs = [iv for iv in walk(js) if iv["cluster"] == "query_id"]
    # one cluster: no interval (null bounds) and the reason, never a zero-width range
    assert ivs and all(iv["clusters"] == 1 and iv["low"] is None and iv["high"] is None for iv in ivs)
    assert all(iv["reason"].startswith("too few query_id clusters for an interval: 1, fewer than 5") for iv in ivs)
    text = CliRunner().invoke(app, args).stdout
    assert "Warning: no intervals: too few query_id clusters for an interval: 1" in text
    assert "no interval (1 cluster)" in text and "[36.7%, 36.7%]" not in text
    assert "insufficient data for a verdict" in text  # the reading shows the ratio but does not read it
    # two clusters and more than the minimum: no reason
    from replicate.stats.bootstrap import Interval
    from replicate.stats.few_clusters import MIN_CLUSTERS, too_few_clusters
    assert too_few_clusters("query_id", MIN_CLUSTERS) is None and too_few_clusters(None, 1) is None
    iv = Interval(0.1, 0.2, "cluster-bootstrap-t-percentile", 10, "query_id", 6, 0.95, 0)
    assert iv.to_json()["assumes"] is None
