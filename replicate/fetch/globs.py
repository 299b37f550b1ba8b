"""Include globs: which repository paths a fetch materialises.

Semantics (documented in docs/fetch.md): a pattern is matched against the
*full* repository path, with ``/`` as separator and case-sensitively.

- ``*`` matches any run of characters inside one path component (never ``/``);
- ``?`` matches one character other than ``/``; ``[abc]``/``[!abc]`` a class;
- ``**`` as a whole component matches zero or more components
  (``results/**`` = everything under ``results/``; ``**/*.jsonl`` = every
  ``.jsonl`` file at any depth, the top level included);
- a pattern ending in ``/`` means everything under that directory
  (``results/`` = ``results/**``);
- a pattern without wildcards matches that exact file or, if it names a
  directory, everything under it.

So ``results/**`` does not match ``results_2020/x.jsonl`` and ``*.jsonl`` only
matches top-level files. No pattern at all selects every file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


def _component(pat: str) -> str:
    out, i = [], 0
    while i < len(pat):
        c = pat[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2 if pat[i + 1 : i + 2] in ("!", "]") else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pat[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("(?!/)[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> str:
    """The anchored regular expression for one include pattern."""
    if not pattern or pattern.startswith("/"):
        raise ValueError(
            f"include: {pattern!r} is not a repository path pattern "
            "(patterns are relative to the repository root, e.g. 'results/**')"
        )
    if pattern.endswith("/"):
        pattern += "**"
    parts = pattern.split("/")
    rx = ""
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            rx += ".*" if last else "(?:[^/]+/)*"
        else:
            rx += _component(part) + ("" if last else "/")
    if "*" not in pattern and "?" not in pattern and "[" not in pattern:
        rx += "(?:/.*)?"  # a plain name also selects a directory's contents
    return rx


@dataclass(frozen=True)
class Includes:
    """A set of include patterns; empty = everything."""

    patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for p in self.patterns:
            glob_to_regex(p)  # validate early

    @cached_property
    def _regexes(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(glob_to_regex(p)) for p in self.patterns)

    def matches(self, path: str) -> bool:
        if not self.patterns:
            return True
        return any(r.fullmatch(path) for r in self._regexes)

    def matching_patterns(self, path: str) -> list[str]:
        return [p for p, r in zip(self.patterns, self._regexes) if r.fullmatch(path)]

    def may_contain(self, directory: str) -> bool:
        """Whether some path under ``directory`` could match (used to prune tree walks)."""
        if not self.patterns:
            return True
        dparts = directory.split("/")
        for p in self.patterns:
            pparts = (p + "**" if p.endswith("/") else p).split("/")
            ok = True
            for k, d in enumerate(dparts):
                if k >= len(pparts):
                    ok = False
                    break
                if pparts[k] == "**":
                    break
                if not re.fullmatch(_component(pparts[k]), d):
                    ok = False
                    break
            else:
                ok = True
            if ok:
                return True
        return False

    def unmatched(self, paths: list[str]) -> list[str]:
        """Patterns that match none of ``paths`` (usually a typo worth an error)."""
        hit = set()
        for path in paths:
            hit.update(self.matching_patterns(path))
            if len(hit) == len(self.patterns):
                break
        return [p for p in self.patterns if p not in hit]
