"""The rankings part: claims over system rankings, with its note sections
(:mod:`replicate.verify.sources.rankings_note`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replicate.output import md_text
from replicate.verify.ranking_claims import RankingsVerification, check_rankings
from replicate.verify.sources.rankings_note import ranking_sections, ranking_table


class Rankings(RankingsVerification):
    """:class:`~replicate.verify.ranking_claims.RankingsVerification` as the note draws it."""

    def summary_note(self) -> list[str]:
        if not self.failed:
            return ["Ranking claims: none mismatches."]
        return [f"Check failed: {len(self.failed)} ranking claim(s) mismatch: "
                f"{', '.join(md_text(r.claim.id) for r in self.failed)}."]

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        return ranking_sections(self, root) if stage == "claims" else []

    def table(self, fmt: Any) -> list[str]:
        notes: dict[str, int] = {}
        return [ranking_table(self, fmt, notes).rstrip("\n"), *(f"[{i}] {why}" for why, i in notes.items())]


def check(claims: tuple[Any, ...], root: Path, claims_file: Any) -> Rankings:
    """The ranking claims recomputed from the files under ``root`` (the source's check)."""
    found = check_rankings(claims, claims_file.trec_runs, root)
    return Rankings(found.results, found.files)
