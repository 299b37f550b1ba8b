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


def write_atomic(target: str | Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, then rename it into place; an unwritable cache is skipped.

    Readers never see a partial entry; of two writers at once the last rename wins.
    """
    import tempfile

    target = os.fspath(target)
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)[:12]}-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return
