"""Reading an input file's bytes, and its JSON lines, with one error style for every command;
``-`` for standard input (and, where a command writes a file, standard output)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replicate.errors import BadInput

#: The file name that stands for standard input (or output, where a command writes).
STDIO = "-"

_stdin_read: tuple[object, bytes] | None = None  # (the stream, its bytes): read once


def is_stdio(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is ``-``: standard input where read, standard output where written."""
    return path is not None and os.fspath(path) == STDIO


def read_stdin() -> bytes:
    """All of standard input; a second call on the same stream gets the same bytes."""
    global _stdin_read
    stream = sys.stdin
    if _stdin_read is None or _stdin_read[0] is not stream:
        buffer = getattr(stream, "buffer", None)
        data = buffer.read() if buffer is not None else stream.read().encode()
        _stdin_read = (stream, data)
    return _stdin_read[1]


def write_stdout(data: bytes) -> None:
    """Write ``data`` (a file's bytes) to standard output, as ``--out -`` asks."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        sys.stdout.flush()
        buffer.write(data)
        buffer.flush()
    else:
        sys.stdout.write(data.decode("utf-8"))
        sys.stdout.flush()


def read_input(path: str | os.PathLike[str], *, what: str = "file") -> bytes:
    """All bytes of ``path`` (``-``: standard input); a missing file, a directory or an
    unreadable file is :class:`BadInput` naming the file and what it was meant to be (``what``)."""
    if is_stdio(path):
        return read_stdin()
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
