"""How a four-cell figure is printed (pure): its value in its kind's units, its column header on two lines.

Every name, definition and header comes from the figure's declaration in
:data:`replicate.stats.fourcell.FIGURES`; this module only says how tables print them.
"""

from __future__ import annotations

from replicate.output import num, pct
from replicate.stats.fourcell import FIGURES


def figure_text(figure: str, value: float | None, *, pct_digits: int = 1, num_digits: int = 2) -> str:
    """A four-cell figure's value as a table prints it: a ratio as a number, a rate or a difference as a percent."""
    return num(value, num_digits) if FIGURES[figure].kind == "ratio" else pct(value, pct_digits)


def two_lines(header: str) -> str:
    """A column header on two lines for plain text: broken at its first space, else after its ``/``."""
    if " " in header:
        return header.replace(" ", "\n", 1)
    head, slash, tail = header.partition("/")
    return f"{head}/\n{tail}" if slash and tail else header
