"""The values a verification produces: per-claim results and the whole verification (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replicate.diagnostics import Diagnostics
from replicate.judge.model import RunFile
from replicate.verify.claims import Claim, ClaimsFile
from replicate.verify.matching import Match, Printed, Verdict, rounded
from replicate.verify.recompute import Computed, EdgeFigures, FloorFigures, RunFigures
from replicate.verify.trials_result import TrialsVerification


@dataclass(frozen=True)
class ClaimResult:
    """One claim recomputed under one or more parsers."""

    claim: Claim
    parsers: tuple[str, ...]  # the parsers it was recomputed under, primary first
    computed: dict[str, Computed]
    matches: dict[str, Match | None]  # None where not computable

    @property
    def primary(self) -> str:
        return self.parsers[0]

    def verdict(self, parser: str) -> Verdict | None:
        """The verdict under ``parser``; None when the claim was not recomputed under it."""
        if parser not in self.computed:
            return None
        m = self.matches[parser]
        return Verdict.not_computable if m is None else m.verdict

    def rounded(self, parser: str) -> str | None:
        c = self.computed.get(parser)
        p = self.claim.printed
        if c is None or c.value is None or not isinstance(p, Printed):
            return None
        return rounded(p, c.value)

    def to_json(self) -> dict:
        out = self.claim.to_json()
        out["mode"] = "recomputed"
        out["interval"] = self.claim.printed.show_interval()
        out["parsers"] = list(self.parsers)
        out["computed"] = {p: c.to_json() for p, c in self.computed.items()}
        out["rounded"] = {p: self.rounded(p) for p in self.parsers}
        out["verdict"] = {p: str(self.verdict(p)) for p in self.parsers}
        out["why"] = {p: c.why for p, c in self.computed.items() if c.why is not None}
        out["tie"] = [p for p, m in self.matches.items() if m is not None and m.tie]
        return out


@dataclass(frozen=True, slots=True)
class Flag:
    """Something a reader of the note should know: a short kind code and one sentence."""

    kind: str  # unparsed | rewritten | skipped | impossible | produced_differently | hash | items | tie | warning | source
    message: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class Verification:
    """Everything ``replicate verify`` found, ready to render as a note, a table or JSON."""

    claims_file: ClaimsFile
    parsers: tuple[str, ...]  # columns, in order; the first is the gating parser
    explicit_parsers: bool  # True when --parser was given (it overrides claims' own)
    results: tuple[ClaimResult, ...]
    edges: tuple[EdgeFigures, ...]
    floors: tuple[FloorFigures, ...]
    run_figures: tuple[RunFigures, ...]
    run_files: dict[str, tuple[RunFile, ...]]
    flags: tuple[Flag, ...]
    root: str
    tool_version: str
    date: str
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    trials: TrialsVerification | None = None  # the trial claims, when the claims file has any
    decided: bool = False  # every run carries labels or verdicts its reader decided: one column, no parser
    label_keys: tuple[tuple[str, str, str], ...] = ()  # (run, parser, label-cache key) of every labelling, in order

    def summary(self) -> dict[str, dict[str, int]]:
        """Per parser column: how many claims match, mismatch or are not computable."""
        out = {p: {str(v): 0 for v in Verdict} for p in self.parsers}
        for r in self.results:
            for p in r.parsers:
                out[p][str(r.verdict(p))] += 1
        return out

    def summary_line(self) -> str:
        """E.g. "62 of 70 claims match under umbrela-strict@1; 70 of 70 under umbrela-fallback@1".

        With trial claims, their line follows (alone when there are no judge claims).
        """
        judge = self._judge_line()
        if self.trials is None:
            return judge
        if not self.results:
            return self.trials.summary_line()
        return f"{judge}; {self.trials.summary_line()}"

    def _judge_line(self) -> str:
        parts: list[str] = []
        for _i, (p, s) in enumerate(self.summary().items()):
            total = sum(s.values())
            if total == 0:
                continue
            text = f"{s['match']} of {total} {'claims match under ' if not parts else 'under '}{p}"
            if s["not_computable"]:
                text += f" ({s['not_computable']} not computable)"
            parts.append(text)
        return "; ".join(parts) if parts else "no claims"

    @property
    def failed(self) -> tuple[ClaimResult, ...]:
        """Claims that mismatch under their primary (gating) parser."""
        return tuple(r for r in self.results if r.verdict(r.primary) is Verdict.mismatch)

    @property
    def ok(self) -> bool:
        return not self.failed and not (self.trials is not None and self.trials.failed)

    @property
    def failed_ids(self) -> list[str]:
        """Every claim that fails the check: judge claims mismatching under their gating parser, trial claims
        that mismatch (recomputed) or do not replicate (replicated)."""
        ids = [r.claim.id for r in self.failed]
        if self.trials is not None:
            ids += [r.claim.id for r in self.trials.failed]
        return ids

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
            "study": self.claims_file.study.to_json(),
            "claims_file": self.claims_file.path,
            "root": self.root,
            "tool": {"name": "replicate", "version": self.tool_version},
            "date": self.date,
            "parsers": [
                {"name": p, "origin": PARSERS.origin(p) if p in PARSERS else None} for p in self.parsers
            ],
            "gating_parser": None if not self.parsers else (
                self.parsers[0] if self.explicit_parsers or self.decided else "per claim"),
            "decided_labels": self.decided,
            "summary": self.summary(),
            "summary_line": self.summary_line(),
            "ok": self.ok,
            "claims": [r.to_json() for r in self.results],
            "edges": [_edge_json(e) for e in self.edges],
            "floors": [_floor_json(f) for f in self.floors],
            "runs": [_run_json(f) for f in self.run_figures],
            "flags": [f.to_json() for f in self.flags],
            "sources": self.sources(),
            **({} if self.trials is None else {"trials": self.trials.to_json()}),
            **({"label_cache": label_provenance({(r, p): k for r, p, k in self.label_keys})} if self.label_keys else {}),
        }


def _f(x: Any) -> Any:
    return None if x is None else (x if isinstance(x, int) else float(x))


def _edge_json(e: EdgeFigures) -> dict:
    out: dict[str, Any] = {"old": e.old, "new": e.new, "parser": e.parser, "unparsed_policy": e.policy}
    out.update(e.cells.figures())
    out.update(change_rate=_f(e.value("change_rate")), changed=e.changed, shared_items=e.shared_items,
               unparsed={"old": e.unparsed_old, "new": e.unparsed_new})
    if e.error is not None and e.settings is not None:
        if e.error.resampled:
            out["interval"] = {k: v.to_json() for k, v in e.error.interval.items()}
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
