"""The runs part: claims over judge runs, with its note sections (:mod:`replicate.verify.sources.runs_note`)."""

from __future__ import annotations

from typing import Any

from replicate.judge.outofscale import departure_lines
from replicate.output import Format, md_code, md_text
from replicate.verify.sources.runs_note import (
    claim_texts,
    claims_table,
    edges,
    figures_section,
    floors,
    runs,
    sources_section,
)
from replicate.verify.table_cells import reasons
from replicate.verify.verification import RunsVerification

CLAIMS_INTRO = (
    "Each recomputed value is shown in the printed unit with three more decimals than printed, then its verdict: "
    "a printed value matches when the recomputed one rounds to it (\"28.0\" covers 27.95 <= x <= 28.05; a value "
    "exactly on a boundary matches either neighbour and is flagged as a tie); counts must be equal.")


class Runs(RunsVerification):
    """:class:`~replicate.verify.verification.RunsVerification` as the note draws it."""

    def header_rows(self) -> list[list[str]]:
        rows = [["Parsers", ", ".join(f"`{p}`" for p in self.parsers)]]
        scale = self._out_of_scale()
        return rows + ([["Out-of-scale labels", scale]] if scale else [])

    def _out_of_scale(self) -> str:
        """The header's words for labels outside their run's scale: the policy when it is not ``keep``, and each
        run with such labels (empty when the policy is ``keep`` and no label lies outside)."""
        changed = [o for o in self.scale_outcomes if o.count]
        if self.out_of_scale == "keep" and not changed:
            return ""
        policy = self.out_of_scale
        head = "kept as read" if policy == "keep" else f"{policy} ({md_code('--out-of-scale ' + policy)})"
        return "; ".join([head, *(md_text(o.words()) for o in changed)]) if changed else f"{head}; no label lay outside"

    def table_head(self) -> list[str]:
        return departure_lines(self.out_of_scale, self.scale_outcomes)

    def summary_note(self) -> list[str]:
        one = len(self.parsers) == 1
        gate = self.parsers[0] if self.explicit_parsers or self.decided or one else "each claim's first parser"
        if self.failed:
            ids = ", ".join(md_text(r.claim.id) for r in self.failed)
            lines = [f"Check failed: {len(self.failed)} claim(s) mismatch under {gate}: {ids}."]
        else:
            lines = [f"Check passed: no claim mismatches under {gate}."]
        if self.decided:
            lines += ["", f"Every run carries labels or correctness verdicts its reader decided ({self.parsers[0]}), "
                      "so no parser reads them and each claim is recomputed once."]
        elif not self.explicit_parsers and one:
            lines += ["", f"No parser was given, so every claim was recomputed under {self.parsers[0]}, the claims "
                      "file's parser; no other registered parser of its family gives the same labels."]
        elif not self.explicit_parsers:
            lines += ["", "No parser was given, so each claim was recomputed under the parser it names, "
                      "else under the study's parser and every registered parser of its family giving the same "
                      "labels (every umbrela parser when the study names none), with the released readings first "
                      "and the project's own corrected readings last; a claim's first parser gates the result."]
        return lines

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        if stage == "claims":
            claims, notes = claims_table(self, Format.markdown, figure=False)
            return ["## Claims", "", CLAIMS_INTRO, "", claims.rstrip("\n"), "", *claim_texts(self, notes), ""]
        if stage == "details":
            return edges(self) + floors(self) + runs(self)
        return figures_section(figures) + sources_section(self, root)

    def table(self, fmt: Any) -> list[str]:
        claims, notes = claims_table(self, fmt)
        return [claims.rstrip("\n"), *([""] + reasons(notes) if notes else [])]
