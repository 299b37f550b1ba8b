"""Scoring runs under two qrels with ir-measures and comparing the orderings (no file access).

Every score comes from ir-measures (the field's library; no measure is written
here): per system and qrels, its aggregate is the system's score and its
per-topic values feed the topic bootstrap. Topics as ir-measures handles them:
a topic the qrels judges and the run has no result for is scored with the
measure's default (0); a topic of the run the qrels does not judge is not
scored; the aggregate is the mean over the qrels' topics. Both are counted
per system and qrels (:class:`~replicate.rankings.result.TopicCoverage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import numpy as np

from replicate.errors import Message, Param, UsageError
from replicate.rankings.model import Qrels, RunFile
from replicate.rankings.result import QrelsSide, RankingAgreement, SystemScores, TopicCoverage
from replicate.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    check_resampling,
    interval_list,
    percentile_bounds,
)
from replicate.stats.few_clusters import clip, stretch
from replicate.stats.ranking import STATISTICS, bootstrap_rankings, correlations, swapped_pairs

METHOD = "topic-bootstrap-t-percentile"


def parse_measure(text: str) -> Any:
    """An ir-measures measure from its canonical name (``nDCG@10``, ``AP``, ``P(rel=2)@10``): a mean over topics."""
    import ir_measures
    from ir_measures.measures.base import MeanAgg

    try:
        m = ir_measures.parse_measure(text)
    except (NameError, ValueError, SyntaxError) as exc:
        raise UsageError(Message(Param("measure"), f" {text!r} is not an ir-measures measure name ({exc}); "
                                 "e.g. nDCG@10, AP, P@10, RR, P(rel=2)@10")) from None
    missing = [f"{k} ({p.desc})" for k, p in m.SUPPORTED_PARAMS.items() if p.required and k not in m.params]
    if missing:  # SDCG@10 without max_rel
        raise UsageError(Message(Param("measure"), f" {text!r} needs the parameter {', '.join(missing)}"))
    try:
        m.validate_params()
    except AssertionError as exc:  # ir-measures checks its parameters with assert (P@1.5, RBP(p=2))
        raise UsageError(Message(Param("measure"), f" {text!r} is not a valid ir-measures measure ({exc})")) from None
    cutoff = m.params.get("cutoff")
    if cutoff is not None and cutoff < 1:  # trec_eval aborts the process on @0; Judged@0 divides by 0
        raise UsageError(Message(Param("measure"), f" {text!r} has cutoff {cutoff}: a cutoff counts the top "
                                 "results of each topic and must be 1 or more, e.g. nDCG@10"))
    rel = m.params.get("rel")
    if isinstance(rel, int) and rel < 1:  # trec_eval's relevance level: pytrec_eval raises TypeError on 0
        raise UsageError(Message(Param("measure"), f" {text!r} has rel={rel}: the lowest grade counted relevant "
                                 "must be 1 or more, e.g. P(rel=2)@10"))
    gains = m.params.get("gains")
    if isinstance(gains, dict) and not all(type(g) is int for g in gains.values()):  # pytrec_eval: TypeError
        raise UsageError(Message(Param("measure"), f" {text!r} maps a grade to a gain that is not a whole number: "
                                 "trec_eval takes whole-number gains, e.g. nDCG(gains={0:0,1:1,2:3})@10"))
    try:  # an evaluator over no judgments is cheap and says whether an installed provider computes it
        ir_measures.evaluator([m], {})
    except (ValueError, TypeError) as exc:  # no installed provider (RBP(p=0.5), alpha_nDCG@10 without pyndeval)
        raise UsageError(Message(Param("measure"), f" {text!r} is not computed by any installed ir-measures "
                                 f"provider ({exc})")) from None
    if not isinstance(m.aggregator(), MeanAgg):
        raise UsageError(Message(Param("measure"), f" {text!r} is not a mean over topics (ir-measures aggregates it "
                                 f"as {type(m.aggregator()).__name__}): a system ranking needs a per-topic mean"))
    return m


@dataclass(frozen=True)
class Scored:
    """Every system under one qrels: aggregates ``(S,)`` and per-topic values ``(S, T)`` over ``topics``."""

    aggregate: np.ndarray
    per_topic: np.ndarray  # 0 where the qrels does not judge the topic
    judged: np.ndarray  # (T,) bool


def score(runs: Sequence[RunFile], qrels: Qrels, measure: Any, topics: Sequence[str]) -> Scored:
    """ir-measures' aggregate and per-topic values of each run under ``qrels`` (one evaluator for all runs)."""
    import ir_measures

    column = {t: k for k, t in enumerate(topics)}
    # ir-measures recognises plain dicts of dicts (not read-only mappings)
    evaluator = ir_measures.evaluator([measure], {q: dict(d) for q, d in qrels.judgments.items()})
    agg = np.empty(len(runs))
    per_topic = np.zeros((len(runs), len(topics)))
    for s, run in enumerate(runs):
        res = evaluator.calc({q: dict(d) for q, d in run.results.items()})
        aggregated = res.aggregated
        assert isinstance(aggregated, dict)
        agg[s] = float(aggregated[measure])
        for metric in res.per_query:
            if metric.query_id not in qrels.judgments:  # not what ir-measures 0.4 does; guard the mean below
                raise RuntimeError(f"ir-measures scored topic {metric.query_id!r}, which the qrels does not judge")
            per_topic[s, column[metric.query_id]] = metric.value
    judged = np.array([t in qrels.judgments for t in topics])
    return Scored(agg, per_topic, judged)


