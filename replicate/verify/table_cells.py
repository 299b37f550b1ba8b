"""How a claim shows in a table cell, for claims over runs and trial claims alike (pure rendering).

The printed value as printed, a computed value in the printed scale, a verdict
(with its numbered reason when not computable), what the figure is about, and
tables that fit a terminal in plain text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from replicate.output import Format, md_text, one_line, table, table_blocks
from replicate.printed import Printed
from replicate.verify.matching import Outcome, PrintedFlag


def printed_text(p: Printed | PrintedFlag) -> str:
    """The printed value as a reader saw it (``28.0%``; ``pass``/``fail`` for a flag)."""
    if isinstance(p, PrintedFlag):
        return "pass" if p.value else "fail"
    return f"{p.text.rstrip('%').rstrip()}{'%' if p.unit == 'percent' else ''}"


def show(p: Printed | PrintedFlag, value: Any) -> str:
    """A computed value in the printed unit, three more decimals than printed (counts and flags as they are)."""
    if value is None:
        return "-"
    if isinstance(value, bool) or isinstance(p, PrintedFlag):
        return "pass" if value else "fail"
    if p.unit == "count" or isinstance(value, int):
        return str(value)
    x = float(Fraction(value) * 100) if p.unit == "percent" else float(value)
    return f"{x:.{p.places + 3}f}"


def not_computable(why: str | None, notes: dict[str, int]) -> str:
    """``not computable [n]``, the reason numbered in ``notes`` (listed under the table)."""
    ref = notes.setdefault(why or "undefined", len(notes) + 1)
    return f"not computable [{ref}]"


def reasons(notes: dict[str, int]) -> list[str]:
    """The numbered reasons a table's cells refer to (``[1] why``), one a line."""
    return [f"[{i}] {why}" for why, i in notes.items()]


def verdict_cell(o: Outcome, notes: dict[str, int], withheld: str | None = None) -> str:
    """A verdict (``match (tie)``); ``not computable [n]`` or a verdict withheld for a reason with its number."""
    if str(o.verdict) == "not_computable":
        return not_computable(o.why, notes)
    if withheld:
        return f"{o.verdict} [{notes.setdefault(withheld, len(notes) + 1)}]"
    return f"{o.verdict}{' (tie)' if o.tie else ''}"


def figure_cell(metric: str, target: str, plain: bool) -> str:
    """What a claim is about; in plain text a long one takes two lines (metric, then runs)."""
    one = f"{metric} ({target})"
    return f"{metric}\n({target})" if plain and len(one) > 55 else one


def checked_table(results: Sequence[Any], fmt: Format, notes: dict[str, int], *, n: str | None = None,
                  withheld: Callable[[Any], str | None] = lambda r: None) -> str:
    """Claims recomputed in one column (:class:`~replicate.verify.part.Checked`): id, where, figure, the items it
    stands on (a column headed ``n``, when given), printed, recomputed and verdict (``withheld``: a result's
    reason to withhold its verdict)."""
    plain = fmt is Format.table
    esc = one_line if plain else md_text  # user text: kept on its line, and inert in markdown
    rows = [[esc(r.claim.id), esc(r.claim.where or "-"), figure_cell(r.claim.metric, r.claim.described(esc), plain),
             *([] if n is None else ["-" if r.computed.n is None else r.computed.n]), printed_text(r.claim.printed),
             show(r.claim.printed, r.computed.value), verdict_cell(r.outcome, notes, withheld(r))] for r in results]
    return fitted(rows, ["id", "where", "figure", *([] if n is None else [n]), "printed", "recomputed", "verdict"], fmt)


def fitted(rows: list[list[Any]], headers: list[str], fmt: Format) -> str:
    """One table in markdown; in plain text blocks of columns that fit a terminal (see table_blocks)."""
    if fmt is not Format.table:
        return table(rows, headers, fmt)
    columns = [(h, [row[i] for row in rows]) for i, h in enumerate(headers)][1:]
    return table_blocks(headers[0], [row[0] for row in rows], columns)
