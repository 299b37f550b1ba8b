"""What a verification produces: the parts of the built-in sources and the whole verification (pure data).

Every claim's verdict is an :class:`~replicate.verify.matching.Outcome` (one
verdict record); what differs by source is only which columns a claim has: a
claim over runs one per parser asked (:class:`ClaimResult`), a trial claim one,
recomputed from the release or replicated against a fresh collection
(:class:`TrialClaimResult`, on the one-column base
:class:`~replicate.verify.part.Checked`). :class:`Verification` holds one
:class:`~replicate.verify.part.Part` per source and decides ``ok``, the failed
claims, the summary line and the JSON from them, naming no source.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from replicate.diagnostics import Diagnostics
from replicate.judge.floor import EdgeCheck
from replicate.judge.model import RunFile
from replicate.judge.outofscale import ScaleOutcome, outcomes_json
from replicate.provenance import FileProvenance
from replicate.stats.cimap import edge_ci
from replicate.trials.fresh import Agreement, CollectionProvenance
from replicate.verify.alternatives import Alternatives
from replicate.verify.claims_file import Claim, ClaimsFile
from replicate.verify.matching import Computed, Outcome, Verdict
from replicate.verify.part import Checked, Part, Result, counts, matched
from replicate.verify.recompute import EdgeFigures, FloorFigures, RunFigures
from replicate.verify.replication import Replicated, summarise

RECOMPUTED = "recomputed"
REPLICATED = "replicated"


@dataclass(frozen=True)
class ClaimResult:
    """One claim recomputed under one or more parsers."""

    claim: Claim
    parsers: tuple[str, ...]  # the parsers it was recomputed under, primary first
    computed: dict[str, Computed]
    alternatives: Alternatives | None = None  # tried when it mismatches under its primary parser

    @property
    def primary(self) -> str:
        return self.parsers[0]

    def outcome(self, parser: str) -> Outcome:
        return Outcome(self.claim.printed, self.computed[parser])

    def verdict(self, parser: str) -> Verdict | None:
        """The verdict under ``parser``; None when the claim was not recomputed under it."""
        if parser not in self.computed:
            return None
        v = self.outcome(parser).verdict
        assert isinstance(v, Verdict)
        return v

    @property
    def failed(self) -> bool:
        """Mismatches under its primary (gating) parser."""
        return self.verdict(self.primary) is Verdict.mismatch

    def rounded(self, parser: str) -> str | None:
        return self.outcome(parser).rounded() if parser in self.computed else None

    def to_json(self) -> dict:
        out = self.claim.to_json()
        out["mode"] = RECOMPUTED
        out["interval"] = self.claim.printed.show_interval()
        out["parsers"] = list(self.parsers)
        out["computed"] = {p: c.to_json() for p, c in self.computed.items()}
        out["rounded"] = {p: self.rounded(p) for p in self.parsers}
        out["verdict"] = {p: str(self.verdict(p)) for p in self.parsers}
        out["why"] = {p: c.why for p, c in self.computed.items() if c.why is not None}
        out["tie"] = [p for p in self.computed if self.outcome(p).tie]
        out["alternatives"] = [] if self.alternatives is None else [a.to_json() for a in self.alternatives.found]
        return out


@dataclass(frozen=True)
class TrialClaimResult(Checked):
    """One trial claim: recomputed from the release, or replicated against a fresh collection."""

    replicated: Replicated | None = None
    released: Computed | None = None  # replicated: the same figure recomputed from the release

    @property
    def mode(self) -> str:
        """recomputed (from the release) or replicated (against a fresh collection)."""
        return RECOMPUTED if self.replicated is None else REPLICATED

    @property
    def judged(self) -> Replicated | None:
        return self.replicated

    def to_json(self) -> dict:
        out = super().to_json()
        out.update(mode=self.mode, n_items=self.computed.n, settings={**self.claim.settings.to_json(), "by": self.claim.by})
        if self.mode == RECOMPUTED:
            out["matches"] = self.claim.printed.show_interval()
            out["tie"] = self.outcome.tie
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
class TrialsVerification(Part):
    """Everything checking the trial claims found (the trials part; its note: :mod:`replicate.verify.sources.trials`)."""

    results: tuple[TrialClaimResult, ...]
    tables: tuple[TableInfo, ...]
    replications: tuple[ReplicationReport, ...] = ()
    warnings: dict[str, Any] = field(default_factory=dict)
    cells: tuple[Any, ...] = ()  # the released cells (trials.results.CellResult) the claims name, for the figure
    name = "trials"

    @property
    def empty(self) -> bool:
        return False  # asked for (claims, or a replication): shown even without claims

    def released_files(self) -> list[FileProvenance]:
        return [t.file for t in self.tables if t.role == "released" and t.file is not None]

    def reproduce_args(self) -> str:
        """The --replication options of the verify command that repeats this check."""
        out = ""
        for tb in self.tables:
            if tb.role == "fresh" and tb.origin == "--replication":
                out += f" --replication {shlex.quote(tb.name + '=' + tb.given)}"
            if tb.role == "fresh" and tb.archive is not None:
                out += f" --replication-archive {shlex.quote(tb.name + '=' + tb.archive)}"
        return out

    def summary(self) -> dict[str, dict[str, int]]:
        rec = counts([r for r in self.results if r.mode == RECOMPUTED], [str(v) for v in Verdict])
        rep = summarise([r.replicated.verdict for r in self.results if r.replicated is not None])
        return {RECOMPUTED: rec, REPLICATED: rep}

    def summary_line(self) -> str:
        s = self.summary()
        parts = []
        rec, rep = s[RECOMPUTED], s[REPLICATED]
        n_rec, n_rep = sum(rec.values()), sum(rep.values())
        if n_rec:
            parts.append(matched(rec, "recomputed trial claims match"))
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


@dataclass(frozen=True, slots=True)
class Flag:
    """Something a reader of the note should know: a short kind code and one sentence."""

    kind: str  # unparsed | extraction | rewritten | skipped | impossible | produced_differently | hash | items | tie | warning | source | departure
    message: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class RunsVerification(Part):
    """The claims over judge runs recomputed, with the edges, floors and runs they touch (the runs part; its
    note: :mod:`replicate.verify.sources.runs`)."""

    parsers: tuple[str, ...]  # columns, in order; the first is the gating parser
    explicit_parsers: bool  # True when --parser was given (it overrides claims' own)
    results: tuple[ClaimResult, ...]
    edges: tuple[EdgeFigures, ...]
    floors: tuple[FloorFigures, ...]
    run_figures: tuple[RunFigures, ...]
    run_files: dict[str, tuple[RunFile, ...]]
    flags: tuple[Flag, ...]
    decided: bool = False  # every run carries labels or verdicts its reader decided: one column, no parser
    label_keys: tuple[tuple[str, str, str], ...] = ()  # (run, parser, label-cache key) of every labelling, in order
    #: Per edge (:func:`edge_key`) with a floor of its new version's repeats: ``floor --edge``'s check.
    against_floor: dict[tuple[str, str, str, str], EdgeCheck] = field(default_factory=dict)
    out_of_scale: str = "keep"  # what labels outside a run's scale were read as (--out-of-scale)
    scale_outcomes: tuple[ScaleOutcome, ...] = ()  # per run labelled, what that policy did to it
    name = "runs"
    top_level = True  # its JSON keys sit at the top of the verification's

    def summary(self) -> dict[str, dict[str, int]]:
        """Per parser column: how many claims match, mismatch or are not computable."""
        out = {p: {str(v): 0 for v in Verdict} for p in self.parsers}
        for r in self.results:
            for p in r.parsers:
                out[p][str(r.verdict(p))] += 1
        return out

    def summary_line(self) -> str:
        """E.g. "62 of 70 claims match under umbrela-strict@1; 70 of 70 under umbrela-fallback@1"."""
        parts: list[str] = []
        for p, s in self.summary().items():
            if sum(s.values()):
                parts.append(matched(s, f"{'claims match under ' if not parts else 'under '}{p}"))
        return "; ".join(parts) if parts else "no claims"

    def released_files(self) -> list[FileProvenance]:
        return [f.provenance for fs in self.run_files.values() for f in fs]

    def note_flags(self) -> tuple[Flag, ...]:
        return self.flags

    def reproduce_args(self) -> str:
        out = "".join(f" --parser {shlex.quote(p)}" for p in self.parsers) if self.explicit_parsers and not self.decided else ""
        return out + (f" --out-of-scale {self.out_of_scale}" if self.out_of_scale != "keep" else "")

    def extraction_failures(self) -> dict[str, int | None]:
        """Per run, the records whose answer the file's own extraction did not find ([invalid]); empty when
        no run's reader tells them apart."""
        from replicate.judge.model import extraction_failures

        out = {name: extraction_failures(files) for name, files in self.run_files.items()}
        return out if any(n is not None for n in out.values()) else {}

    def sources(self) -> list[dict[str, Any]]:
        """Every file read, once, with the runs that use it."""
        seen: dict[str, dict[str, Any]] = {}
        for run, files in self.run_files.items():
            for f in files:
                entry = seen.get(f.provenance.path)
                if entry is None:
                    entry = seen[f.provenance.path] = {**f.to_json(), "runs": []}
                entry["runs"].append(run)
        return list(seen.values())

    def to_json(self) -> dict:
        from replicate.judge.labelcache import label_provenance
        from replicate.parsing import PARSERS

        return {
            "parsers": [
                {"name": p, "origin": PARSERS.origin(p) if p in PARSERS else None} for p in self.parsers
            ],
            "gating_parser": None if not self.parsers else (
                self.parsers[0] if self.explicit_parsers or self.decided else "per claim"),
            "decided_labels": self.decided,
            "summary": self.summary(),
            "claims": [r.to_json() for r in self.results],
            "edges": [_edge_json(e) for e in self.edges],
            "floors": [_floor_json(f) for f in self.floors],
            "runs": [_run_json(f) for f in self.run_figures],
            **({"extraction_failures": failures} if (failures := self.extraction_failures()) else {}),
            "out_of_scale": outcomes_json(self.out_of_scale, self.scale_outcomes),
            "sources": self.sources(),
            **({"label_cache": label_provenance({(r, p): k for r, p, k in self.label_keys})} if self.label_keys else {}),
        }


