"""The ``rankings.*`` verify metrics: the same TREC runs scored under two qrels, and their orderings compared.

The claim fields (``trec_runs``, ``qrels``, ``measure``) and an example: docs/verify.md, "Claims over
system rankings"; the rankings part: :mod:`replicate.verify.sources.rankings`.

The figures are those of ``replicate rankings`` (:func:`replicate.ranking_agreement`), computed once
per (runs, qrels, measure) without bootstrap replicates (a printed point value is checked, not an
interval). Every file read is listed with its sha256.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replicate.errors import UsageError
from replicate.verify.matching import Computed
from replicate.verify.metric_row import Field, Metric
from replicate.verify.part import outside_root

DEFAULT_MEASURE = "nDCG@10"


def check_qrels(value: Any) -> str | None:
    """``qrels``: two paths relative to --root, the reference first."""
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value)):
        return f"must be two qrels files [reference, estimate], got {value!r}"
    if (bad := outside_root(value)) is not None:
        return bad
    if value[0] == value[1]:
        return f"names the same file twice: {value[0]!r}"
    return None


def check_measure(value: Any) -> str | None:
    """``measure``: an ir-measures mean over topics."""
    if not isinstance(value, str) or not value:
        return f"must be an ir-measures measure name such as 'nDCG@10', got {value!r}"
    from replicate.rankings.compute import parse_measure

    try:
        parse_measure(value)
    except UsageError as exc:  # its reason, as 'rankings --measure' gives it ("measure 'nDCG@0' has cutoff 0: ...")
        return str(exc).removeprefix("measure ")
    return None


class RankingsRecomputer:
    """Ranking agreements under ``root``, each (runs, qrels, measure) computed once."""

    def __init__(self, root: Path, tables: Mapping[str, tuple[str, ...]]):
        self.root = root
        self.tables = tables
        self._cache: dict[tuple, Any] = {}

    def paths(self, claim: Any) -> tuple[str, ...]:
        """The run files or directories a claim names, relative to --root."""
        given = claim.trec_runs
        return self.tables[given] if isinstance(given, str) else tuple(given)

    def agreement(self, claim: Any) -> Any:
        from replicate.rankings import ranking_agreement

        key = (self.paths(claim), tuple(claim.options["qrels"]), claim.options["measure"])
        if key not in self._cache:
            runs, qrels, measure = key
            self._cache[key] = ranking_agreement([self.root / r for r in runs], [self.root / q for q in qrels],
                                                 measure=measure, n_resamples=0)
        return self._cache[key]


def _statistic(name: str):
    def compute(core: RankingsRecomputer, claim: Any, _column: Any) -> Computed:
        a = core.agreement(claim)
        if len(a.systems) < 2:
            return Computed(None, f"{len(a.systems)} system(s): a ranking agreement needs at least two")
        value = a.statistic(name)
        if math.isnan(value):
            return Computed(None, f"{name} is undefined: the {len(a.systems)} systems score alike under one of the "
                                  "qrels (no ordering to compare)")
        return Computed(value, n=len(a.systems))
    return compute


_MEANINGS = {
    "kendall_tau": "Kendall's tau-b between the systems' orderings under the reference and the estimate qrels",
    "tau_ap": "tau_AP of the estimate ordering against the reference (top-weighted, Yilmaz et al. 2008)",
    "spearman": "Spearman's rho between the systems' scores under the two qrels",
}
FIELDS = (Field("qrels", check_qrels, doc="[reference, estimate] qrels files relative to --root"),
          Field("measure", check_measure, DEFAULT_MEASURE, doc="the ir-measures measure the systems are scored by"))

#: The family's rows (the table, :mod:`replicate.verify.metrics`, imports them).
METRICS = tuple(Metric(f"rankings.{s}", "rankings", ("systems",), "number", meaning, fields=FIELDS,
                       compute=_statistic(s)) for s, meaning in _MEANINGS.items())
