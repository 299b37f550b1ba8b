"""One fetch into a destination at a time, and a rerun that completes what an interrupted fetch began.

**The lock.** A fetch holds an advisory ``flock`` on ``DIR/.replicate-fetch.lock`` from before it reads
DIR's manifest until after it has written the new one; a second fetch into the same DIR (of the same or
another repository, on any cache) refuses at once, naming the process holding it, instead of mixing two
repositories' files under one manifest or deleting the other's live temporary files. The lock file is
removed before the lock is released; one left by a killed fetch blocks nothing (the lock died with the
process) and is removed by the next fetch.

**The journal.** Before the first file is renamed into DIR, the fetch records what it is about to write in
``DIR/.replicate-fetch-journal.json`` (source, commit, and each path with its git blob id, or an LFS
object's sha256); the journal is
removed once the manifest is written. A fetch killed in between leaves files DIR's manifest (if any) does
not list; the next fetch of the same source takes a file the journal lists, whose bytes still have the
journaled id, as its own (rewritten or kept, then listed in the manifest), so the rerun completes
and cleans up. Any other file in a DIR without a manifest is the user's and still refuses the fetch.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from replicate.errors import BadInput, Message, Param, UsageError
from replicate.fetch.tree import git_blob_hasher
from replicate.outfile import write_file

LOCK_NAME = ".replicate-fetch.lock"
JOURNAL_NAME = ".replicate-fetch-journal.json"
#: The fetch's own bookkeeping files in DIR: neither the user's files nor the release's.
OWN_FILES = frozenset({LOCK_NAME, JOURNAL_NAME})


def _make_dir(dest: Path) -> bool:
    """Make ``dest`` (and its parents); whether it was made now. A file or a dangling link in the way is bad input."""
    if dest.is_dir():
        return False
    try:
        dest.mkdir(parents=True)
    except FileExistsError:  # a dangling symlink, or a file, where the folder should be
        what = "a symbolic link to nothing" if dest.is_symlink() else "not a directory"
        raise BadInput(f"the destination is {what}: name a directory, or a path where one can be made",
                       path=dest) from None
    except NotADirectoryError:
        raise BadInput("the destination lies under a file, not a directory", path=dest) from None
    return True


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return "another process"
    return f"process {pid}" if pid.isdigit() else "another process"


@contextmanager
def dest_lock(dest: Path) -> Iterator[None]:
    """Hold the lock on ``dest`` (made if missing) while the block runs; refuse at once when another fetch
    holds it. A ``dest`` made here and left empty (a fetch that failed early) is removed again."""
    if dest.exists() and not dest.is_dir():
        raise UsageError(Message(Param("dest"), f" {dest} exists and is not a directory"))
    made = _make_dir(dest)
    path = dest / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): concurrent fetches into one folder are not refused
        yield
        return
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _holder(fd)
            os.close(fd)
            raise UsageError(Message(
                Param("dest"), f" {dest} is being written by another fetch ({who}, lock {path}): wait for it "
                "to finish, or fetch into another ", Param("dest"))) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed the file as it finished: lock the new one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        try:
            path.unlink(missing_ok=True)  # before the lock is released (see the module docstring)
        finally:
            os.close(fd)
        if made:
            try:
                dest.rmdir()  # only if still empty
            except OSError:
                pass


def write_journal(dest: Path, source: str, commit: str, files: Iterable[tuple[str, str]]) -> None:
    """Record the ``(path, id)`` pairs about to be written into ``dest``: an id is ``git:<blob id>`` or, for an
    LFS object, ``sha256:<digest>``."""
    body = {"source": source, "commit": commit, "files": dict(files)}
    write_file(dest / JOURNAL_NAME, orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n", mode=0o644)


def drop_journal(dest: Path) -> None:
    (dest / JOURNAL_NAME).unlink(missing_ok=True)


def journaled_files(dest: Path, source: str) -> dict[str, str]:
    """The files an interrupted fetch of ``source`` journaled in ``dest`` (path -> id); none when
    there is no journal, it cannot be read, or it is another source's."""
    try:
        data = orjson.loads((dest / JOURNAL_NAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("source") != source or not isinstance(data.get("files"), dict):
        return {}
    return {str(k): str(v) for k, v in data["files"].items()}


def is_journaled(path: Path, content_id: str | None) -> bool:
    """Whether the regular file ``path`` has the journaled ``content_id`` (a journaled file no one changed since)."""
    if content_id is None or path.is_symlink() or not path.is_file():
        return False
    kind, _, digest = content_id.partition(":")
    if kind not in ("git", "sha256"):
        return False
    h = git_blob_hasher(path.stat().st_size) if kind == "git" else hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest() == digest
