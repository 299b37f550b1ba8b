"""The trials part: claims over K-trial tables, with its note sections (:mod:`replicate.verify.sources.trials_note`)."""

from __future__ import annotations

from typing import Any

from replicate.output import md_text
from replicate.verify.sources.runs_note import figures_section
from replicate.verify.sources.trials_note import trial_sections, trial_table
from replicate.verify.verification import TrialsVerification


class Trials(TrialsVerification):
    """:class:`~replicate.verify.verification.TrialsVerification` as the note draws it."""

    def summary_note(self) -> list[str]:
        if not self.failed:
            return ["Trial claims: none mismatches and none fails to replicate."]
        ids = ", ".join(md_text(r.claim.id) for r in self.failed)
        return [f"Check failed: {len(self.failed)} trial claim(s) mismatch or do not replicate: {ids}."]

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        if stage == "claims":
            return trial_sections(self)
        if stage == "closing" and self.cells:  # P+ and P- beside delta for the cells the claims name
            return figures_section(figures, part="trials")
        return []

    def table(self, fmt: Any) -> list[str]:
        return [trial_table(self, fmt).rstrip("\n")]
