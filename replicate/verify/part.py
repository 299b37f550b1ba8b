"""What every claim source gives a verification: the :class:`Part` protocol (pure).

A verification (:class:`~replicate.verify.verification.Verification`) is a tuple of
parts, one per claim source that has claims: runs
(:mod:`replicate.verify.sources.runs`), trials tables
(:mod:`replicate.verify.sources.trials`), system rankings
(:mod:`replicate.verify.sources.rankings`), or a source of your own
(``docs/verify.md``, "Adding a claim source"). The verification decides
``ok``, the failed claims, the summary line and the JSON from its parts, and
the note (:mod:`replicate.verify.note`) draws each part where the protocol
says, so neither knows any source by name.

A source's part subclasses :class:`Part`, which gives the defaults a small source keeps; :class:`Checked`
is the one base of a claim's result in one column (its verdict, failure,
rounding and common JSON come from the :class:`~replicate.verify.matching.Outcome`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Protocol

from replicate.output import md_text
from replicate.printed import Verdict
from replicate.provenance import FileProvenance
from replicate.verify.matching import Computed, Judged, Outcome

#: Where in the note a part's sections go: after the summary (its claims), after every part's claims (its
#: details), after the flags (its closing sections).
STAGES = ("claims", "details", "closing")


@dataclass(frozen=True, slots=True)
class Flag:
    """Something a reader of the note should know: a short kind code and one sentence."""

    kind: str  # unparsed | extraction | rewritten | skipped | impossible | produced_differently | hash | items | tie | warning | source | departure
    message: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message}


class Result(Protocol):
    """One claim's result: the claim, whether it fails the check, and its JSON."""

    @property
    def claim(self) -> Any: ...

    @property
    def failed(self) -> bool: ...

    def to_json(self) -> dict: ...


class Part(ABC):
    """What a claim source gives a verification (see the module docstring). A source's part subclasses it; the
    defaults are those of a source whose claims are each recomputed in one column (:class:`Checked`) and that
    reads no released file, flags nothing and adds no option."""

    #: the source's name; the JSON's key for the part
    name = "part"
    #: how its summary line and note call its claims (``ranking`` claims); empty: by the source's name
    noun = ""
    #: its JSON's keys sit at the top of the verification's (the runs part's), not under ``name``
    top_level = False
    results: Sequence[Result]

    @property
    def failed(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.failed)

    @property
    def empty(self) -> bool:
        """Nothing to show: the part stays out of the note and the summary line unless it is the only one."""
        return not self.results

    def summary(self) -> Any:
        """How many of its claims have each verdict (the JSON's ``summary``)."""
        return counts(self.results, [str(v) for v in Verdict])

    def summary_line(self) -> str:
        """``5 of 6 ranking claims match (1 not computable)``."""
        return matched(self.summary(), f"{self.noun or self.name} claims match")

    def to_json(self) -> dict:
        return {"summary": self.summary(), "summary_line": self.summary_line(), "ok": not self.failed,
                "claims": [r.to_json() for r in self.results]}

    def summary_note(self) -> list[str]:
        """Its lines of the note's Summary, after the summary line."""
        noun = self.noun or self.name
        return self.failed_note(f"{noun.capitalize()} claims: none mismatches.", f"{noun} claim(s) mismatch")

    def failed_note(self, passed: str, failing: str) -> list[str]:
        """``passed`` when no claim fails, else ``Check failed: N <failing>: <their ids>.``"""
        if not self.failed:
            return [passed]
        return [f"Check failed: {len(self.failed)} {failing}: {', '.join(md_text(r.claim.id) for r in self.failed)}."]

    @abstractmethod
    def table(self, fmt: Any) -> list[str]:
        """Its lines of the terminal view."""

    def released_files(self) -> Sequence[FileProvenance]:
        """The released files it read (the note's header names their fetched releases; Reproduce fetches them)."""
        return ()

    def note_flags(self) -> Sequence[Flag]:
        """What the note's Flags section reports for it."""
        return ()

    def reproduce_args(self) -> str:
        """Options of the verify command that repeats the check (e.g. `` --replication NAME=TRIALS``)."""
        return ""

    def header_rows(self) -> list[list[str]]:
        """Rows of the note's header table (after the data's, before the tool's)."""
        return []

    def table_head(self) -> list[str]:
        """Lines the terminal view opens with, whatever is shown (e.g. a departure from the source's reading)."""
        return []

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        """Its sections of the note at ``stage`` (one of :data:`STAGES`)."""
        return []


@dataclass(frozen=True)
class Checked:
    """A claim's figure in one column, judged (the base of trial and ranking results; runs have one per parser)."""

    claim: Any
    computed: Computed

    @property
    def judged(self) -> Judged | None:
        """A replication's judgement, where a fresh collection decides the verdict."""
        return None

    @property
    def outcome(self) -> Outcome:
        return Outcome(self.claim.printed, self.computed, self.judged)

    @property
    def verdict(self) -> str:
        return str(self.outcome.verdict)

    @property
    def failed(self) -> bool:
        return self.outcome.failed

    @property
    def why(self) -> str | None:
        return self.outcome.why

    def rounded(self) -> str | None:
        return self.outcome.rounded()

    def to_json(self) -> dict:
        out = self.claim.to_json()
        out.update(mode="recomputed", computed=self.computed.to_json(), rounded=self.rounded(), verdict=self.verdict,
                   why=self.why)
        return out


def counts(results: Sequence[Any], verdicts: Sequence[str]) -> dict[str, int]:
    """How many ``results`` have each of ``verdicts`` (each result's ``verdict``)."""
    out = dict.fromkeys(verdicts, 0)
    for r in results:
        out[r.verdict] += 1
    return out


def matched(s: dict[str, int], text: str) -> str:
    """``"K of N <text>"``, K the matches of the verdict counts ``s`` and N all of them, with how many are not
    computable where any is (``5 of 6 ranking claims match (1 not computable)``)."""
    extra = f" ({s['not_computable']} not computable)" if s["not_computable"] else ""
    return f"{s['match']} of {sum(s.values())} {text}{extra}"


def under_root(path: str) -> bool:
    """Whether a path a claims file gives stays under --root: relative, without '..'."""
    return not (PurePath(path).is_absolute() or ".." in PurePath(path).parts)


def outside_root(paths: Sequence[str]) -> str | None:
    """What is wrong with the paths of ``paths`` that leave --root (see :func:`under_root`); None when none does."""
    bad = [p for p in paths if not under_root(p)]
    return f"paths must be relative to --root without '..': {', '.join(bad)}" if bad else None


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` where it lies under it, else as given (POSIX separators)."""
    try:
        return PurePath(path).relative_to(PurePath(root)).as_posix()
    except ValueError:
        return PurePath(path).as_posix()
