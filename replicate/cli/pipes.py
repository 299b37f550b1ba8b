"""A closed pipe (``replicate ... | head``) ends the command quietly with its own exit code.

Imports nothing heavy.
"""

from __future__ import annotations

import os
import sys

#: Exit code when the reader of standard output or error left (a closed pipe): 128 + SIGPIPE, as a
#: program killed by the signal reports it in a shell, so neither success nor "a check failed".
PIPE_CLOSED = 141


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
