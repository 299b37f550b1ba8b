"""A cache of parsed labels: a rerun over unchanged files reads labels, not parses text again.

An entry holds the int8 label array one parser version gives one run. Its key
is the sha256 of (entry format, parser name, field options, reader options and,
for every file of the run in order, the file's sha256 and reader name): the
labels are a function of exactly these, so an entry can only be reused for the
same bytes read the same way by the same parser version. The files' sha256 are
the ones the loader computes for provenance anyway, so the key costs nothing
more to compute (a stat-based pre-key was not needed for this).

Layout under the cache root (``REPLICATE_CACHE_DIR``, else the user cache dir,
as ``fetch`` uses)::

    labels/ab/abcdef....labels

An entry file is ``MAGIC``, the label count (8 bytes, little-endian), the
sha256 of the labels (32 bytes), then the labels. It is written to a temporary
file in the same folder and renamed into place, so concurrent runs never see a
partial entry (the last writer wins; both wrote the same bytes). An entry whose
magic, length or checksum does not match is never trusted: it is counted as
``corrupt``, the labels are parsed again and the entry rewritten.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from replicate.cachedir import default_root, write_atomic

__all__ = ["LabelCache", "default_root", "label_key", "write_atomic"]

MAGIC = b"RPLLBL1\n"
_HEADER = len(MAGIC) + 8 + 32

Event = Literal["hit", "miss", "corrupt"]


def label_key(files: list[tuple[str, str]], parser: str, fields: Any, options: Any = None) -> str:
    """The entry key: sha256 over the entry format, parser, field and reader options, and (sha256, reader) per file."""
    h = hashlib.sha256()
    h.update(MAGIC)
    h.update(f"parser={parser}\nfields={fields!r}\noptions={options!r}\n".encode())
    for sha, reader in files:
        h.update(f"file={sha} {reader}\n".encode())
    return h.hexdigest()


def encode(labels: np.ndarray) -> bytes:
    payload = np.ascontiguousarray(labels, dtype=np.int8).tobytes()
    return MAGIC + len(payload).to_bytes(8, "little") + hashlib.sha256(payload).digest() + payload


def decode(data: bytes, n: int) -> np.ndarray | None:
    """The labels of an entry's bytes, or None when the entry is damaged or not of ``n`` labels."""
    if len(data) != _HEADER + n or not data.startswith(MAGIC):
        return None
    if int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little") != n:
        return None
    payload = data[_HEADER:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC) + 8 : _HEADER]:
        return None
    return np.frombuffer(payload, dtype=np.int8).copy()


@dataclass
class LabelCache:
    """Label entries under ``root``; ``events`` records (run, key, hit|miss|corrupt) in order."""

    root: Path
    events: list[tuple[str, str, Event]] = field(default_factory=list)

    def path(self, key: str) -> Path:
        return self.root / "labels" / key[:2] / f"{key}.labels"

    def get(self, run: str, key: str, n: int) -> np.ndarray | None:
        """The cached labels (``n`` of them) or None (missing or damaged; recorded in ``events``)."""
        try:
            data = self.path(key).read_bytes()
        except OSError:  # missing, or a cache that cannot be read (then it is skipped)
            self.events.append((run, key, "miss"))
            return None
        labels = decode(data, n)
        self.events.append((run, key, "hit" if labels is not None else "corrupt"))
        return labels

    def put(self, key: str, labels: np.ndarray) -> None:
        """Write an entry atomically (see :func:`write_atomic`)."""
        write_atomic(self.path(key), encode(labels))

    def keys(self) -> dict[str, str]:
        """Run name -> key of its entry (for JSON provenance: the same on a cold and a warm run)."""
        return {run: key for run, key, _ in self.events}
