"""The small-sample threshold every command flags against (pure).

No verdict without its n: an edge, a floor, a four-cell table or a K-trial cell over fewer
than ``MIN_ITEMS`` items (``--min-items``) is flagged, with the n and the threshold in words.
"""

from __future__ import annotations

#: Default smallest number of items below which an edge, floor, table or K-trial cell is flagged.
MIN_ITEMS = 100


def too_few_items(what: str, n: int, min_items: int, *, intervals: bool = True) -> str | None:
    """The flag's words when ``n < min_items`` (``what`` says what the n counts), else None.

    ``intervals``: whether the figures have intervals to read instead (none with ``--replicates 0``).
    """
    if n >= min_items:
        return None
    then = "read the intervals" if intervals else "no intervals computed: --replicates 0"
    return f"{what} only n = {n} items, fewer than --min-items {min_items}: too few for a verdict ({then})"
