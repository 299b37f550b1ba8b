"""Writing one file into the destination: temporary name, verify, then rename.

A fetch that is interrupted leaves at most a ``.name.*.replicate-tmp`` file,
never a complete-looking one; the next fetch into the same directory removes
such leftovers.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from replicate.fetch.cache import TMP_SUFFIX
from replicate.fetch.errors import IntegrityError
from replicate.fetch.safety import safe_target
from replicate.fetch.tree import git_blob_hasher


def write_verified(dest: Path, rel: str, chunks: Iterable[bytes], *, size: int, blob: str) -> str:
    """Write ``rel`` under ``dest`` from ``chunks``; returns its sha256.

    The bytes must have exactly ``size`` bytes and git blob id ``blob``;
    otherwise nothing appears at ``rel`` and :class:`IntegrityError` is raised.
    """
    target = safe_target(dest, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TMP_SUFFIX, dir=target.parent)
    sha1 = git_blob_hasher(size)
    sha256 = hashlib.sha256()
    n = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                n += len(chunk)
                sha1.update(chunk)
                sha256.update(chunk)
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        if n != size or sha1.hexdigest() != blob:
            raise IntegrityError(
                f"{rel}: the cached copy has {n} bytes and git blob id {sha1.hexdigest()}, "
                f"expected {size} bytes and {blob}; nothing was written"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
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
