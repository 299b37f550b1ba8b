"""rankings against independent references: ir-measures' own readers and aggregates, scipy, tau_AP as printed."""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pytest
from scipy import stats

from replicate.errors import UsageError
from replicate.rankings import ranking_agreement
from support.paths import LLMJUDGE, text_of
from support.rankings import scenario, tau_ap_tie_breaks


def _reference(runs, ref, est, measure):
    """Each run's aggregate under each qrels, read and scored by ir-measures alone."""
    m = ir_measures.parse_measure(measure)
    out = []
    for q in (ref, est):
        qrels = list(ir_measures.read_trec_qrels(str(q)))
        out.append(np.array([ir_measures.calc_aggregate([m], qrels, list(ir_measures.read_trec_run(str(r))))[m]
                             for r in runs]))
    return out


def _check_against_references(res, runs, ref, est, measure):
    a, b = _reference(runs, ref, est, measure)
    assert [s.name for s in res.systems] == [r.stem for r in runs]
    assert np.array_equal([s.scores[0] for s in res.systems], a)
    assert np.array_equal([s.scores[1] for s in res.systems], b)
    assert res.kendall_tau == stats.kendalltau(a, b).statistic
    assert res.spearman == stats.spearmanr(a, b).statistic
    # ties (P@5 gives some) broken every way and averaged: the printed formula when there are none
    assert res.tau_ap == pytest.approx(tau_ap_tie_breaks(a.tolist(), b.tolist()), abs=1e-12)
    assert res.statistic("kendall_tau") == res.kendall_tau and res.statistic("tau_ap") == res.tau_ap


@pytest.mark.parametrize("measure", ["nDCG@10", "AP", "P@5"])
def test_values_equal_scipy_over_ir_measures_aggregates(tmp_path, measure):
    runs, ref, est = scenario(tmp_path)
    res = ranking_agreement(runs, [ref, est], measure=measure, n_resamples=50)
    _check_against_references(res, runs, ref, est, measure)


def test_topics_missing_from_a_qrels_are_counted(tmp_path):
    runs, ref, est = scenario(tmp_path)
    res = ranking_agreement(runs, [ref, est], n_resamples=0)
    assert res.only_reference == ("t1",) and res.only_estimate == ("t7",) and res.topics_both == 5
    first, last = res.systems[0], res.systems[-1]
    # every run retrieves for t1..t7: t7 is not judged by the reference, t1 not by the estimate
    assert first.coverage[0].unjudged == ("t7",) and first.coverage[1].unjudged == ("t1",)
    assert first.coverage[0].unretrieved == () and first.coverage[1].unretrieved == ()
    # the last run has nothing for t3: ir-measures scores it 0 under both qrels
    assert last.coverage[0].unretrieved == ("t3",) and last.coverage[1].unretrieved == ("t3",)
    assert res.intervals == {}
    body = res.to_json()
    assert body["topics"] == {"reference": 6, "estimate": 6, "both": 5, "only_reference": ["t1"],
                              "only_estimate": ["t7"]}
    assert body["systems"][-1]["reference"]["unretrieved"] == 1


def test_bootstrap_is_seeded_and_recorded(tmp_path):
    runs, ref, est = scenario(tmp_path)
    a = ranking_agreement(runs, [ref, est], n_resamples=200, seed=7)
    b = ranking_agreement(runs, [ref, est], n_resamples=200, seed=7)
    c = ranking_agreement(runs, [ref, est], n_resamples=200, seed=8)
    assert a.intervals == b.intervals and a.intervals != c.intervals
    iv = a.to_json()["statistics"]["tau_ap"]["interval"]
    assert iv["seed"] == 7 and iv["replicates"] == 200 and iv["cluster"] == "topic" and iv["clusters"] == 7
    assert iv["method"] == "topic-bootstrap-t-percentile" and iv["low"] <= iv["high"]


