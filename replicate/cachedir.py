"""Where every cache lives (standard library only: the command line's fast path imports it before anything else)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def root_path() -> str:
    """The cache root ``fetch`` uses: ``REPLICATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/replicate``, else ``~/.cache/replicate``."""
    env = os.environ.get("REPLICATE_CACHE_DIR")
    if env:
        return os.path.expanduser(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(os.path.expanduser(xdg) if xdg else os.path.join(os.path.expanduser("~"), ".cache"), "replicate")


def default_root() -> Path:
    """:func:`root_path` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(root_path())


#: The first line of every run and label cache entry: the key it was stored under, checked on
#: reading, so an entry copied or renamed over another's is never served as that other's.
KEY_LINE = b"replicate-cache-key "


#: How every entry began before entries carried their key (RPLRUN1, RPLLBL1; RPLRES1 of the removed result cache).
_UNKEYED_MAGIC = b"RPL"


class BadEntry(Exception):
    """A cache entry that is there but cannot be this key's entry (not a regular file, too large, another key)."""


def keyed(key: str, data: bytes) -> bytes:
    """``data`` as stored under ``key``: the key line first."""
    return KEY_LINE + key.encode() + b"\n" + data


def read_entry(path: str | Path, key: str, *, max_size: int) -> bytes | None:
    """The body of the entry at ``path`` stored under ``key``; None when there is none (or it cannot be read).

    The file is opened without following a symbolic link and without blocking (a FIFO cannot hang it), and
    must be a regular file of at most ``max_size`` bytes of body: else, or when its key line names another
    key, :class:`BadEntry` (the caller counts it as damaged; the entry is rewritten). An entry without a key
    line (written before keys were stored) is a miss, so an upgrade reports no damage.
    """
    import errno
    import stat

    head = KEY_LINE + key.encode() + b"\n"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadEntry("a symbolic link") from None
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadEntry("not a regular file")
        if st.st_size > max_size + len(head):
            raise BadEntry(f"{st.st_size} bytes, more than an entry holds")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if not data.startswith(head):
        if data.startswith(_UNKEYED_MAGIC):
            return None  # an entry of the format before keys were stored: a miss (never served), rewritten
        raise BadEntry("stored under another key" if data.startswith(KEY_LINE) else "not an entry")
    return data[len(head):]


def unkeyed(data: bytes) -> bytes:
    """An entry's bytes without its key line (unchecked: for looking inside an entry)."""
    if data.startswith(KEY_LINE):
        return data[data.index(b"\n") + 1 :]
    return data
