"""Root options that may also follow the command (``replicate matrix RUNS --no-cache``).

``--no-cache`` and ``--verbose`` belong to the root command, but users write them where
they write every other option: after the command. :func:`hoist` moves them in front of
the command before typer reads the arguments. Imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Root options that take no value and may stand anywhere before ``--``.
ROOT_FLAGS = frozenset({"--no-cache", "--verbose"})


def hoist(argv: Sequence[str]) -> list[str]:
    """``argv`` with every root flag after the command moved in front of it (order kept; ``--`` ends the search)."""
    args = list(argv)
    end = args.index("--") if "--" in args else len(args)
    moved = [a for a in args[:end] if a in ROOT_FLAGS]
    if not moved:
        return args
    rest = [a for a in args[:end] if a not in ROOT_FLAGS] + args[end:]
    return moved + rest
