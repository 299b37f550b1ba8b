"""One fetch of a source at a time per cache: an advisory lock file per source.

Two ``replicate fetch`` runs of the same source on the same cache would race on
the cached git store (git's own ``*.lock`` files, the first clone's rename).
The second run waits for the first (saying so), up to a time limit, then fails
naming the lock file and the process holding it. Fetches of different sources
do not wait for each other. The lock is released when the process ends, even
if it is killed, so a stale lock file never blocks later runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from replicate.fetch.errors import FetchError

DEFAULT_LOCK_TIMEOUT = 600.0  # seconds a fetch waits for another fetch of the same source


class CacheLocked(FetchError):
    """Another fetch of the same source held the cache lock for longer than allowed."""


def _holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        return "another process"
    return f"process {pid}" if pid.isdigit() else "another process"


@contextmanager
def source_lock(
    path: Path,
    *,
    what: str,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    note: Callable[[str, str], None] = lambda event, text: None,
    poll: float = 0.05,
) -> Iterator[None]:
    """Hold the exclusive lock at ``path`` while the block runs.

    ``what`` names the source in the messages. Waits up to ``timeout`` seconds
    (``note("wait", ...)`` once when it has to wait), then raises
    :class:`CacheLocked`.
    """
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): concurrent fetches are not serialised
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited:
                    note("wait", f"another fetch of {what} is using the cache ({_holder(path)}, lock {path})")
                    waited = True
                if time.monotonic() >= deadline:
                    raise CacheLocked(
                        f"another fetch of {what} ({_holder(path)}) has held the cache lock {path} "
                        f"for more than {timeout:g} s; wait for it to finish, or use another cache "
                        "with REPLICATE_CACHE_DIR"
                    ) from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
