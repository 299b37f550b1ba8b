"""A claim's figure in one column judged against the printed value (pure).

A claim's figure in one column (a parser, the released trials table, a fresh
collection) is a :class:`Computed` (a value, or why there is none); its
:class:`Outcome` decides its verdict, once: recomputed, ``match`` /
``mismatch`` at printed precision (:mod:`replicate.printed`: the closed
interval of the values that round to the printed one, a boundary a tie; a
pass/fail by equality) or ``not_computable``; replicated, the verdict of
:mod:`replicate.verify.replication` (``replicates``, ``does not replicate``,
``underpowered``) or ``not_computable``. A claim fails its check when its
gating outcome is ``mismatch`` or ``does not replicate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Protocol

from replicate.printed import Match, Printed, Verdict, match, rounded

#: Words a printed pass/fail may be written in.
FLAG_WORDS = {"pass": True, "passes": True, "yes": True, "true": True,
              "fail": False, "fails": False, "no": False, "false": False}


@dataclass(frozen=True, slots=True)
class PrintedFlag:
    """A pass/fail printed for a screening rule (unit ``flag``): compared by equality."""

    text: str
    value: bool
    unit: str = "flag"
    places: int = 0

    def show_interval(self) -> str:
        return "= " + ("pass" if self.value else "fail")


Value = Fraction | int | float | bool

#: Verdicts that fail the check (exit 1).
FAILING = ("mismatch", "does not replicate")


class Judged(Protocol):
    """A replication's judgement of a figure (:class:`replicate.verify.replication.Replicated`): its verdict, or
    None when not computable, and why, where there is no verdict or it was withheld."""

    @property
    def verdict(self) -> str | None: ...

    @property
    def why(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Computed:
    """A computed figure (``n``: the items it is over, where known), or why it could not be computed."""

    value: Value | None
    why: str | None = None
    n: int | None = None

    def to_json(self) -> float | int | bool | None:
        v = self.value
        if v is None or isinstance(v, (bool, int)):
            return v
        return float(v)


@dataclass(frozen=True)
class Outcome:
    """A claim's figure in one column and its verdict (see the module docstring)."""

    printed: Printed | PrintedFlag
    computed: Computed
    replicated: Judged | None = None

    @cached_property
    def match(self) -> Match | None:
        """The value at printed precision (None: not computable, a pass/fail, or replicated)."""
        v = self.computed.value
        if self.replicated is not None or v is None or not isinstance(self.printed, Printed) or isinstance(v, bool):
            return None
        return match(self.printed, v)

    @property
    def verdict(self) -> Verdict | str:
        """A :class:`Verdict` when recomputed; a replication verdict (text) when replicated."""
        if self.replicated is not None:
            return self.replicated.verdict or "not_computable"
        v = self.computed.value
        if v is None:
            return Verdict.not_computable
        if isinstance(self.printed, PrintedFlag):
            return Verdict.match if bool(v) == self.printed.value else Verdict.mismatch
        assert self.match is not None
        return self.match.verdict

    @property
    def failed(self) -> bool:
        return str(self.verdict) in FAILING

    @property
    def tie(self) -> bool:
        """The value lies exactly on a rounding boundary of the printed one (matches either neighbour)."""
        return self.match is not None and self.match.tie

    @property
    def why(self) -> str | None:
        if self.replicated is not None and self.replicated.why:
            return self.replicated.why
        return self.computed.why

    def rounded(self) -> str | None:
        """The value as it would be printed (at the printed precision; pass/fail for a flag)."""
        v = self.computed.value
        p = self.printed
        if v is None:
            return None
        if isinstance(p, PrintedFlag) or isinstance(v, bool):
            return "pass" if v else "fail"
        return rounded(p, v)
