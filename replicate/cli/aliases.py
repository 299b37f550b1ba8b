"""Deprecated option spellings: rewritten to today's before click reads them, with one warning each.

One option name has one meaning across commands (issue 32): ``plan --n-items N`` (was
``--items``, which elsewhere names an items file), ``--inspect-scorer NAME`` (was
``--scorer``, which elsewhere names a versioned scorer ``NAME@N``) and ``--edge OLD:NEW``
(``floor`` and ``parsers audit`` took two values, ``--edge OLD NEW``; ``items`` and
``costs`` one). The old spellings still work: :func:`modernise` rewrites them and says so.
Imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Old option -> today's, for commands that have today's option and not the old one.
RENAMED = {"--items": "--n-items", "--scorer": "--inspect-scorer"}

#: The metavar of an ``--edge`` that once took two values (``OLD NEW``) and now takes one.
EDGE_METAVAR = "OLD:NEW"


def _value_counts(params: Sequence[Any]) -> dict[str, int]:
    """Option string -> how many values it takes (0 for flags)."""
    counts: dict[str, int] = {}
    for p in params:
        if getattr(p, "param_type_name", None) != "option":
            continue
        n = 0 if (p.is_flag or p.count) else max(p.nargs, 1)
        for o in (*p.opts, *p.secondary_opts):
            counts[o] = n
    return counts


def _pair_edge(params: Sequence[Any]) -> bool:
    return any(getattr(p, "param_type_name", None) == "option" and "--edge" in p.opts and p.metavar == EDGE_METAVAR for p in params)


def _pair(first: str, second: str) -> bool:
    """Whether ``--edge FIRST SECOND`` is the old two-value spelling: two words, neither an option, FIRST holding no ':'."""
    return ":" not in first and not first.startswith("-") and not second.startswith("-")


def modernise(params: Sequence[Any], args: Sequence[str]) -> tuple[list[str], list[str]]:
    """``args`` with deprecated spellings rewritten for a command of ``params``, and one warning per rewrite.

    A renamed option is rewritten when the command has its new name and not its old one
    (``collect --items FILE`` stays). ``--edge OLD NEW`` becomes ``--edge OLD:NEW`` when the
    command's ``--edge`` is :data:`EDGE_METAVAR` (see :func:`_pair`).
    Option values and everything after ``--`` are left alone.
    """
    counts = _value_counts(params)
    renamed = {old: new for old, new in RENAMED.items() if new in counts and old not in counts}
    pair_edge = _pair_edge(params)
    out: list[str] = []
    warnings: list[str] = []
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token == "--":
            out += [token, *rest]
            break
        name, eq, value = token.partition("=")
        if name in renamed:
            warnings.append(f"Warning: {name} is deprecated; write {renamed[name]}")
            name = token = renamed[name] + eq + value
        if name == "--edge" and pair_edge and not eq and len(rest) >= 2 and _pair(rest[0], rest[1]):
            warnings.append("Warning: --edge OLD NEW is deprecated; write --edge OLD:NEW")
            out += [token, f"{rest[0]}:{rest[1]}"]
            del rest[:2]
            continue
        out.append(token)
        if name.startswith("-") and not eq:
            taken = counts.get(name, 0)
            out += rest[:taken]
            del rest[:taken]
    return out, warnings
