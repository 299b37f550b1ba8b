"""A cache of parsed labels: a rerun over unchanged files reads labels, not parses text again.

An entry holds the int8 label array one parser version gives one run. Its key
is the sha256 of (entry format, parser name, field options, reader options and,
for every file of the run in order, the file's sha256 and reader name): the
labels are a function of exactly these, so an entry can only be reused for the
same bytes read the same way by the same parser version. The files' sha256 are
the ones the loader computes for provenance anyway, so the key costs nothing
more to compute (a stat-based pre-key was not needed for this).

What the key leaves out is what cannot change the labels: the label set gold
is read against (a command's ``--parser`` gives it; ``verify`` gives none).
Gold is coded by the core after the reader, and a read that succeeds under two
label sets keeps the same items with the same outputs (a repeated item is
either identical, and dropped, under both, or an error). So ``matrix -p P``
and ``verify -p P`` over the same files share entries (:func:`reading_text`).

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
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from replicate.cachedir import BadEntry, default_root, keyed, read_entry
from replicate.outfile import write_cache_entry as write_atomic

if TYPE_CHECKING:
    from replicate.judge.model import LabelledRun, Run
    from replicate.parsing import Parser
    from replicate.reading.contract import ReadOptions

__all__ = ["CacheEvent", "LabelCache", "default_root", "label_key", "label_provenance", "label_through", "reading_text",
           "write_atomic"]

MAGIC = b"RPLLBL1\n"
_HEADER = len(MAGIC) + 8 + 32

Event = Literal["hit", "miss", "corrupt"]


class CacheEvent(NamedTuple):
    """What one lookup in the run or label cache found, for ``--verbose`` and the damaged-entry warning."""

    run: str
    key: str
    event: str  # hit | miss | corrupt
    parser: str | None = None  # the parser whose labels were looked up (label cache)


def reading_text(fields: Any, options: ReadOptions | None, *, gold: bool) -> str:
    """The field and reader options as the caches key them: what a run was read with.

    ``options`` None reads as ``ReadOptions(fields=fields)`` (what the loader
    does), and options without fields take ``fields``, so the two spellings
    give one key. Reader options (``extra``) count by name and value, not in
    the order given. ``gold``: whether the label set gold is read against
    counts (the run cache, which keeps gold; not the label cache). An ordinal
    set without names codes gold exactly as no set does (whole-number grades),
    so it counts as none.
    """
    fs = options.fields if options is not None and options.fields is not None else fields
    extra = sorted((str(k), repr(v)) for k, v in options.extra.items()) if options is not None else []
    text = f"fields={fs!r}\nextra={extra!r}\n"
    if gold:
        ls = options.gold_labels if options is not None else None
        if ls is not None and ls.is_ordinal and not ls.names:
            ls = None
        text += f"gold_labels={ls!r}\n"
    return text


def label_key(files: list[tuple[str, str]], parser: str, fields: Any, options: ReadOptions | None = None) -> str:
    """The entry key: sha256 over the entry format, parser, field and reader options, and (sha256, reader) per file.

    Not the label set gold is read against (see the module doc and :func:`reading_text`).
    """
    h = hashlib.sha256()
    h.update(MAGIC)
    h.update(f"parser={parser}\n{reading_text(fields, options, gold=False)}".encode())
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
    """Label entries under ``root``; ``events`` records each lookup (run, key, hit|miss|corrupt, parser) in order."""

    root: Path
    events: list[CacheEvent] = field(default_factory=list)

    def path(self, key: str) -> Path:
        return self.root / "labels" / key[:2] / f"{key}.labels"

    def get(self, run: str, key: str, n: int, parser: str | None = None) -> np.ndarray | None:
        """The cached labels (``n`` of them) or None (missing or damaged; recorded in ``events``)."""
        try:
            data = read_entry(self.path(key), key, max_size=_HEADER + n)
        except BadEntry:  # a link, a FIFO, a device, too large, or another key's entry: damaged, rewritten
            self.events.append(CacheEvent(run, key, "corrupt", parser))
            return None
        if data is None:  # missing, or a cache that cannot be read (then it is skipped)
            self.events.append(CacheEvent(run, key, "miss", parser))
            return None
        labels = decode(data, n)
        self.events.append(CacheEvent(run, key, "hit" if labels is not None else "corrupt", parser))
        return labels

    def put(self, key: str, labels: np.ndarray) -> None:
        """Write an entry atomically (see :func:`write_atomic`)."""
        write_atomic(self.path(key), keyed(key, encode(labels)))

    def keys(self) -> dict[str, str]:
        """Run name -> key of its last entry looked up."""
        return {e.run: e.key for e in self.events}


def label_provenance(keys: dict[tuple[str, str], str]) -> dict | None:
    """The ``label_cache`` block of a command's JSON: the key of every (run, parser) labelled, in order; None for none.

    The same with and without the cache (a key says what the labels are a function of).
    """
    if not keys:
        return None
    return {"format": 1, "entries": [{"run": run, "parser": parser, "key": key} for (run, parser), key in keys.items()]}


def label_through(
    run: Run, parser: Parser, fields: Any, options: ReadOptions | None, cache: LabelCache | None,
    parsed: np.ndarray | None = None,
) -> tuple[LabelledRun, str]:
    """``run`` labelled by ``parser`` through the label cache ``cache`` (None: parsed), and the labels' key.

    ``parsed``: the labels ``parser`` gave the outputs while they were read (not read again)."""
    key = label_key([(f.provenance.sha256, f.reader) for f in run.files], parser.name, fields, options)
    if cache is None:
        return run.label_with(parser, cached=parsed), key
    labels = cache.get(run.name, key, len(run), parser.name)
    if labels is not None:
        return run.label_with(parser, cached=labels), key
    out = run.label_with(parser, cached=parsed)
    cache.put(key, out.labels)
    return out, key
