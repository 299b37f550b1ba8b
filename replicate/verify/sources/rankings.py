"""The rankings part: claims over system rankings recomputed (:mod:`replicate.verify.sources.rankings_metrics`), the files
read, and its note sections (pure rendering)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.errors import BadInput
from replicate.output import Format, md_code, table
from replicate.provenance import FileProvenance
from replicate.verify.part import Checked, Part, relative
from replicate.verify.sources.rankings_metrics import RankingsRecomputer
from replicate.verify.table_cells import checked_table, reasons


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
class Rankings(Part):
    """Every ranking claim recomputed, with the files read, each once."""

    results: tuple[RankingClaimResult, ...]
    files: tuple[tuple[FileProvenance, str], ...]  # (file, role: run or qrels), first-seen order
    name = "rankings"
    noun = "ranking"

    def to_json(self) -> dict:
        return {**super().to_json(), "sources": [{**f.to_json(), "role": role} for f, role in self.files]}

    def claims_table(self, fmt: Format, notes: dict[str, int]) -> str:
        return checked_table(self.results, fmt, notes, n="systems")

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        """``## Ranking claims`` (each qrels pair scored with ir-measures) and ``## Ranking sources``."""
        if stage != "claims":
            return []
        notes: dict[str, int] = {}
        claims = self.claims_table(Format.markdown, notes)
        out = ["## Ranking claims", "",
               "Each TREC run file is one system, scored under the reference and the estimate qrels with "
               "ir-measures; the figure compares the two orderings of the systems (no bootstrap: the printed "
               "value is checked at its precision).", "", claims.rstrip("\n"), ""]
        out += reasons(notes) + ([""] if notes else [])
        topics = [f"- {md_code(r.claim.id)}: {r.topic_note()}" for r in self.results if r.topic_note()]
        out += topics + ([""] if topics else [])
        rows = [[md_code(relative(f.path, root)), role, f.size, f"`{f.sha256}`"] for f, role in self.files]
        out += ["## Ranking sources", "", f"Paths are relative to {md_code(root)}.", "",
                table(rows, ["file", "role", "bytes", "sha256"], Format.markdown).rstrip("\n"), ""]
        return out

    def table(self, fmt: Any) -> list[str]:
        notes: dict[str, int] = {}
        return [self.claims_table(fmt, notes).rstrip("\n"), *reasons(notes)]


def check(claims: Sequence[Any], root: Path, claims_file: Any) -> Rankings:
    """The ranking claims recomputed from the files under ``root`` (the source's check; missing files: one
    BadInput naming all)."""
    rc = RankingsRecomputer(root, claims_file.trec_runs)
    missing = sorted({p for c in claims for p in (*rc.paths(c), *c.options["qrels"]) if not (root / p).exists()})
    if missing:
        raise BadInput(f"{len(missing)} file(s) named by ranking claims not found under {root}:\n" + "\n".join(missing))
    results = []
    seen: dict[str, tuple[FileProvenance, str]] = {}
    for c in claims:
        computed = c.spec.compute(rc, c, None)  # every ranking metric computes itself
        a = rc.agreement(c)
        files = tuple(s.file for s in a.systems) + tuple(q.file for q in a.qrels)
        for f in files:
            seen.setdefault(f.path, (f, "qrels" if f in (q.file for q in a.qrels) else "run"))
        results.append(RankingClaimResult(c, computed, files, a.to_json()["topics"]))
    return Rankings(tuple(results), tuple(seen.values()))
