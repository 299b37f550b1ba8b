"""Pure checks on what a repository hands us: paths, symlinks, LFS pointers, sizes.

Nothing here touches the network; :func:`refuse_path` and
:func:`parse_lfs_pointer` are pure, :func:`safe_target` looks at the
destination directory only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from replicate.fetch.errors import FetchError

# Git tree modes.
MODE_SYMLINK = "120000"
MODE_SUBMODULE = "160000"

LFS_HEADER = b"version https://git-lfs.github.com/spec/v1"
# The LFS spec caps pointer files at 1024 bytes; anything larger is data.
LFS_MAX_POINTER = 1024
_LFS_OID = re.compile(rb"^oid sha256:([0-9a-f]{64})$", re.M)
_LFS_SIZE = re.compile(rb"^size (\d+)$", re.M)
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True)
class LfsPointer:
    """A Git LFS pointer: the file in the repository only names the real data."""

    oid: str
    size: int

    def to_json(self) -> dict:
        return {"oid": f"sha256:{self.oid}", "size": self.size}


def parse_lfs_pointer(data: bytes) -> LfsPointer | None:
    """The pointer described by ``data``, or None if ``data`` is not an LFS pointer.

    A pointer starts with the spec line and carries ``oid sha256:<64 hex>`` and
    ``size <n>`` lines; older clients wrote ``version https://hawser.github.com/spec/v1``.
    """
    if len(data) > LFS_MAX_POINTER:
        return None
    first = data.split(b"\n", 1)[0].strip()
    if first not in (LFS_HEADER, b"version https://hawser.github.com/spec/v1"):
        return None
    oid = _LFS_OID.search(data)
    size = _LFS_SIZE.search(data)
    if oid is None or size is None:
        return None
    return LfsPointer(oid.group(1).decode(), int(size.group(1)))


def refuse_path(path: str) -> str | None:
    """Why a repository path may not be written under the destination, or None if it may.

    Refused: empty paths, absolute paths (``/x``, ``C:x``), ``.`` or ``..``
    components, empty components, backslashes, control characters and any
    ``.git`` component (writing one could plant hooks or configuration).
    """
    if not path:
        return "empty path"
    if path.startswith("/") or _DRIVE.match(path):
        return "absolute path"
    if "\\" in path:
        return "backslash in path"
    if any(ord(c) < 32 or c == "\x7f" for c in path):
        return "control character in path"
    parts = path.split("/")
    for part in parts:
        if part == "":
            return "empty path component"
        if part in (".", ".."):
            return f"'{part}' component escapes or aliases the destination"
        if part.lower().rstrip(". ") == ".git":
            return "'.git' component"
    return None


def safe_target(dest: Path, rel: str) -> Path:
    """``dest / rel`` after checking it stays inside ``dest`` with no symlink on the way.

    Raises :class:`FetchError` when a directory on the way is a symbolic link
    (it could point outside ``dest``) or the resolved path leaves ``dest``.
    """
    reason = refuse_path(rel)
    if reason is not None:  # callers filter first; this is the last line of defence
        raise FetchError(f"refusing to write {rel!r}: {reason}")
    root = dest.resolve()
    target = root.joinpath(*rel.split("/"))
    cur = root
    for part in rel.split("/")[:-1]:
        cur = cur / part
        if cur.is_symlink():
            raise FetchError(
                f"refusing to write {rel!r}: {cur} is a symbolic link in the destination"
            )
    if os.path.commonpath([root, os.path.realpath(target.parent)]) != str(root):
        raise FetchError(f"refusing to write {rel!r}: it resolves outside {root}")
    return target


_LICENCE = re.compile(r"^(un)?licen[cs]e([.\-_].*)?$|^copying([.\-_].*)?$", re.I)


def is_licence_file(name: str) -> bool:
    """Whether a root-level file name is a licence file (LICENSE, LICENCE.md, COPYING, ...)."""
    return bool(_LICENCE.match(name))


_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)(i?b)?\s*$", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str | int) -> int:
    """Bytes from ``"1048576"``, ``"50M"``, ``"2GiB"`` (binary units); ValueError otherwise."""
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"max_size must be >= 0, got {text}")
        return text
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(
            f"max_size: cannot read {text!r}; give bytes, optionally with K, M, G or T (binary units)"
        )
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def human_size(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
