"""The panels ``replicate --help`` groups its commands in, and the order of both: one table.

A command missing here would be listed under "Other" (tests/cli/test_help.py fails on it).
"""

from __future__ import annotations

#: (panel title, its commands in the order shown).
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Start here", ("demo",)),
    ("Audit released judge outputs", ("parse", "compare", "chain", "cells", "agreement", "floor", "matrix",
                                      "rankings")),
    ("K-trial studies", ("plan", "screen", "collect", "score", "import", "items", "costs", "repair-archive",
                         "export", "sim-server")),
    ("Verify a paper and fetch its release", ("verify", "fetch")),
    ("Plugins", ("parsers", "readers", "scorers")),
)

OTHER = "Other"


def panel_of(name: str) -> str:
    for title, names in PANELS:
        if name in names:
            return title
    return OTHER


def order_of(name: str) -> tuple[int, int]:
    for i, (_, names) in enumerate(PANELS):
        if name in names:
            return i, names.index(name)
    return len(PANELS), 0
