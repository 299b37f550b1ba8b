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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.errors import BadInput, UsageError
from replicate.provenance import FileProvenance
from replicate.verify.matching import Computed, Outcome
from replicate.verify.metric_row import Field, Metric
from replicate.verify.part import Checked, PartBase, counts, under_root

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


@dataclass(frozen=True)
class RankingClaimResult(Checked):
    """One ranking claim recomputed: its figure, verdict and the agreement it was read from."""

    files: tuple[FileProvenance, ...] = ()  # run files then the two qrels
    topics: dict[str, Any] | None = None  # how the two qrels' topics meet (the rankings JSON's ``topics``)

    def to_json(self) -> dict:
        out = super().to_json()
        out.update(systems=self.computed.n, matches=self.claim.printed.show_interval(), tie=self.outcome.tie,
                   topics=self.topics)
        return out

    def topic_note(self) -> str | None:
        """Topics judged by one qrels only, in words (None when both judge the same topics)."""
        t = self.topics or {}
        ref, est = t.get("only_reference") or [], t.get("only_estimate") or []
        if not ref and not est:
            return None
        return (f"{len(ref)} topic(s) judged by the reference qrels only, {len(est)} by the estimate only "
                f"({t.get('both')} by both): each ordering is over its own qrels' topics, as ir-measures scores them")


@dataclass(frozen=True)
class RankingsVerification(PartBase):
    """Every ranking claim recomputed, with the files read, each once (the rankings part; its note:
    :mod:`replicate.verify.sources.rankings`)."""

    results: tuple[RankingClaimResult, ...]
    files: tuple[tuple[FileProvenance, str], ...]  # (file, role: run or qrels), first-seen order
    name = "rankings"

    def summary(self) -> dict[str, int]:
        return counts(self.results, ("match", "mismatch", "not_computable"))

    def summary_line(self) -> str:
        s = self.summary()
        text = f"{s['match']} of {len(self.results)} ranking claims match"
        return text + (f" ({s['not_computable']} not computable)" if s["not_computable"] else "")

    def to_json(self) -> dict:
        return {"summary": self.summary(), "summary_line": self.summary_line(), "ok": not self.failed,
                "claims": [r.to_json() for r in self.results],
                "sources": [{**f.to_json(), "role": role} for f, role in self.files]}


def check_rankings(claims: Sequence[Any], tables: Mapping[str, tuple[str, ...]], root: Path) -> RankingsVerification:
    """Recompute every ranking claim from the files under ``root`` (missing files: one BadInput naming all)."""
    rc = RankingsRecomputer(root, tables)
    missing = sorted({p for c in claims for p in (*rc.paths(c), *c.options["qrels"]) if not (root / p).exists()})
    if missing:
        raise BadInput(f"{len(missing)} file(s) named by ranking claims not found under {root}:\n" + "\n".join(missing))
    results = []
    seen: dict[str, tuple[FileProvenance, str]] = {}
    for c in claims:
        computed = rc.compute(c)
        a = rc.agreement(c)
        files = tuple(s.file for s in a.systems) + tuple(q.file for q in a.qrels)
        for f in files:
            seen.setdefault(f.path, (f, "qrels" if f in (q.file for q in a.qrels) else "run"))
        results.append(RankingClaimResult(c, computed, Outcome.recomputed(c.printed, computed).match, files,
                                          a.to_json()["topics"]))
    return RankingsVerification(tuple(results), tuple(seen.values()))
