"""The note's section about ranking claims: the claims table and the files read (pure rendering)."""

from __future__ import annotations

from replicate.output import Format, md_code, md_text, one_line, table
from replicate.verify.part import relative
from replicate.verify.ranking_claims import RankingsVerification
from replicate.verify.table_cells import figure_cell, fitted, printed_text, show, verdict_cell


def ranking_table(part: RankingsVerification, fmt: Format, notes: dict[str, int]) -> str:
    plain = fmt is Format.table
    esc = one_line if plain else md_text
    rows = [[esc(r.claim.id), esc(r.claim.where or "-"), figure_cell(r.claim.metric, r.claim.described(esc), plain),
             "-" if r.computed.n is None else r.computed.n, printed_text(r.claim.printed),
             show(r.claim.printed, r.computed.value), verdict_cell(r.outcome, notes)] for r in part.results]
    return fitted(rows, ["id", "where", "figure", "systems", "printed", "recomputed", "verdict"], fmt)


def ranking_sections(part: RankingsVerification, root: str) -> list[str]:
    """``## Ranking claims`` (each qrels pair scored with ir-measures) and ``## Ranking sources``."""
    notes: dict[str, int] = {}
    claims = ranking_table(part, Format.markdown, notes)
    out = ["## Ranking claims", "",
           "Each TREC run file is one system, scored under the reference and the estimate qrels with "
           "ir-measures; the figure compares the two orderings of the systems (no bootstrap: the printed "
           "value is checked at its precision).", "", claims.rstrip("\n"), ""]
    out += [f"[{n}] {why}" for why, n in notes.items()] + ([""] if notes else [])
    topics = [f"- {md_code(r.claim.id)}: {r.topic_note()}" for r in part.results if r.topic_note()]
    out += topics + ([""] if topics else [])
    rows = [[md_code(relative(f.path, root)), role, f.size, f"`{f.sha256}`"] for f, role in part.files]
    out += ["## Ranking sources", "", f"Paths are relative to {md_code(root)}.", "",
            table(rows, ["file", "role", "bytes", "sha256"], Format.markdown).rstrip("\n"), ""]
    return out
