"""The result of ``replicate rankings``: two system orderings and how far they agree (frozen values)."""

from __future__ import annotations

from dataclasses import dataclass

from replicate.provenance import FileProvenance
from replicate.stats.bootstrap import Interval
from replicate.stats.ranking import STATISTICS

#: Which qrels is which: the first --qrels orders the systems as they truly are, the second as judged.
SIDES: tuple[str, str] = ("reference", "estimate")


@dataclass(frozen=True)
class TopicCoverage:
    """How one system's topics meet one qrels' topics, as ir-measures scores them.

    ``unretrieved``: topics the qrels judges for which the run has no result (ir-measures scores them
    with the measure's default, 0); ``unjudged``: topics of the run the qrels does not judge (not scored).
    """

    unretrieved: tuple[str, ...]
    unjudged: tuple[str, ...]

    def to_json(self) -> dict:
        return {"unretrieved": len(self.unretrieved), "unretrieved_topics": list(self.unretrieved),
                "unjudged": len(self.unjudged), "unjudged_topics": list(self.unjudged)}


@dataclass(frozen=True)
class SystemScores:
    """One system (a run file): its score and rank under each qrels (rank 1 best; ties share the best rank)."""

    name: str
    file: FileProvenance
    results: int
    topics: int
    tags: tuple[str, ...]
    scores: tuple[float, float]  # reference, estimate: ir-measures' aggregate
    ranks: tuple[int, int]
    coverage: tuple[TopicCoverage, TopicCoverage]

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "file": self.file.to_json(), "results": self.results, "topics": self.topics,
                     "tags": list(self.tags)}
        for k, side in enumerate(SIDES):
            out[side] = {"score": self.scores[k], "rank": self.ranks[k], **self.coverage[k].to_json()}
        return out


@dataclass(frozen=True)
class QrelsSide:
    """One qrels file and the topics it judges."""

    file: FileProvenance
    reader: str
    topics: tuple[str, ...]
    judgments: int

    def to_json(self) -> dict:
        return {"file": self.file.to_json(), "reader": self.reader, "topics": len(self.topics),
                "judgments": self.judgments}


@dataclass(frozen=True)
class RankingAgreement:
    """Agreement of the system orderings under two qrels on one measure.

    ``kendall_tau`` (tau-b), ``tau_ap`` (of the estimate against the reference) and ``spearman``
    are computed on the systems' ir-measures aggregates; ``intervals`` are percentile intervals
    from a seeded bootstrap over topics (see :func:`replicate.stats.ranking.bootstrap_rankings`).
    ``swaps`` are the pairs (above, below) the reference orders one way and the estimate the other.
    """

    measure: str
    qrels: tuple[QrelsSide, QrelsSide]
    systems: tuple[SystemScores, ...]
    kendall_tau: float
    tau_ap: float
    spearman: float
    swaps: tuple[tuple[str, str], ...]
    intervals: dict[str, Interval]  # statistic -> interval; empty without replicates
    only_reference: tuple[str, ...]  # topics judged by the reference qrels only
    only_estimate: tuple[str, ...]
    library: str  # the scoring library and its version, e.g. "ir-measures 0.4.3"

    def statistic(self, name: str) -> float:
        """One statistic by name (``kendall_tau``, ``tau_ap`` or ``spearman``): what a verify metric reads."""
        if name not in STATISTICS:
            raise KeyError(f"statistic must be one of {', '.join(STATISTICS)}; got {name!r}")
        return float(getattr(self, name))

    def interval(self, name: str) -> Interval | None:
        return self.intervals.get(name)

    @property
    def topics_both(self) -> int:
        return len(set(self.qrels[0].topics) & set(self.qrels[1].topics))

    def to_json(self) -> dict:
        return {
            "measure": self.measure,
            "library": self.library,
            "qrels": {side: q.to_json() for side, q in zip(SIDES, self.qrels)},
            "topics": {"reference": len(self.qrels[0].topics), "estimate": len(self.qrels[1].topics),
                       "both": self.topics_both, "only_reference": list(self.only_reference),
                       "only_estimate": list(self.only_estimate)},
            "statistics": {name: {"value": self.statistic(name),
                                  "interval": None if name not in self.intervals else self.intervals[name].to_json()}
                           for name in STATISTICS},
            "swaps": [{"reference_above": a, "estimate_above": b} for a, b in self.swaps],
            "systems": [s.to_json() for s in self.systems],
        }
