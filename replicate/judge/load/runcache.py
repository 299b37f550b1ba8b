"""A cache of read runs: a rerun over unchanged files neither reads nor hashes them.

An entry holds what reading one run produced except the raw outputs: item
keys, gold grades, splits, where each item was read (file, line), and what
was read from each file (size, sha256, reader, line and record counts). Its
key is a *stat pre-key* (:func:`~replicate.judge.load.plan.run_key`, part of a run's
load plan): the sha256 of (entry format, replicate version, reader, field and
reader options, and for every file of the run in order its path as given,
absolute path, size, ``mtime_ns``, ``ctime_ns``, inode and device). A warm run stats the files, loads one entry per run, and takes the
labels from the label cache (:mod:`replicate.judge.labelcache`, keyed by the
file sha256 recorded here).

Trade-off (documented in docs/cache.md): when a file's stat is unchanged its
recorded sha256 is trusted without reading the file. A file rewritten in
place to the same size within the file system's timestamp resolution, with
its mtime reset, and on a file system that does not update ``ctime``, would
be missed; ``--no-cache`` reads and hashes everything.

Only runs whose records carry raw outputs, that read with no warning and whose
reader read no file beside the run's own (``Source.side_files``: a HELM run
spec, which the stat pre-key does not cover) are cached (a run with warnings is read again, so its warnings and ``--strict``
behave exactly as without the cache). The raw outputs are not stored: a run
from the cache reads them from its files on first use (a label cache miss,
or a command that shows texts), checking that the files still hold the same
items.

Layout: ``runs/ab/abcdef....run`` under the cache root. An entry is
``MAGIC``, the body length (8 bytes, little-endian), the sha256 of the body
(32 bytes), then the body: a JSON header length (8 bytes), the JSON header,
and the arrays' bytes. Entries are written to a temporary file and renamed
into place; a damaged entry is never trusted (counted ``corrupt`` and
rebuilt).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, overload

import numpy as np

from replicate.cachedir import BadEntry, keyed, read_entry
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.keytable import KeyTable, Runs, as_array, raw, raw_keys
from replicate.judge.labelcache import CacheEvent
from replicate.judge.model import Origins, Run, RunFile, readonly
from replicate.outfile import write_cache_entry as write_atomic
from replicate.provenance import FileProvenance, find_release
from replicate.reading.contract import SourceRule

MAGIC = b"RPLRUN1\n"
#: The largest run entry read; a larger file is not an entry (counted as damaged, rewritten).
MAX_ENTRY = 1 << 30
_HEAD = len(MAGIC) + 8 + 32
#: Joins the item keys in an entry (a run with a key holding it is not cached).
_SEP = "\x00"



_ARRAYS = (("gold", np.int16), ("split_index", np.int32), ("file_index", np.int16), ("line", np.int32))

#: Reads a run from its files, its warnings into the diagnostics given.
Read = Callable[[Diagnostics], Run]


def encode(run: Run) -> bytes | None:
    """An entry's bytes for ``run``, or None when the run is not cacheable."""
    if run.yields != "outputs" or run.labels is not None or run.origins is None or raw(run, "splits") is None:
        return None
    if any(f.side_files for f in run.files):  # what it read beside its files (a run spec) is not in the key
        return None
    n = len(run)
    table = raw_keys(run)
    if isinstance(table, KeyTable):  # its bytes are the keys each ended by NUL (_SEP): no string made per key
        key_bytes = bytes(memoryview(table.blob)[:-1]) if n else b""
    else:
        joined = _SEP.join(table.tolist())
        if joined.count(_SEP) != max(n - 1, 0):
            return None
        key_bytes = joined.encode("utf-8")
    stored = raw(run, "splits")
    if isinstance(stored, Runs):  # a split per file: coded run by run
        names = sorted({str(v) for _, v in stored.runs})
        code = {n: i for i, n in enumerate(names)}
        split_index = stored.fill(np.empty(n, dtype=np.int32), lambda v: code[str(v)])
    else:
        splits = [str(s) for s in stored.tolist()]
        names = sorted(set(splits))  # code-point order, as np.unique (a tenth of its time: no array of str sorted)
        code = {n: i for i, n in enumerate(names)}
        split_index = np.fromiter(map(code.__getitem__, splits), dtype=np.int32, count=len(splits))
    arrays = {
        "gold": run.gold,
        "split_index": split_index,
        "file_index": run.origins.file_index,
        "line": run.origins.line,
    }
    files = [
        {
            "path": f.provenance.path, "size": f.provenance.size, "sha256": f.provenance.sha256,
            "format": f.format, "lines": f.lines, "records": f.records, "output_field": f.output_field,
            "rewritten": f.rewritten, "skipped": f.skipped, "thoughts": f.thoughts, "reader": f.reader,
            "chosen": f.chosen, "reader_options": [list(kv) for kv in f.reader_options],
            "about": [list(kv) for kv in f.about], "side_files": list(f.side_files),
            "source_rule": None if f.source_rule is None else [f.source_rule.unparsed, f.source_rule.says],
        }
        for f in run.files
    ]
    header = json.dumps({"n": n, "splits": names, "files": files, "keys": len(key_bytes)}).encode()
    parts = [len(header).to_bytes(8, "little"), header, key_bytes]
    parts += [np.ascontiguousarray(arrays[name], dtype=dt).tobytes() for name, dt in _ARRAYS]
    body = b"".join(parts)
    return MAGIC + len(body).to_bytes(8, "little") + hashlib.sha256(body).digest() + body


