"""Reading an input file's bytes, and its JSON lines, with one error style for every command."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

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


def json_lines(data: bytes, *, path: str | os.PathLike[str], record: str = "") -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line of JSONL ``data``.

    A line that is not JSON is :class:`BadInput` naming ``path`` and the line:
    ``"<record> is not valid JSON: ..."``, or ``"not valid JSON: ..."`` without ``record``.
    """
    prefix = f"{record} is " if record else ""
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield lineno, orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BadInput(f"{prefix}not valid JSON: {exc}", path=Path(path), line=lineno) from None
