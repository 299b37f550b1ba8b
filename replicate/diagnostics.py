"""Counted warnings: nothing read from a file is dropped without a trace.

Loaders report every skipped or suspicious line to a :class:`Diagnostics`
collector. Commands print the counts, JSON output carries them, and
``--strict`` turns the first warning into a :class:`~replicate.errors.BadInput`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from replicate.errors import BadInput, Message, Param


@dataclass(frozen=True, slots=True)
class Warning_:
    """One warning: what kind (a short code), where, and what is wrong."""

    code: str
    message: str
    path: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message} [{self.code}]"

    def to_json(self) -> dict:
        return {"code": self.code, "message": self.message, "path": self.path, "line": self.line}


@dataclass
class Diagnostics:
    """Collects warnings. With ``strict=True`` the first warning raises instead."""

    strict: bool = False
    warnings: list[Warning_] = field(default_factory=list)

    def warn(self, code: str, message: str, *, path: object = None, line: int | None = None) -> None:
        p = None if path is None else str(path)
        if self.strict:
            raise BadInput(Message(f"{message} [{code}; ", Param("strict"), "]"), path=p, line=line)
        self.warnings.append(Warning_(code, message, p, line))

    def warn_all(self, warnings: Iterable[Warning_]) -> None:
        """Warn here, in order, each of ``warnings`` (met elsewhere: a pass read aside, a worker process)."""
        for w in warnings:
            self.warn(w.code, w.message, path=w.path, line=w.line)

    def counts(self) -> dict[str, int]:
        return dict(Counter(w.code for w in self.warnings))

    def __len__(self) -> int:
        return len(self.warnings)

    def to_json(self, *, limit: int = 50) -> dict:
        """Counts by code plus the first ``limit`` warnings in full."""
        return {
            "count": len(self.warnings),
            "by_code": self.counts(),
            "first": [w.to_json() for w in self.warnings[:limit]],
        }


def summary_text(diag: Diagnostics, *, limit: int = 3) -> str:
    """A short stderr summary: per warning code, the count and the first few locations."""
    if not len(diag):
        return ""
    by: dict[str, list[Warning_]] = {}
    for w in diag.warnings:
        by.setdefault(w.code, []).append(w)
    lines = [f"warning: {len(diag)} warning(s) about the input (--strict makes them errors):"]
    for code, ws in by.items():
        lines.append(f"  {code}: {len(ws)}")
        for w in ws[:limit]:
            lines.append(f"    {w}")
        if len(ws) > limit:
            lines.append(f"    ... and {len(ws) - limit} more")
    return "\n".join(lines) + "\n"


def listing_text(diag: Diagnostics, *, limit: int = 20) -> str:
    """The first ``limit`` warnings one a line, then how many more there are (none is dropped unseen)."""
    lines = [f"warning: {w}" for w in diag.warnings[:limit]]
    more = len(diag.warnings) - limit
    if more > 0:
        lines.append(f"warning: ... and {more} more")
    return "".join(line + "\n" for line in lines)
