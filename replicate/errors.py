"""The project's exception types.

Every error a user can cause derives from :class:`ReplicateError`; the command
line prints it as ``Error: <message>`` without a traceback and exits with its
``exit_code`` (see docs/design/design.md: 0 success, 1 a check failed, 2 bad usage or input).

Library errors name the library's parameters (``n_null must be >= 0``), not a
front end's options. A message that names parameters is a :class:`Message`
built from text and :class:`Param` parts; it reads with the parameter names,
and a front end renders it with its own spelling of each (the command line:
``--null must be >= 0``, see ``replicate.cli.base``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike

#: Maps a parameter name to a front end's spelling of it, or None to keep the name.
Namer = Callable[[str], "str | None"]


@dataclass(frozen=True, slots=True)
class Param:
    """A library parameter named in an error message."""

    name: str


class Message(str):
    """Error text naming parameters: reads with their names, renders with a front end's.

    ``Message(Param("low"), " must not exceed ", Param("high"))`` reads
    "low must not exceed high"; the CLI shows "--low must not exceed --high".
    """

    parts: tuple[str | Param, ...]

    def __new__(cls, *parts: str | Param) -> Message:
        self = super().__new__(cls, "".join(p.name if isinstance(p, Param) else p for p in parts))
        self.parts = parts
        return self

    @classmethod
    def naming(cls, text: str, *params: str) -> Message:
        """``text`` with each whole-word occurrence of ``params`` marked as a parameter."""
        if not params:
            return cls(text)
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, params)) + r")\b")
        parts: list[str | Param] = []
        for i, piece in enumerate(pattern.split(text)):
            if piece:
                parts.append(Param(piece) if i % 2 else piece)
        return cls(*parts)

    def render(self, namer: Namer) -> str:
        return "".join((namer(p.name) or p.name) if isinstance(p, Param) else p for p in self.parts)


def render(text: str, namer: Namer) -> str:
    """``text`` with its parameters (if it is a :class:`Message`) spelled by ``namer``."""
    return text.render(namer) if isinstance(text, Message) else text


class ReplicateError(Exception):
    """Base class for errors meant for the user, not for a traceback."""

    exit_code: int = 2

    def message_for(self, namer: Namer) -> str:
        """The message with each parameter it names spelled by ``namer`` (a front end's options)."""
        if len(self.args) == 1 and isinstance(self.args[0], Message):
            return self.args[0].render(namer)
        return str(self)


class UsageError(ReplicateError):
    """The command or function was called with arguments that cannot work."""

    exit_code = 2


class BadInput(ReplicateError):
    """An input file is malformed. Names the file and, where known, the line."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        super().__init__(_locate(self.path, line, message))

    def message_for(self, namer: Namer) -> str:
        return _locate(self.path, self.line, render(self.reason, namer))


class CheckFailed(ReplicateError):
    """A verification did not pass: a claim mismatched, a hash did not match."""

    exit_code = 1


def _locate(path: str | None, line: int | None, message: str) -> str:
    if path == "-":
        path = "<stdin>"
    if path is None:
        return message
    if line is None:
        return f"{path}: {message}"
    return f"{path}:{line}: {message}"
