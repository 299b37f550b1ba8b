"""What ``replicate verify`` found: one part per claim source, and the whole verification (pure data).

:class:`Verification` holds one :class:`~replicate.verify.part.Part` per source (the built-in ones in
:mod:`replicate.verify.sources`) and decides ``ok``, the failed claims, the summary line and the JSON from
them, naming no source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replicate.diagnostics import Diagnostics
from replicate.verify.claims_file import ClaimsFile
from replicate.verify.part import Flag, Part, Result
from replicate.verify.sources.runs import Runs


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
    def runs(self) -> Runs:
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
