"""Pure planning: which tree entries a fetch writes, and the record of each one it skips."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicate.errors import Message, Param, UsageError
from replicate.fetch.globs import Includes
from replicate.fetch.manifest import Skipped
from replicate.fetch.safety import LfsPointer, human_size, refuse_path
from replicate.fetch.tree import TreeEntry


@dataclass(frozen=True, slots=True)
class Selection:
    candidates: tuple[TreeEntry, ...]  # regular files to write (subject to size and LFS checks)
    skipped: tuple[Skipped, ...]  # refused paths, symlinks, submodules
    not_selected: int  # entries the include globs left out


def select(entries: Sequence[TreeEntry], includes: Includes, *, source: str, commit: str) -> Selection:
    """Apply the include globs and refuse what must never be written.

    Raises :class:`UsageError` when a pattern matches nothing (almost always a typo).
    """
    selected = [e for e in entries if includes.matches(e.path)]
    missing = includes.unmatched([e.path for e in entries])
    if missing:
        top = sorted({e.path.split("/", 1)[0] + ("/" if "/" in e.path else "") for e in entries})
        shown = ", ".join(top[:15]) + (", ..." if len(top) > 15 else "")
        raise UsageError(Message(
            Param("include"), f" {', '.join(repr(p) for p in missing)} matched no file of {source} "
            f"at {commit[:12]} (top level: {shown or 'empty tree'}); patterns match the full "
            "path, e.g. 'results/**' or '**/*.jsonl'"
        ))
    skipped: list[Skipped] = []
    candidates: list[TreeEntry] = []
    for e in selected:
        reason = refuse_path(e.path)
        if reason is not None:
            skipped.append(Skipped(e.path, "refused-path", reason, e.size))
        elif e.is_symlink:
            skipped.append(Skipped(e.path, "symlink",
                                   "symbolic link (mode 120000): not followed, not written", e.size))
        elif e.is_submodule:
            skipped.append(Skipped(e.path, "submodule",
                                   f"submodule at commit {e.sha}: another repository, not fetched"))
        else:
            candidates.append(e)
    return Selection(tuple(candidates), tuple(skipped), len(entries) - len(selected))


def too_large(path: str, size: int, limit: int) -> Skipped:
    return Skipped(path, "too-large",
                   f"{human_size(size)} is over the size limit of {human_size(limit)}: "
                   "not fetched; pass --allow-large or a higher --max-size", size)


def lfs_pointer(path: str, size: int | None, ptr: LfsPointer, why: str | None = None) -> Skipped:
    """An LFS pointer left unresolved (``why``: ``--no-lfs``, no endpoint known)."""
    return Skipped(path, "lfs-pointer",
                   f"Git LFS pointer to {human_size(ptr.size)} (oid sha256:{ptr.oid[:12]}...): the data "
                   "lives in LFS storage, not in the repository; not written" + (f" ({why})" if why else ""),
                   size, ptr.to_json())
