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
    blob: str | None = None,
    sha256: str | None = None,
    what: str,
    got: str,
    also: Iterable[hashlib._Hash] = (),
    durable: bool = False,
    mode: int | None = None,
) -> None:
    """Stream ``chunks`` to ``target`` through :func:`replacing`, renaming only if they
    have exactly ``size`` bytes and git blob id ``blob`` (or, for an LFS object, sha256 ``sha256``).

    Otherwise :class:`IntegrityError` ``"<what>: <got> N bytes with git blob id X,
    expected ..."`` is raised and nothing appears at ``target``. Every hasher in
    ``also`` sees the same bytes; ``durable`` fsyncs the file before the rename.
    """
    if (blob is None) == (sha256 is None):
        raise ValueError("write_checked: give exactly one of blob and sha256")
    also = tuple(also)
    check = git_blob_hasher(size) if blob is not None else hashlib.sha256()
    expected, idname = (blob, "git blob id") if blob is not None else (sha256, "sha256")
    n = 0
    with replacing(target, mode=mode) as fh:
        for chunk in chunks:
            n += len(chunk)
            check.update(chunk)
            for h in also:
                h.update(chunk)
            fh.write(chunk)
        if n != size or check.hexdigest() != expected:
            raise IntegrityError(
                f"{what}: {got} {n} bytes with {idname} {check.hexdigest()}, "
                f"expected {size} bytes with {'id' if blob is not None else idname} {expected}; nothing was written"
            )
        if durable:
            fh.flush()
            os.fsync(fh.fileno())


def write_verified(dest: Path, rel: str, chunks: Iterable[bytes], *, size: int, blob: str | None = None,
                   sha256: str | None = None) -> str:
    """Write ``rel`` under ``dest`` from ``chunks`` (fsynced, mode 0644); returns its sha256.

    The bytes must have exactly ``size`` bytes and git blob id ``blob`` (an LFS object: sha256
    ``sha256``); otherwise nothing appears at ``rel`` and :class:`IntegrityError` is raised.
    """
    digest = hashlib.sha256()
    write_checked(safe_target(dest, rel), chunks, size=size, blob=blob, sha256=sha256, what=rel,
                  got="the cached copy has", also=(digest,), durable=True, mode=0o644)
    return digest.hexdigest()


def remove_leftovers(dest: Path) -> list[str]:
    """Delete temporary files an interrupted fetch left in ``dest``; return their paths."""
    gone = []
    if dest.is_dir():
        for p in dest.rglob(f".*{TMP_SUFFIX}"):
            if p.is_file() and not p.is_symlink():
                p.unlink()
                gone.append(p.relative_to(dest).as_posix())
    return sorted(gone)
