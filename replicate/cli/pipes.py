"""A closed pipe (``replicate ... | head``) ends the command quietly with its own exit code; any other
failure of the system under a command (a full disk, standard output to ``/dev/full``, a file size limit, a
name or text the locale cannot encode) ends it with one line ``Error: ...`` and exit code 2
(:data:`SYSTEM_FAILED`), never a traceback.

Imports nothing heavy.
"""

from __future__ import annotations

import os
import sys

#: Exit code when the reader of standard output or error left (a closed pipe): 128 + SIGPIPE, as a
#: program killed by the signal reports it in a shell, so neither success nor "a check failed".
PIPE_CLOSED = 141
#: Exit code when the system failed under the command (an ``OSError``, an encoding error): as bad input, 2.
SYSTEM_FAILED = 2


def quiet_streams() -> None:
    """Point standard output and error at the null device, so that the flushes still to come (the
    interpreter's, at exit) find no closed pipe and print no traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):  # not a real file (a test runner's capture)
            pass
    os.close(devnull)


def quiet_stdout() -> None:
    """Point standard output at the null device, so that what it still buffers is dropped without a second error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    os.close(devnull)


def system_error_text(exc: BaseException) -> str:
    """One line saying what failed: ``PATH: No space left on device``, ``cannot write standard output: ...``."""
    if isinstance(exc, UnicodeError):
        return (f"text that the locale's encoding cannot hold ({getattr(exc, 'reason', exc)}): run under a UTF-8 locale "
                "(LC_ALL=C.UTF-8) or with PYTHONUTF8=1")
    if isinstance(exc, OSError):
        why = exc.strerror or str(exc) or type(exc).__name__
        if exc.filename is not None:
            names = [os.fsdecode(exc.filename)] + ([os.fsdecode(exc.filename2)] if exc.filename2 is not None else [])
            return f"{' -> '.join(n.encode('utf-8', 'backslashreplace').decode('utf-8') for n in names)}: {why}"
        return f"a read or write failed: {why}"
    return str(exc)


def fail_for(exc: BaseException) -> int:
    """Print :func:`system_error_text` as one ``Error:`` line on standard error, drop what standard output still
    buffers, and return :data:`SYSTEM_FAILED` (:data:`PIPE_CLOSED` for a closed pipe, quietly)."""
    if isinstance(exc, BrokenPipeError):
        quiet_streams()
        return PIPE_CLOSED
    quiet_stdout()
    from replicate.secrets import scrub

    line = "Error: " + scrub(system_error_text(exc)) + "\n"
    if not _utf8(sys.stderr):
        line = line.encode("ascii", "backslashreplace").decode("ascii")
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return SYSTEM_FAILED


def _utf8(stream: object) -> bool:
    return str(getattr(stream, "encoding", "") or "").lower().replace("-", "") == "utf8"
