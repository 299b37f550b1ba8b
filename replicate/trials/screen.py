"""Benchmark screening: the share of items on which at least one model's accuracy lies in [low, high].

Used before a main collection to pick benchmarks whose items are neither
saturated nor hopeless for the models at hand. Bounds, threshold and the
comparisons are exact (rational): an item at 5/50 with ``low = 0.1`` counts.
A model with no non-error trial on an item says nothing about it; an item with
no non-error trial from any model is left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from replicate.errors import Message, Param, UsageError
from replicate.output import Format, FormatArg, pct, prose, table
from replicate.provenance import FileProvenance
from replicate.stats.rational import exact_decimal
from replicate.trials.counts import aggregate
from replicate.trials.intervals import share_interval
from replicate.trials.load import TrialsTable
from replicate.trials.render import input_lines
from replicate.trials.settings import DEFAULTS


def _frac(value: str | float | Fraction, name: str) -> Fraction:
    try:
        f = value if isinstance(value, Fraction) else exact_decimal(value)
    except ValueError as exc:
        raise UsageError(Message(Param(name), f" must be a number in [0, 1], got {value!r} ({exc})")) from None
    if not 0 <= f <= 1:
        raise UsageError(Message(Param(name), f" must lie in [0, 1], got {value}"))
    return f


@dataclass(frozen=True)
class ScreenRow:
    benchmark: str
    n_items: int
    informative: int
    excluded_items: int
    per_model: dict[str, int]  # items where that model's accuracy lies in [low, high]
    passes: bool

    @property
    def share(self) -> float | None:
        return None if self.n_items == 0 else self.informative / self.n_items

    def figure(self, key: str, *, count: bool = False) -> tuple[Any, str | None]:
        """The row's figure by its ``screen --format json`` key (``n_items``, ``passes``, ``share``,
        ``informative_items``: their share of the items, or, with ``count``, how many), exact, and why it is
        undefined where it is."""
        n = self.n_items
        if key == "n_items":
            return n, None
        if n == 0:
            return None, "no item has a non-error trial"
        if key == "passes":
            return self.passes, None
        return (self.informative if count and key != "share" else Fraction(self.informative, n)), None

    def to_json(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "n_items": self.n_items,
            "informative_items": self.informative,
            "share": self.share,
            "interval": {"share": share_interval(self.informative, self.n_items).to_json()},
            "passes": self.passes,
            "excluded_items": self.excluded_items,
            "per_model_share": {
                m: (None if self.n_items == 0 else k / self.n_items) for m, k in self.per_model.items()
            },
        }


@dataclass(frozen=True)
class ScreenResult:
    rows: tuple[ScreenRow, ...]
    low: str
    high: str
    threshold: str
    models: tuple[str, ...]
    input: dict
    provenance: FileProvenance | None = None  # the trials file, for markdown and table output

    def to_json(self) -> dict:
        out = {
            "benchmarks": [r.to_json() for r in self.rows],
            "settings": {"low": float(self.low), "high": float(self.high), "threshold": float(self.threshold)},
            "models": list(self.models),
            "input": self.input,
        }
        return out


def screen(
    table_: TrialsTable,
    *,
    low: str | float | Fraction = DEFAULTS.low,
    high: str | float | Fraction = DEFAULTS.high,
    threshold: str | float | Fraction = DEFAULTS.threshold,
) -> ScreenResult:
    lo, hi, th = _frac(low, "low"), _frac(high, "high"), _frac(threshold, "threshold")
    if lo > hi:
        raise UsageError(Message(Param("low"), " must not exceed ", Param("high"), f", got low={low}, high={high}"))
    counts, _ = aggregate(table_)
    valid = counts.valid.astype(np.int64)
    correct = counts.correct.astype(np.int64)
    has = valid > 0
    inside = (
        has
        & (correct * lo.denominator >= lo.numerator * valid)
        & (correct * hi.denominator <= hi.numerator * valid)
    )
    rows = []
    for k, bench in enumerate(counts.benchmarks):
        units = counts.unit_benchmark == k
        usable = units & has.any(axis=0)
        n = int(usable.sum())
        informative = int((inside[:, usable].any(axis=0)).sum())
        rows.append(
            ScreenRow(
                benchmark=bench,
                n_items=n,
                informative=informative,
                excluded_items=int(units.sum()) - n,
                per_model={m: int(inside[i, usable].sum()) for i, m in enumerate(counts.models)},
                passes=n > 0 and informative * th.denominator >= th.numerator * n,
            )
        )
    return ScreenResult(
        rows=tuple(rows),
        low=str(low),
        high=str(high),
        threshold=str(threshold),
        models=counts.models,
        input={
            "file": table_.provenance.to_json() if table_.provenance else {"path": table_.path},
            "rows": table_.n_rows,
        },
        provenance=table_.provenance,
    )


def render_screen(result: ScreenResult, fmt: FormatArg) -> str:
    fmt = Format(fmt)
    rows = []
    for r in result.rows:
        iv = share_interval(r.informative, r.n_items)
        ci = "-" if iv.low is None else f"[{pct(iv.low, 1)}, {pct(iv.high, 1)}]"
        rows.append([r.benchmark, r.n_items, r.informative, pct(r.share, 1), ci, "yes" if r.passes else "no",
                     r.excluded_items])
    head = (
        f"Share of items where at least one of {len(result.models)} model(s) scores in "
        f"[{result.low}, {result.high}]; passes at >= {result.threshold}\n"
    )
    if fmt is Format.markdown:
        head = "## " + head
    body = table(rows, ["benchmark", "items", "informative", "share", "95% CI (Wilson)", "passes", "left out"], fmt)
    note = ("\nThe interval is the Wilson score interval over the benchmark's items (independent items); "
            "'passes' compares the share itself with the threshold.\n")
    return head + body + prose(note, fmt) + input_lines(result.provenance, fmt)