def test_intervals_stretch_the_percentile_arms_for_the_number_of_topics(tmp_path):
    # the same replicates, their percentiles, each arm times sqrt(G/(G-1)) t_{G-1} / z (scipy's quantiles)
    from scipy.stats import norm, t as t_dist

    from replicate.diagnostics import Diagnostics
    from replicate.rankings.compute import parse_measure, score
    from replicate.rankings.load import read_qrels, read_runs
    from replicate.stats.bootstrap import percentile_bounds
    from replicate.stats.ranking import STATISTICS, bootstrap_rankings, correlations

    runs, ref, est = scenario(tmp_path)
    res = ranking_agreement(runs, [ref, est], n_resamples=300, seed=5)
    m = parse_measure("nDCG@10")
    files = read_runs(runs, Diagnostics())
    qrels = [read_qrels(q, Diagnostics()) for q in (ref, est)]
    topics = sorted(qrels[0].topics | qrels[1].topics)
    a, b = (score(files, q, m, topics) for q in qrels)
    boot = bootstrap_rankings(a.per_topic, a.judged, b.per_topic, b.judged, n_resamples=300,
                              rng=np.random.default_rng(5))
    point = correlations(a.aggregate, b.aggregate)
    G = len(topics)
    c = np.sqrt(G / (G - 1)) * t_dist.ppf(0.975, G - 1) / norm.ppf(0.975)
    for k, name in enumerate(STATISTICS):
        lo, hi, _ = percentile_bounds(np.column_stack([boot.values[s] for s in STATISTICS]), 0.95)
        want_lo = max(-1.0, point[name] - c * (point[name] - lo[k]))
        want_hi = min(1.0, point[name] + c * (hi[k] - point[name]))
        iv = res.intervals[name]
        assert (iv.low, iv.high) == pytest.approx((want_lo, want_hi), abs=1e-12), name


def test_swaps_by_hand(tmp_path):
    runs, ref, est = scenario(tmp_path, n_systems=8)
    res = ranking_agreement(runs, [ref, est], n_resamples=0)
    score = {s.name: s.scores for s in res.systems}
    want = {(i, j) for i in score for j in score if score[i][0] > score[j][0] and score[i][1] < score[j][1]}
    assert set(res.swaps) == want and len(res.swaps) == len(want)


def test_bad_requests(tmp_path):
    runs, ref, est = scenario(tmp_path)
    with pytest.raises(UsageError, match="qrels must name exactly two files"):
        ranking_agreement(runs, [ref])
    with pytest.raises(UsageError, match="measure 'ndcg@10' is not an ir-measures measure name"):
        ranking_agreement(runs, [ref, est], measure="ndcg@10")
    with pytest.raises(UsageError, match="not a mean over topics"):
        ranking_agreement(runs, [ref, est], measure="NumRet")
    with pytest.raises(UsageError, match="two or more systems"):
        ranking_agreement(runs[:1], [ref, est])


def test_llmjudge_topics_synthetic_runs_against_scipy(tmp_path):
    """Synthetic runs over the LLMJudge topics and documents, ranked under the human and an LLM judge's qrels."""
    from replicate.examples.trec_runs import read_judgments, synthetic_runs, write_runs

    plain = {}
    for name in ("llmjudge_test_qrel_idx.txt", "willia-umbrela1.txt", "h2oloo-zeroshot1.txt"):
        plain[name] = tmp_path / name  # the committed .gz, decompressed for ir-measures' own reader
        plain[name].write_text(text_of(LLMJUDGE / f"{name}.gz"), encoding="utf-8")
    human = plain["llmjudge_test_qrel_idx.txt"]
    runs = write_runs(synthetic_runs(read_judgments(LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz"), n_systems=12, seed=0),
                      tmp_path / "runs")
    for judge in ("willia-umbrela1.txt", "h2oloo-zeroshot1.txt"):
        res = ranking_agreement(runs, [human, plain[judge]], n_resamples=100)
        _check_against_references(res, runs, human, plain[judge], "nDCG@10")
        assert res.topics_both == 25 and not math.isnan(res.tau_ap)


def test_per_topic_means_are_the_aggregates(tmp_path):
    """The bootstrap's per-topic table reproduces ir-measures' aggregate (the identity replicate)."""
    from replicate.diagnostics import Diagnostics
    from replicate.rankings.compute import parse_measure, score
    from replicate.rankings.load import read_qrels, read_runs

    runs, ref, est = scenario(tmp_path)
    files = read_runs(runs, Diagnostics())
    for q in (read_qrels(ref, Diagnostics()), read_qrels(est, Diagnostics())):
        topics = [f"t{k}" for k in range(1, 8)]
        s = score(files, q, parse_measure("nDCG@10"), topics)
        assert s.judged.tolist() == [t in q.topics for t in topics]
        assert np.allclose(s.per_topic[:, s.judged].mean(axis=1), s.aggregate, atol=1e-15, rtol=0)
        assert (s.per_topic[:, ~s.judged] == 0).all()


def test_identical_runs_tie(tmp_path):
    runs, ref, est = scenario(tmp_path, n_systems=4)
    twin = runs[0].with_name("twin.txt")
    twin.write_text(runs[0].read_text())
    res = ranking_agreement([*runs, twin], [ref, est], n_resamples=50)
    _check_against_references(res, [*runs, twin], ref, est, "nDCG@10")
    by = {s.name: s for s in res.systems}
    assert by["twin"].scores == by["sys01"].scores and by["twin"].ranks == by["sys01"].ranks
    assert not any({"twin", "sys01"} == set(pair) for pair in res.swaps)
