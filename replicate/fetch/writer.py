"""Writing files atomically: a temporary name beside the target, verify, then rename.

A fetch that is interrupted leaves at most a ``.name.*.replicate-tmp`` file,
never a complete-looking one; the next fetch into the same directory removes
such leftovers. The cache (:mod:`replicate.fetch.cache`) stores its objects and
snapshots the same way.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from replicate.fetch.errors import IntegrityError
from replicate.fetch.safety import safe_target
from replicate.fetch.tree import git_blob_hasher

TMP_SUFFIX = ".replicate-tmp"


@contextmanager
def replacing(target: Path, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """A temporary file beside ``target``, renamed over it when the block ends cleanly.

    If the block raises, the temporary file is deleted and ``target`` is left as it was.
    ``mode`` (e.g. ``0o644``) is applied before the rename; otherwise the file keeps
    :func:`tempfile.mkstemp`'s owner-only mode.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_checked(
    target: Path,
    chunks: Iterable[bytes],
    *,
    size: int,
    blob: str,
    what: str,
    got: str,
    also: Iterable[hashlib._Hash] = (),
    durable: bool = False,
    mode: int | None = None,
) -> None:
    """Stream ``chunks`` to ``target`` through :func:`replacing`, renaming only if they
    have exactly ``size`` bytes and git blob id ``blob``.

    Otherwise :class:`IntegrityError` ``"<what>: <got> N bytes with git blob id X,
    expected ..."`` is raised and nothing appears at ``target``. Every hasher in
    ``also`` sees the same bytes; ``durable`` fsyncs the file before the rename.
    """
    also = tuple(also)
    sha1 = git_blob_hasher(size)
    n = 0
    with replacing(target, mode=mode) as fh:
        for chunk in chunks:
            n += len(chunk)
            sha1.update(chunk)
            for h in also:
                h.update(chunk)
            fh.write(chunk)
        if n != size or sha1.hexdigest() != blob:
            raise IntegrityError(
                f"{what}: {got} {n} bytes with git blob id {sha1.hexdigest()}, "
                f"expected {size} bytes with id {blob}; nothing was written"
            )
        if durable:
            fh.flush()
            os.fsync(fh.fileno())


def write_verified(dest: Path, rel: str, chunks: Iterable[bytes], *, size: int, blob: str) -> str:
    """Write ``rel`` under ``dest`` from ``chunks`` (fsynced, mode 0644); returns its sha256.

    The bytes must have exactly ``size`` bytes and git blob id ``blob``;
    otherwise nothing appears at ``rel`` and :class:`IntegrityError` is raised.
    """
    sha256 = hashlib.sha256()
    write_checked(safe_target(dest, rel), chunks, size=size, blob=blob, what=rel, got="the cached copy has",
                  also=(sha256,), durable=True, mode=0o644)
    return sha256.hexdigest()


def remove_leftovers(dest: Path) -> list[str]:
    """Delete temporary files an interrupted fetch left in ``dest``; return their paths."""
    gone = []
    if dest.is_dir():
        for p in dest.rglob(f".*{TMP_SUFFIX}"):
            if p.is_file() and not p.is_symlink():
                p.unlink()
                gone.append(p.relative_to(dest).as_posix())
    return sorted(gone)
