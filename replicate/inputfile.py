"""Reading an input file's bytes with one error style for every command."""

from __future__ import annotations

import os
from pathlib import Path

from replicate.errors import BadInput


def read_input(path: str | os.PathLike[str], *, what: str = "file") -> bytes:
    """All bytes of ``path``; a missing file, a directory or an unreadable file is
    :class:`BadInput` naming the file and what it was meant to be (``what``)."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{what} not found", path=p) from None
    except IsADirectoryError:
        raise BadInput(f"{what} is a directory, not a file", path=p) from None
    except OSError as exc:
        raise BadInput(f"cannot read {what}: {exc.strerror or exc}", path=p) from None
