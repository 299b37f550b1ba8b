"""The project's exception types.

Every error a user can cause derives from :class:`ReplicateError`; the command
line prints it as ``Error: <message>`` without a traceback and exits with its
``exit_code`` (see design: 0 success, 1 a check failed, 2 bad usage or input).
"""

from __future__ import annotations

from os import PathLike


class ReplicateError(Exception):
    """Base class for errors meant for the user, not for a traceback."""

    exit_code: int = 2


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


class CheckFailed(ReplicateError):
    """A verification did not pass: a claim mismatched, a hash did not match."""

    exit_code = 1


def _locate(path: str | None, line: int | None, message: str) -> str:
    if path is None:
        return message
    if line is None:
        return f"{path}: {message}"
    return f"{path}:{line}: {message}"
