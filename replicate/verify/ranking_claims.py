"""Claims over system rankings: the same TREC runs scored under two qrels, and a printed agreement figure.

```toml
[trec_runs]                     # run files, or directories standing for their files, relative to --root
track = ["runs/"]

[[claims]]
id = "t2-tau"
metric = "rankings.kendall_tau" # or rankings.tau_ap, rankings.spearman
trec_runs = "track"             # a [trec_runs] name, or a list of run files / directories
qrels = ["qrels/human.txt", "qrels/llm.txt"]   # reference, then estimate
measure = "nDCG@10"             # any ir-measures mean over topics (default nDCG@10)
value = "0.89"
unit = "ratio"
```

The figures are those of ``replicate rankings`` (:func:`replicate.ranking_agreement`), computed once
per (runs, qrels, measure) without bootstrap replicates (a printed point value is checked, not an
interval). Every file read is listed with its sha256.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from replicate.errors import UsageError
from replicate.verify.matching import Computed
from replicate.verify.metric_row import Field, Metric
from replicate.verify.part import under_root

DEFAULT_MEASURE = "nDCG@10"


def check_qrels(value: Any) -> str | None:
    """``qrels``: two paths relative to --root, the reference first."""
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value)):
        return f"must be two qrels files [reference, estimate], got {value!r}"
    bad = [v for v in value if not under_root(v)]
    if bad:
        return f"paths must be relative to --root without '..': {', '.join(bad)}"
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
    except UsageError:
        return f"{value!r} is not an ir-measures mean over topics (e.g. nDCG@10, AP, P@10, RR)"
    return None


def check_runs(value: Any, tables: Mapping[str, Any]) -> str | None:
    """``trec_runs``: a [trec_runs] name or a non-empty list of paths relative to --root."""
    if isinstance(value, str):
        if value in tables:
            return None
        found = difflib.get_close_matches(value, list(tables), n=1)
        close = f" (did you mean {found[0]!r}?)" if found else ""
        return (f"trec_runs {value!r} is no [trec_runs] name{close}; "
                f"[trec_runs]: {', '.join(tables) or 'none'}")
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        bad = [v for v in value if not under_root(v)]
        return None if not bad else f"trec_runs paths must be relative to --root without '..': {', '.join(bad)}"
    return f"trec_runs must be a [trec_runs] name or a list of run files, got {value!r}"


def parse_trec_tables(table: Any, problems: list[str]) -> dict[str, tuple[str, ...]]:
    """``[trec_runs]``: name = [run file or directory, ...], paths relative to --root."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.append("[trec_runs]: must be a table of name = [run file or directory, ...]")
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for name, files in table.items():
        if isinstance(files, str) and files:
            files = [files]
        if not (isinstance(files, list) and files and all(isinstance(f, str) and f for f in files)):
            problems.append(f"[trec_runs] {name!r}: must be a list of run files or directories")
            continue
        bad = [f for f in files if not under_root(f)]
        if bad:
            problems.append(f"[trec_runs] {name!r}: paths must be relative to --root without '..': {', '.join(bad)}")
            continue
        out[name] = tuple(files)
    return out


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

    def compute(self, claim: Any) -> Computed:
        assert claim.spec.compute is not None
        return claim.spec.compute(self, claim, None)


def _statistic(name: str):
    def compute(core: RankingsRecomputer, claim: Any, _column: Any) -> Computed:
        a = core.agreement(claim)
        if len(a.systems) < 2:
            return Computed(None, f"{len(a.systems)} system(s): a ranking agreement needs at least two")
        return Computed(a.statistic(name), n=len(a.systems))
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