def decode(data: bytes, name: str, again: Read) -> Run | None:
    """The run ``name`` of an entry's bytes (a run cache entry, or a worker's result), or None when damaged; its
    raw outputs are read again through ``again`` on first use (:func:`outputs_again`)."""
    if len(data) < _HEAD or not data.startswith(MAGIC):
        return None
    size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    body = memoryview(data)[_HEAD:]
    if len(body) != size or hashlib.sha256(body).digest() != data[len(MAGIC) + 8 : _HEAD]:
        return None
    try:
        hlen = int.from_bytes(body[:8], "little")
        header = json.loads(bytes(body[8 : 8 + hlen]))
        pos = 8 + hlen
        n = header["n"]
        key_bytes = bytes(body[pos : pos + header["keys"]])
        key_bytes.decode("utf-8")  # damaged when not UTF-8
        pos += header["keys"]
        arrays = {}
        for aname, dt in _ARRAYS:
            width = np.dtype(dt).itemsize * n
            arrays[aname] = np.frombuffer(body[pos : pos + width], dtype=dt).copy()
            pos += width
        if (key_bytes.count(0) + 1 if n else 0) != n or (not n and key_bytes) or pos != len(body):
            return None
        files = tuple(
            RunFile(
                provenance=FileProvenance(f["path"], f["size"], f["sha256"], find_release(f["path"])),
                format=f["format"], lines=f["lines"], records=f["records"], output_field=f["output_field"],
                rewritten=f["rewritten"], skipped=f["skipped"], thoughts=f["thoughts"], reader=f["reader"],
                chosen=f["chosen"], reader_options=tuple(tuple(kv) for kv in f["reader_options"]),
                about=tuple(tuple(kv) for kv in f.get("about", ())), side_files=tuple(f.get("side_files", ())),
                source_rule=None if f.get("source_rule") is None else SourceRule(*f["source_rule"]),
            )
            for f in header["files"]
        )
        split_names = np.empty(len(header["splits"]), dtype=object)
        split_names[:] = header["splits"]
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    keys = KeyTable(key_bytes + b"\x00" if n else b"", n)
    return Run(
        name=name,
        keys=as_array(keys),
        gold=readonly(arrays["gold"]),
        outputs=LazyOutputs(n, partial(outputs_again, name, files, keys, again)),
        files=files,
        splits=readonly(split_names[arrays["split_index"]]),
        origins=Origins(readonly(arrays["file_index"]), readonly(arrays["line"])),
    )


def outputs_again(name: str, files: Sequence[RunFile], keys: KeyTable, again: Read) -> Sequence[str | None]:
    """The raw outputs of the run ``name`` read from ``files`` (with these ``keys``) but not kept (from the
    cache, or a worker's), read again through ``again``: its files must still hold the same items."""
    fresh = again(Diagnostics())
    same = [f.provenance.sha256 for f in fresh.files] == [f.provenance.sha256 for f in files]
    if not same or len(fresh) != len(keys) or not (fresh.keys == keys.array()).all():
        paths = ", ".join(f.provenance.path for f in files)
        raise BadInput(f"run {name!r}: its files changed while it was being read (rerun the command)", path=paths)
    return fresh.outputs  # streamed from the files when their reader's bulk path read them


class LazyOutputs(Sequence):
    """The raw outputs of a run from the cache: read from its files on first use."""

    def __init__(self, n: int, load: Callable[[], Sequence[str | None]]) -> None:
        self._n = n
        self._load: Callable[[], Sequence[str | None]] | None = load
        self._values: Sequence[str | None] | None = None

    def _get(self) -> Sequence[str | None]:
        """The outputs as read again (streamed from the files when the reader's bulk path read them)."""
        if self._values is None:
            assert self._load is not None
            self._values = self._load()
            self._load = None
        return self._values

    @property
    def loaded(self) -> bool:
        return self._values is not None

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str | None: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str | None]: ...
    def __getitem__(self, i: Any) -> Any:
        return self._get()[i]

    def __iter__(self) -> Iterator[str | None]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyOutputs):
            other = other._get()
        if not isinstance(other, Sequence):
            return NotImplemented
        mine = self._get()
        return len(mine) == len(other) and all(a == b for a, b in zip(mine, other))

    __hash__ = None  # type: ignore[assignment]


@dataclass
class RunCache:
    """Run entries under ``root``; ``events`` records each lookup (run, key, hit|miss|corrupt) in order."""

    root: Path
    events: list[CacheEvent] = field(default_factory=list)

    def path(self, key: str) -> Path:
        return self.root / "runs" / key[:2] / f"{key}.run"

    def get(self, name: str, key: str, again: Read) -> Run | None:
        """The run ``name`` kept under ``key`` (its raw outputs read again through ``again`` on first use), or
        None: a miss, or a damaged entry (rewritten when the run is put); each lookup is an event."""
        try:
            data = read_entry(self.path(key), key, max_size=MAX_ENTRY)
        except BadEntry:  # a link, a FIFO, a device, too large, or another key's entry: damaged, rewritten
            self.events.append(CacheEvent(name, key, "corrupt"))
            return None
        if data is None:
            self.events.append(CacheEvent(name, key, "miss"))
            return None
        run = decode(data, name, again)
        self.events.append(CacheEvent(name, key, "hit" if run is not None else "corrupt"))
        return run

    def put(self, key: str, run: Run) -> None:
        """Write an entry atomically; a run that cannot be cached, or an unwritable cache, is skipped."""
        data = encode(run)
        if data is None:
            return
        write_atomic(self.path(key), keyed(key, data))
