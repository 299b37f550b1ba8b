"""System-ranking agreement: the same retrieval runs scored under two qrels, and how far the orderings agree.

:func:`ranking_agreement` reads TREC run files and two qrels (:mod:`~replicate.rankings.load`), scores every run
under each with ir-measures and compares the orderings (:mod:`~replicate.rankings.compute`):
Kendall's tau-b, tau_AP and Spearman's rho with topic bootstrap intervals, the swapped pairs, and how
each run's topics meet each qrels. The result is a frozen
:class:`~replicate.rankings.result.RankingAgreement`; see docs/rankings.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import Message, UsageError
from replicate.rankings.result import RankingAgreement
from replicate.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

__all__ = ["ranking_agreement", "RankingAgreement"]


def ranking_agreement(
    runs: Sequence[str | os.PathLike[str]],
    qrels: Sequence[str | os.PathLike[str]],
    *,
    measure: str = "nDCG@10",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence_level: float = 0.95,
    diagnostics: Diagnostics | None = None,
) -> RankingAgreement:
    """Score every run file under both qrels (``reference``, ``estimate``) and compare the system orderings.

    ``runs``: TREC run files, or directories standing for the files in them; each file is one system,
    named after the file. ``qrels``: exactly two TREC qrels files, the reference (e.g. human) first.
    ``n_resamples`` topic bootstrap replicates (0: no intervals) drawn with ``numpy.random.default_rng(seed)``.
    """
    from replicate.rankings.compute import compare_rankings, parse_measure
    from replicate.rankings.load import read_qrels, read_runs

    if len(qrels) != 2:
        raise UsageError(Message.naming(f"qrels must name exactly two files (reference, then estimate); got {len(qrels)}",
                                        "qrels"))
    if not runs:
        raise UsageError(Message.naming("runs must name the run files to rank", "runs"))
    if n_resamples < 0:
        raise UsageError(Message.naming(f"n_resamples must be >= 0; got {n_resamples}", "n_resamples"))
    if not 0 < confidence_level < 1:
        raise UsageError(Message.naming(f"confidence_level must lie in (0, 1); got {confidence_level}",
                                        "confidence_level"))
    parse_measure(measure)  # a bad name is reported before any file is read
    diag = diagnostics if diagnostics is not None else Diagnostics()
    run_files = read_runs(runs, diag)
    pair = (read_qrels(qrels[0], diag), read_qrels(qrels[1], diag))
    return compare_rankings(run_files, pair, measure, n_resamples=n_resamples, seed=seed,
                            confidence_level=confidence_level)
