"""A repository tree at one commit, as both transports list it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from replicate.fetch.safety import MODE_SUBMODULE, MODE_SYMLINK, LfsPointer, is_licence_file


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One non-directory entry of a tree: a file, a symlink or a submodule."""

    path: str
    mode: str  # "100644", "100755", "120000" (symlink), "160000" (submodule)
    sha: str  # git object id: blob id for files and symlinks, commit id for submodules
    size: int | None  # None when the transport does not know it yet (git partial clone)
    #: The LFS object the blob points at, when the file's content lives in LFS storage (the Hub's tree says
    #: so; over git it is learned from the pointer blob). ``sha`` stays the pointer's blob id, ``size`` the object's.
    lfs: LfsPointer | None = None

    @property
    def is_symlink(self) -> bool:
        return self.mode == MODE_SYMLINK

    @property
    def is_submodule(self) -> bool:
        return self.mode == MODE_SUBMODULE

    def to_list(self) -> list:
        row: list = [self.path, self.mode, self.sha, self.size]
        return row + [self.lfs.oid, self.lfs.size] if self.lfs is not None else row

    @classmethod
    def from_list(cls, row: list) -> TreeEntry:
        lfs = LfsPointer(row[4], row[5]) if len(row) >= 6 else None
        return cls(row[0], row[1], row[2], row[3], lfs)


def root_licence_files(entries: list[TreeEntry] | tuple[TreeEntry, ...]) -> tuple[str, ...]:
    """Licence-like files (LICENSE, LICENCE.md, COPYING, ...) at the root of a tree."""
    return tuple(sorted(e.path for e in entries if "/" not in e.path and is_licence_file(e.path)))


def git_blob_hasher(size: int) -> "hashlib._Hash":
    """A sha1 primed with git's blob header: feeding it the content yields the blob id."""
    h = hashlib.sha1(usedforsecurity=False)
    h.update(b"blob %d\0" % size)
    return h


def git_blob_id(data: bytes) -> str:
    h = git_blob_hasher(len(data))
    h.update(data)
    return h.hexdigest()
