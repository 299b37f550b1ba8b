"""What checking trial claims produces: per-claim results, replications and the whole trial part (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replicate.provenance import FileProvenance
from replicate.verify.claim import Claim
from replicate.verify.matching import Match, Printed, PrintedFlag, rounded
from replicate.verify.replication import (
    Agreement,
    CollectionProvenance,
    Replicated,
    summarise,
)
from replicate.verify.trials_recompute import TrialComputed

RECOMPUTED = "recomputed"
REPLICATED = "replicated"


@dataclass(frozen=True)
class TrialClaimResult:
    """One trial claim: recomputed from the release, or replicated against a fresh collection."""

    claim: Claim
    mode: str  # recomputed | replicated
    computed: TrialComputed  # from the release (recomputed) or the fresh table (replicated)
    match: Match | None = None  # recomputed: at printed precision (None: not computable, or a flag)
    replicated: Replicated | None = None
    released: TrialComputed | None = None  # replicated: the same figure recomputed from the release

    @property
    def verdict(self) -> str:
        if self.mode == REPLICATED:
            assert self.replicated is not None
            return self.replicated.verdict or "not_computable"
        v = self.computed.value
        if v is None:
            return "not_computable"
        p = self.claim.printed
        if isinstance(p, PrintedFlag):
            return "match" if bool(v) == p.value else "mismatch"
        assert self.match is not None
        return self.match.verdict.value

    @property
    def failed(self) -> bool:
        return self.verdict in ("mismatch", "does not replicate")

    @property
    def why(self) -> str | None:
        if self.replicated is not None and self.replicated.why:
            return self.replicated.why
        return self.computed.why

    def rounded(self) -> str | None:
        v = self.computed.value
        p = self.claim.printed
        if v is None:
            return None
        if isinstance(p, PrintedFlag) or isinstance(v, bool):
            return "pass" if v else "fail"
        assert isinstance(p, Printed)
        return rounded(p, v)

    def to_json(self) -> dict:
        out = self.claim.to_json()
        out.update(mode=self.mode, computed=self.computed.to_json(), rounded=self.rounded(),
                   verdict=self.verdict, why=self.why, n_items=self.computed.n,
                   settings={**self.claim.settings.to_json(), "by": self.claim.by})
        if self.mode == RECOMPUTED:
            out["matches"] = self.claim.printed.show_interval()
            out["tie"] = bool(self.match is not None and self.match.tie)
        else:
            assert self.replicated is not None
            out.update(self.replicated.to_json())
            out["released"] = None if self.released is None else self.released.to_json()
            if self.replicated.fresh_outcome is not None:
                out["fresh_outcome"] = self.replicated.fresh_outcome
        return out


@dataclass(frozen=True)
class TableInfo:
    """A trials table read for the check (the release's, or a fresh collection's)."""

    name: str
    role: str  # released | fresh
    path: str  # relative to --root where it is under it
    provenance: dict[str, Any]
    rows: int
    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    scorers: tuple[str, ...]
    origin: str = "[trials]"  # [trials], [replication] or --replication
    given: str = ""  # the path as written where it was given (for the note's Reproduce block)
    archive: str | None = None  # the archive as given (--replication-archive), if any
    file: FileProvenance | None = None  # the file's provenance (its fetched release, if any)

    def to_json(self) -> dict:
        return {"name": self.name, "role": self.role, "path": self.path, "origin": self.origin,
                "file": self.provenance, "rows": self.rows, "models": list(self.models),
                "benchmarks": list(self.benchmarks), "scorers": list(self.scorers)}


@dataclass(frozen=True)
class ReplicationReport:
    """One fresh collection: its provenance and the item-level agreement of each cell a claim names."""

    name: str
    provenance: CollectionProvenance
    agreements: tuple[Agreement, ...] = ()

    def to_json(self) -> dict:
        return {"name": self.name, "provenance": self.provenance.to_json(),
                "agreement": [a.to_json() for a in self.agreements]}


@dataclass(frozen=True)
class TrialsVerification:
    """Everything checking the trial claims found."""

    results: tuple[TrialClaimResult, ...]
    tables: tuple[TableInfo, ...]
    replications: tuple[ReplicationReport, ...] = ()
    warnings: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> tuple[TrialClaimResult, ...]:
        return tuple(r for r in self.results if r.failed)

    def summary(self) -> dict[str, dict[str, int]]:
        rec = {"match": 0, "mismatch": 0, "not_computable": 0}
        for r in self.results:
            if r.mode == RECOMPUTED:
                rec[r.verdict] += 1
        rep = summarise([r.replicated.verdict for r in self.results if r.replicated is not None])
        return {RECOMPUTED: rec, REPLICATED: rep}

    def summary_line(self) -> str:
        s = self.summary()
        parts = []
        rec, rep = s[RECOMPUTED], s[REPLICATED]
        n_rec, n_rep = sum(rec.values()), sum(rep.values())
        if n_rec:
            text = f"{rec['match']} of {n_rec} recomputed trial claims match"
            if rec["not_computable"]:
                text += f" ({rec['not_computable']} not computable)"
            parts.append(text)
        if n_rep:
            text = (f"{rep['replicates']} of {n_rep} replicated trial claims replicate, "
                    f"{rep['does not replicate']} do not, {rep['underpowered']} underpowered")
            if rep["not_computable"]:
                text += f", {rep['not_computable']} not computable"
            parts.append(text)
        return "; ".join(parts) if parts else "no trial claims"

    def to_json(self) -> dict:
        return {"summary": self.summary(), "summary_line": self.summary_line(),
                "ok": not self.failed,
                "claims": [r.to_json() for r in self.results],
                "tables": [t.to_json() for t in self.tables],
                "replications": [r.to_json() for r in self.replications],
                "warnings": self.warnings}
