"""Fetched files written through the one writer (:mod:`replicate.outfile`), renamed only once verified.

A fetch that is interrupted leaves at most a ``.name.*.replicate-tmp`` file,
never a complete-looking one; the next fetch into the same directory removes
such leftovers (:func:`~replicate.outfile.remove_leftovers`). The cache
(:mod:`replicate.fetch.cache`) stores its objects and snapshots the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from replicate.fetch.errors import IntegrityError
from replicate.fetch.safety import safe_target
from replicate.fetch.tree import git_blob_hasher
from replicate.outfile import TMP_SUFFIX, remove_leftovers, replacing

__all__ = ["TMP_SUFFIX", "remove_leftovers", "replacing", "write_checked", "write_verified"]


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
    mode: int | None = None,
) -> None:
    """Stream ``chunks`` to ``target`` through :func:`replacing`, renaming only if they
    have exactly ``size`` bytes and git blob id ``blob`` (or, for an LFS object, sha256 ``sha256``).

    Otherwise :class:`IntegrityError` ``"<what>: <got> N bytes with git blob id X,
    expected ..."`` is raised and nothing appears at ``target``. Every hasher in
    ``also`` sees the same bytes. The file is fsynced before the rename, as every file the tool writes.
    """
    if (blob is None) == (sha256 is None):
        raise ValueError("write_checked: give exactly one of blob and sha256")
    also = tuple(also)
    check = git_blob_hasher(size) if blob is not None else hashlib.sha256()
    expected, idname = (blob, "git blob id") if blob is not None else (sha256, "sha256")
    n = 0
    with replacing(target, mode=mode, make_folder=True) as fh:
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


def write_verified(dest: Path, rel: str, chunks: Iterable[bytes], *, size: int, blob: str | None = None,
                   sha256: str | None = None) -> str:
    """Write ``rel`` under ``dest`` from ``chunks`` (fsynced, mode 0644); returns its sha256.

    The bytes must have exactly ``size`` bytes and git blob id ``blob`` (an LFS object: sha256
    ``sha256``); otherwise nothing appears at ``rel`` and :class:`IntegrityError` is raised.
    """
    digest = hashlib.sha256()
    write_checked(safe_target(dest, rel), chunks, size=size, blob=blob, sha256=sha256, what=rel,
                  got="the cached copy has", also=(digest,), mode=0o644)
    return digest.hexdigest()