def _ranks(scores: np.ndarray) -> tuple[int, ...]:
    """Rank 1 = best; tied scores share the best rank of their group."""
    return tuple(int(1 + np.count_nonzero(scores > v)) for v in scores)


def _coverage(run: RunFile, qrels: Qrels) -> TopicCoverage:
    return TopicCoverage(tuple(sorted(qrels.topics - set(run.results))), tuple(sorted(set(run.results) - qrels.topics)))


def _side(q: Qrels) -> QrelsSide:
    return QrelsSide(q.provenance, q.reader, tuple(sorted(q.topics)), sum(len(d) for d in q.judgments.values()))


def compare_rankings(
    runs: Sequence[RunFile],
    qrels: tuple[Qrels, Qrels],
    measure: str,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence_level: float = 0.95,
) -> RankingAgreement:
    """Score ``runs`` under ``qrels`` (reference, estimate) with ``measure`` and compare the two orderings."""
    if n_resamples != 0:  # 0: no intervals
        check_resampling(n_resamples, confidence_level)
    if len(runs) < 2:
        raise UsageError(Message.naming(f"runs must name two or more systems to rank; got {len(runs)}", "runs"))
    m = parse_measure(measure)
    topics = sorted(qrels[0].topics | qrels[1].topics)
    ref, est = (score(runs, q, m, topics) for q in qrels)
    stats = correlations(ref.aggregate, est.aggregate)
    names = [r.name for r in runs]
    swaps = tuple((names[i], names[j]) for i, j in swapped_pairs(ref.aggregate, est.aggregate))
    intervals = {}
    if n_resamples > 0:
        boot = bootstrap_rankings(ref.per_topic, ref.judged, est.per_topic, est.judged,
                                  n_resamples=n_resamples, rng=np.random.default_rng(seed))
        values = np.column_stack([boot.values[s] for s in STATISTICS])
        low, high, undefined = percentile_bounds(values, confidence_level)
        # each arm stretched for the number of topics, as every cluster-bootstrap interval (stats.few_clusters)
        point = np.array([stats[s] for s in STATISTICS], dtype=np.float64)
        low, high = clip(*stretch(point, low, high, len(topics), confidence_level), -1.0, 1.0)
        made = interval_list(low, high, undefined, method=METHOD, replicates=n_resamples, cluster="topic",
                             clusters=len(topics), confidence_level=confidence_level, seed=seed)
        intervals = dict(zip(STATISTICS, made))
    ranks = (_ranks(ref.aggregate), _ranks(est.aggregate))
    systems = tuple(
        SystemScores(r.name, r.provenance, r.lines, len(r.results), r.tags,
                     (float(ref.aggregate[s]), float(est.aggregate[s])), (ranks[0][s], ranks[1][s]),
                     (_coverage(r, qrels[0]), _coverage(r, qrels[1])))
        for s, r in enumerate(runs)
    )
    return RankingAgreement(
        measure=str(m), qrels=(_side(qrels[0]), _side(qrels[1])), systems=systems,
        kendall_tau=stats["kendall_tau"], tau_ap=stats["tau_ap"], spearman=stats["spearman"], swaps=swaps,
        intervals=intervals, only_reference=tuple(sorted(qrels[0].topics - qrels[1].topics)),
        only_estimate=tuple(sorted(qrels[1].topics - qrels[0].topics)), library=f"ir-measures {version('ir-measures')}",
    )
