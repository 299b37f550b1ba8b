"""The local cache: verified file contents, tree snapshots per (source, commit), git stores.

Layout under the cache root (``REPLICATE_CACHE_DIR``, else
``$XDG_CACHE_HOME/replicate``, else ``~/.cache/replicate``)::

    objects/ab/cdef...          file contents keyed by git blob id, verified on entry
    lfs/ab/cdef...              LFS objects keyed by their sha256 (the pointer's oid), verified on entry
    snapshots/<source-key>/<commit>.json   tree listing + repository metadata
    snapshots/<source-key>/refs.json       last resolution of each rev (for --offline)
    git/<source-key>.git        bare partial clones used by the git transport
    locks/<source-key>.lock     one fetch of a source at a time
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from replicate.errors import UsageError
from replicate.fetch.manifest import RepositoryMeta
from replicate.fetch.tree import TreeEntry
from replicate.fetch.writer import replacing, write_checked

_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def default_cache_dir() -> Path:
    env = os.environ.get("REPLICATE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "replicate"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The tree at one commit and the repository metadata seen when it was listed.

    ``complete`` is False when the host truncated the recursive listing and only
    the directories matching ``include`` were walked.
    """

    commit: str
    entries: tuple[TreeEntry, ...]
    repository: RepositoryMeta
    complete: bool = True
    include: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "commit": self.commit,
            "complete": self.complete,
            "include": list(self.include),
            "repository": self.repository.to_json(),
            "tree": [e.to_list() for e in self.entries],
        }

    @classmethod
    def from_json(cls, d: dict) -> Snapshot:
        return cls(
            d["commit"],
            tuple(TreeEntry.from_list(r) for r in d["tree"]),
            RepositoryMeta.from_json(d["repository"]),
            bool(d.get("complete", True)),
            tuple(d.get("include") or ()),
        )

    def usable_for(self, include: tuple[str, ...]) -> bool:
        return self.complete or set(self.include) == set(include)


def read_blocks(path: Path, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The bytes of the file at ``path`` in blocks of ``chunk``."""
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            yield block


def _write_bytes(path: Path, data: bytes) -> None:
    with replacing(path, make_folder=True) as fh:
        fh.write(data)


class Cache:
    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def make_root(self) -> None:
        """Make the cache folder; one that is a file, lies under a file or cannot be made is a usage error."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise UsageError(f"the cache {self.root} is not a folder (REPLICATE_CACHE_DIR names it): name a folder, "
                             "or unset REPLICATE_CACHE_DIR") from None
        except OSError as exc:
            raise UsageError(f"cannot make the cache folder {self.root}: {exc.strerror or exc} "
                             "(REPLICATE_CACHE_DIR names it)") from None

    # -- objects ---------------------------------------------------------------
    def object_path(self, blob: str) -> Path:
        if not _HEX40.match(blob):
            raise ValueError(f"blob: {blob!r} is not a 40-hex git object id")
        return self.root / "objects" / blob[:2] / blob[2:]

    def has_object(self, blob: str) -> bool:
        return self.object_path(blob).is_file()

    def put_object(self, blob: str, size: int, chunks: Iterable[bytes], *, what: str) -> Path:
        """Store content under its git blob id after checking size and id; returns its path.

        ``what`` names the content in the error (e.g. the URL it came from).
        Nothing is stored when the check fails.
        """
        target = self.object_path(blob)
        write_checked(target, chunks, size=size, blob=blob, what=what, got="received")
        return target

    def read_object(self, blob: str, *, chunk: int = 1 << 20) -> Iterator[bytes]:
        return read_blocks(self.object_path(blob), chunk)

    def object_head(self, blob: str, n: int) -> bytes:
        with open(self.object_path(blob), "rb") as fh:
            return fh.read(n)

    def object_size(self, blob: str) -> int:
        return self.object_path(blob).stat().st_size

    # -- LFS objects and entries of either kind -------------------------------
    def lfs_path(self, oid: str) -> Path:
        if not _HEX64.match(oid):
            raise ValueError(f"oid: {oid!r} is not a 64-hex sha256")
        return self.root / "lfs" / oid[:2] / oid[2:]

    def put_lfs(self, oid: str, size: int, chunks: Iterable[bytes], *, what: str) -> Path:
        """Store an LFS object under its sha256 after checking size and hash (nothing stored otherwise)."""
        target = self.lfs_path(oid)
        write_checked(target, chunks, size=size, sha256=oid, what=what, got="received")
        return target

    def content_path(self, e: TreeEntry) -> Path:
        """Where the content of tree entry ``e`` is kept: its LFS object, else its blob."""
        return self.lfs_path(e.lfs.oid) if e.lfs is not None else self.object_path(e.sha)

    def has_content(self, e: TreeEntry) -> bool:
        return self.content_path(e).is_file()

    def read_content(self, e: TreeEntry, *, chunk: int = 1 << 20) -> Iterator[bytes]:
        return read_blocks(self.content_path(e), chunk)

    # -- snapshots and refs ----------------------------------------------------
    def _snapdir(self, source_key: str) -> Path:
        return self.root / "snapshots" / source_key

    def load_snapshot(self, source_key: str, commit: str, via: str) -> Snapshot | None:
        """The listing of ``commit`` made by transport ``via`` (sizes and metadata differ by transport)."""
        path = self._snapdir(source_key) / f"{commit}-{via}.json"
        try:
            return Snapshot.from_json(orjson.loads(path.read_bytes()))
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, IndexError):
            return None

    def save_snapshot(self, source_key: str, snap: Snapshot, via: str) -> None:
        _write_bytes(self._snapdir(source_key) / f"{snap.commit}-{via}.json", orjson.dumps(snap.to_json()))

    def refs(self, source_key: str) -> dict[str, str]:
        try:
            data = orjson.loads((self._snapdir(source_key) / "refs.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_ref(self, source_key: str, rev: str | None, commit: str) -> None:
        refs = self.refs(source_key)
        refs[rev or ""] = commit
        _write_bytes(self._snapdir(source_key) / "refs.json", orjson.dumps(refs))

    # -- git stores ------------------------------------------------------------
    def git_dir(self, source_key: str) -> Path:
        return self.root / "git" / f"{source_key}.git"

    def lock_path(self, source_key: str) -> Path:
        """The lock file serialising fetches of one source (see :mod:`replicate.fetch.lock`)."""
        return self.root / "locks" / f"{source_key}.lock"

    def empty_hooks_dir(self) -> Path:
        d = self.root / "empty-hooks"
        d.mkdir(parents=True, exist_ok=True)
        return d
