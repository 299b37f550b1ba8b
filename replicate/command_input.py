"""Reading an input file's bytes, and its JSON lines, with one error style for every command;
``-`` for standard input (and, where a command writes a file, standard output)."""

from __future__ import annotations

import os
import stat
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
        data = _read_bounded(buffer, STDIO) if buffer is not None else stream.read().encode()
        _stdin_read = (stream, data)
    return _stdin_read[1]


#: The longest line read from a stream (standard input, a pipe, a FIFO): 256 MiB, or the environment's
#: REPLICATE_MAX_LINE_BYTES. A stream that never ends a line (``/dev/zero`` behind a pipe) is refused at
#: this bound instead of filling memory.
MAX_LINE_BYTES = 256 << 20
_CHUNK = 1 << 20


def max_line_bytes() -> int:
    env = os.environ.get("REPLICATE_MAX_LINE_BYTES", "")
    return int(env) if env.isascii() and env.isdigit() and int(env) > 0 else MAX_LINE_BYTES


def _read_bounded(fh: Any, path: str | os.PathLike[str]) -> bytes:
    """All bytes of a stream, refused once a line runs past :func:`max_line_bytes`."""
    limit = max_line_bytes()
    parts: list[bytes] = []
    run = 0  # bytes since the last newline
    lines = 0
    while chunk := fh.read(_CHUNK):
        first = chunk.find(b"\n")
        if first < 0:
            run += len(chunk)
        elif run + first <= limit:  # the line this chunk ends is within the bound
            lines += chunk.count(b"\n")
            run = len(chunk) - chunk.rfind(b"\n") - 1
        else:
            run += first
        if run > limit:
            raise BadInput(f"a line longer than {limit:,} bytes (the bound on a line read from a stream; "
                           "REPLICATE_MAX_LINE_BYTES sets it): not a text file of records?",
                           path=Path(path), line=lines + 1)
        parts.append(chunk)
    return b"".join(parts)


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
    """All bytes of ``path`` (``-``: standard input); a missing file, a directory, a device (``/dev/zero``), a
    socket or an unreadable file is :class:`BadInput` naming the file and what it was meant to be (``what``).
    A pipe or FIFO (``<(zcat f.gz)``) and standard input are read with a bound on a line's length."""
    if is_stdio(path):
        return read_stdin()
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISREG(mode):
                return fh.read()
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not stat.S_ISFIFO(mode):
                kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket or other special file"
                raise BadInput(f"{what} is {kind}, not a regular file", path=p)
            return _read_bounded(fh, p)  # a pipe: read with a bound on a line's length
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