@dataclass(frozen=True)
class Verification:
    """Everything ``replicate verify`` found, one part per claim source, ready to render as a note, a table or JSON."""

    claims_file: ClaimsFile
    parts: tuple[Part, ...]  # the runs part first, then one per other source with claims
    root: str
    tool_version: str
    date: str
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    def part(self, name: str) -> Any:
        """The part of source ``name``, or None when there is none."""
        return next((p for p in self.parts if p.name == name), None)

    @property
    def runs(self) -> RunsVerification:
        """The part of the claims over judge runs."""
        return self.part("runs")

    @property
    def shown(self) -> tuple[Part, ...]:
        """The parts the note, the table and the summary line show: those with something to show, else the first."""
        return tuple(p for p in self.parts if not p.empty) or self.parts[:1]

    def summary_line(self) -> str:
        """Each shown part's line, e.g. "62 of 70 claims match under umbrela-strict@1; 3 of 4 ranking claims match"."""
        return "; ".join(p.summary_line() for p in self.shown)

    @property
    def all_results(self) -> tuple[Result, ...]:
        """Every claim's result, part by part."""
        return tuple(r for p in self.parts for r in p.results)

    @property
    def ok(self) -> bool:
        return not any(r.failed for r in self.all_results)

    @property
    def failed_ids(self) -> list[str]:
        """Every claim that fails the check (mismatches under its gating column, or does not replicate)."""
        return [r.claim.id for r in self.all_results if r.failed]

    @property
    def flags(self) -> tuple[Flag, ...]:
        """What the note's Flags section reports, part by part."""
        return tuple(f for p in self.parts for f in p.note_flags())

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "study": self.claims_file.study.to_json(),
            "claims_file": self.claims_file.path,
            "root": self.root,
            "tool": {"name": "replicate", "version": self.tool_version},
            "date": self.date,
            "summary_line": self.summary_line(),
            "ok": self.ok,
            "flags": [f.to_json() for f in self.flags],
        }
        for p in self.parts:
            if p.top_level:
                out.update(p.to_json())
            else:
                out[p.name] = p.to_json()
        return out


