"""The runs part: claims over judge runs as the note draws them: the per-parser claims table, edges, floors and
runs (pure rendering)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from replicate.judge.floor import EdgeCheck, Floor
from replicate.judge.model import RunFile
from replicate.judge.outofscale import ScaleOutcome, departure_lines, outcomes_json
from replicate.judge.run_figures import RunFigures
from replicate.output import Format, md_code, md_text, one_line
from replicate.printed import Verdict
from replicate.provenance import FileProvenance
from replicate.verify.alternatives import Alternatives, note_line
from replicate.verify.claims_file import Claim
from replicate.verify.matching import Computed, Outcome
from replicate.verify.part import Flag, Part, matched
from replicate.verify.recompute import EdgeFigures
from replicate.verify.sources.runs_sections import edges, figures_section, floors, runs, sources_section
from replicate.verify.table_cells import figure_cell, fitted, printed_text, reasons, show, verdict_cell


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
        return {**self.claim.to_json(), "mode": "recomputed", "interval": self.claim.printed.show_interval(),
                "parsers": list(self.parsers), "computed": {p: c.to_json() for p, c in self.computed.items()},
                "rounded": {p: self.rounded(p) for p in self.parsers},
                "verdict": {p: str(self.verdict(p)) for p in self.parsers},
                "why": {p: c.why for p, c in self.computed.items() if c.why is not None},
                "tie": [p for p in self.computed if self.outcome(p).tie],
                "alternatives": [] if self.alternatives is None else [a.to_json() for a in self.alternatives.found]}


def _result_cell(r: ClaimResult, parser: str, notes: dict[str, int]) -> str:
    """The value under one parser column and its verdict (``28.050 match``, ``(not asked)``)."""
    if parser not in r.computed:
        return "(not asked)"
    o = r.outcome(parser)
    verdict = verdict_cell(o, notes)
    return verdict if o.verdict is Verdict.not_computable else f"{show(o.printed, o.computed.value)} {verdict}"


def claims_table(v: Runs, fmt: Format, *, figure: bool = True) -> tuple[str, dict[str, int]]:
    """The claims table and the numbered reasons it refers to.

    ``figure=False`` leaves out the metric-and-runs column (the note lists each
    claim in words right below its table, which keeps the table narrow).
    """
    notes: dict[str, int] = {}
    plain = Format(fmt) is Format.table
    esc = one_line if plain else md_text  # user text: kept on its line, and inert in markdown
    headers = ["id", "where", *(["figure"] if figure else []), "printed", *v.parsers, "verdict"]
    rows = []
    for r in v.results:
        c = r.claim
        rows.append([
            esc(c.id), esc(c.where or "-"),
            *([figure_cell(c.metric, c.described(esc), plain)] if figure else []),
            str(printed_text(c.printed)), *[str(_result_cell(r, p, notes)) for p in v.parsers],
            f"{r.verdict(r.primary).value} ({r.primary})",  # type: ignore[union-attr]
        ])
    if plain:  # blocks that each fit a terminal (like `replicate chain`): what is claimed, then the verdict
        at = len(headers) - 1 - len(v.parsers)  # right after "printed", then the value under each parser
        headers = headers[:at] + headers[-1:] + headers[at:-1]
        rows = [row[:at] + row[-1:] + row[at:-1] for row in rows]
    return fitted(rows, headers, Format(fmt)), notes


def claim_texts(v: Runs, notes: dict[str, int]) -> list[str]:
    """Each claim in words, then the reasons the table refers to."""
    out = []
    for r in v.results:
        c = r.claim
        where = f" ({md_text(c.where)})" if c.where else ""
        extra = []
        if c.parser:
            extra.append(f"pins `{c.parser}`")
        if c.unparsed:
            extra.append(f"unparsed policy `{c.unparsed}`")
        if c.text:
            extra.append(f"as printed: \"{md_text(c.text)}\"")
        tail = f"; {'; '.join(extra)}" if extra else ""
        out.append(f"- {md_code(c.id)}{where}: `{c.metric}` of {c.described(md_text)}, printed {printed_text(c.printed)}, "
                   f"matches {c.printed.show_interval()}{tail}")
        if r.alternatives is not None and r.alternatives.found:  # which definition the printed number used
            out.append(f"  - {note_line(c, r.alternatives.found)} (the verdict stays mismatch)")
    if notes:
        out += ["", "Not computable:", ""]
        out += reasons(notes)
    return out


CLAIMS_INTRO = (
    "Each recomputed value is shown in the printed unit with three more decimals than printed, then its verdict: "
    "a printed value matches when the recomputed one rounds to it (\"28.0\" covers 27.95 <= x <= 28.05; a value "
    "exactly on a boundary matches either neighbour and is flagged as a tie); counts must be equal.")


@dataclass(frozen=True)
class Runs(Part):
    """The runs part: the claims over judge runs recomputed, with the edges, floors and runs they touch, as the
    JSON and the note show them."""

    parsers: tuple[str, ...]  # columns, in order; the first is the gating parser
    explicit_parsers: bool  # True when --parser was given (it overrides claims' own)
    results: tuple[ClaimResult, ...]
    edges: tuple[EdgeFigures, ...]
    floors: tuple[Floor, ...]
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
                seen.setdefault(f.provenance.path, {**f.to_json(), "runs": []})["runs"].append(run)
        return list(seen.values())

    def to_json(self) -> dict:
        from replicate.judge.labelcache import label_provenance
        from replicate.parsing import PARSERS

        return {
            "parsers": [{"name": p, "origin": PARSERS.origin(p) if p in PARSERS else None} for p in self.parsers],
            "gating_parser": None if not self.parsers else (
                self.parsers[0] if self.explicit_parsers or self.decided else "per claim"),
            "decided_labels": self.decided,
            "summary": self.summary(),
            "claims": [r.to_json() for r in self.results],
            "edges": [e.to_json() for e in self.edges],
            "floors": [{"runs": list(f.names), **f.to_json()} for f in self.floors],  # the run names the claims use
            "runs": [f.to_json() for f in self.run_figures],
            **({"extraction_failures": failures} if (failures := self.extraction_failures()) else {}),
            "out_of_scale": outcomes_json(self.out_of_scale, self.scale_outcomes),
            "sources": self.sources(),
            **({"label_cache": label_provenance({(r, p): k for r, p, k in self.label_keys})} if self.label_keys else {}),
        }

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
        lines = self.failed_note(f"Check passed: no claim mismatches under {gate}.", f"claim(s) mismatch under {gate}")
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
            return (edges(self.edges, self.floors, self.against_floor) + floors(self.floors)
                    + runs(self.run_figures, self.run_files, self.extraction_failures()))
        return figures_section(figures) + sources_section(self.sources(), root)

    def table(self, fmt: Any) -> list[str]:
        claims, notes = claims_table(self, fmt)
        return [claims.rstrip("\n"), *([""] + reasons(notes) if notes else [])]