def _f(x: Any) -> Any:
    return None if x is None else (x if isinstance(x, int) else float(x))


def _edge_json(e: EdgeFigures) -> dict:
    out: dict[str, Any] = {"old": e.old, "new": e.new, "parser": e.parser, "unparsed_policy": e.policy}
    out.update(e.cells.figures())
    out.update(change_rate=_f(e.value("change_rate")), changed=e.changed, shared_items=e.shared_items,
               unparsed={"old": e.unparsed_old, "new": e.unparsed_new})
    err = e.error if e.error is not None and e.settings is not None and e.error.resampled else None
    out["ci"] = edge_ci(e.cells, None if err is None else err.interval,
                        e.settings.confidence_level if e.settings is not None else 0.95)
    if e.error is not None and e.settings is not None:
        out["mcnemar_clustered"] = e.error.mcnemar_json()
        out["independence_baselines"] = e.error.baselines_json(e.cells)
        out["uncertainty"] = e.settings.to_json()
        out["small_sample"] = e.small
    return out


def _floor_json(f: FloorFigures) -> dict:
    """The ``replicate floor`` JSON of the repeats, with the run names the claims used."""
    return {"runs": list(f.runs), **f.floor.to_json()}


def _run_json(f: RunFigures) -> dict:
    out = {"name": f.name, "parser": f.parser, "unparsed_policy": f.policy, "items": f.items,
           "unparsed": f.unparsed, "n": f.n, "em": _f(f.em), "mae": _f(f.mae), "pearson": f.pearson}
    if f.interval is not None:
        out["interval"] = {k: v.to_json() for k, v in f.interval.items()}
    return out
