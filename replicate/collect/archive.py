"""The append-only JSONL archive of a K-trial collection.

Line 1 is a header record (``"type": "header"``): the config minus secrets,
the seed, the schema version, the request parameters' hash and a short hash
of every item's messages. Every further line is one finished trial
(``"type": "trial"``). A record is written in one ``write``, flushed and
``fsync``-ed before it counts, so after a crash the file holds whole records
plus at most one torn last line (no trailing newline), which the next run
detects, reports and cuts off. Each resumed run appends a ``"type": "resume"``
record with the settings it ran with (endpoint, concurrency, seed, timeouts,
retry policy may differ from the header's). A trial recorded as an API
error may be recorded again by a later run (``collect --retry-errors``): the
later record of the same (model, item, trial) supersedes the error; any other
repeat is a duplicate and bad input. Two locks keep a second collector away,
both ``fcntl.flock``: one on a lock file beside the archive's real path
(``ARCHIVE.lock``, symlinks resolved; it names the holder's pid and is removed
when the run ends), and one on the archive file itself, so a second collector
reaching the same file through a symlink or a hard link is refused too. The
kernel drops both when their holder dies, even by ``kill -9``. An archive that
holds duplicates all the same is mended by :mod:`replicate.collect.repair`.
An archive is read as a stream of blocks by :mod:`replicate.collect.archive_read`,
keeping the keys of its trials, not their records.
"""

from __future__ import annotations

import fcntl
import os
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import orjson

from replicate.collect.archive_read import (
    ARCHIVE_SCHEMA,
    BATCH_RECORDS,
    ArchiveContents,
    ArchiveScan,
    ArchiveStream,
    read_archive,
    scan_archive,
)
from replicate.collect.config import CollectConfig, Item
from replicate.errors import BadInput, UsageError
from replicate.outfile import fsync_folder
from replicate.secrets import MIN_SECRET, forms, scrub

__all__ = ["ARCHIVE_SCHEMA", "BATCH_RECORDS", "ArchiveContents", "ArchiveLock", "ArchiveScan", "ArchiveStream",
           "ArchiveWriter", "OpenedArchive", "header_changes", "lock_path", "make_header", "open_for_collection",
           "read_archive", "scan_archive"]


def lock_path(archive: Path) -> Path:
    """The lock file of ``archive``: beside its real path (symlinks resolved), so every name of it agrees."""
    real = Path(os.path.realpath(archive))
    return real.with_name(real.name + ".lock")


class ArchiveLock:
    """An exclusive, non-blocking ``flock`` on ``ARCHIVE.lock`` and on the archive file itself (context manager).

    The second lock is on the archive's inode: a hard link has another name, and so another
    lock file, but the same inode. An archive created only to be locked, and left empty, is
    removed again on release.
    """

    def __init__(self, archive: str | Path) -> None:
        self.archive = Path(archive)
        self.path = lock_path(self.archive)
        self._fd: int | None = None
        self._afd: int | None = None
        self._created = False

    def acquire(self) -> "ArchiveLock":
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:
                raise BadInput("cannot create the archive: its directory does not exist",
                               path=self.path.with_name(self.path.name[: -len(".lock")])) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise UsageError(
                    f"another collector is writing {self.path.with_suffix('').name} "
                    f"(it holds the lock {self.path}); wait for it to finish or stop it first"
                ) from None
            # The holder removes the file as it releases it: a lock taken on a file that
            # is no longer at the path (removed meanwhile) guards nothing; take it again.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        try:
            self._lock_archive()
        except BaseException:
            self.release()
            raise
        return self

    def _lock_archive(self) -> None:
        """flock the archive's own inode (created if missing, so a hard link made later shares the lock)."""
        real = os.path.realpath(self.archive)
        try:
            try:
                afd = os.open(real, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NONBLOCK, 0o644)
                self._created = True
            except FileExistsError:
                afd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not hang the open
        except OSError as exc:
            raise BadInput(f"cannot open the archive: {exc.strerror or exc}", path=self.archive) from None
        if not stat.S_ISREG(os.fstat(afd).st_mode):
            os.close(afd)
            raise BadInput("not a regular file: an archive is a file it appends to", path=self.archive)
        try:
            fcntl.flock(afd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(afd)
            raise UsageError(
                f"another collector is writing {self.archive.name} under another name (a symlink or a hard "
                "link to the same file holds its lock); wait for it to finish or stop it first"
            ) from None
        self._afd = afd

    def release(self) -> None:
        """Remove the lock file (while still holding the lock), then let go of it.

        So no lock file outlives a run that ends normally, by an error or by Ctrl-C;
        one left by ``kill -9`` holds no lock and is taken over by the next run.
        """
        if self._afd is not None:
            if self._created and os.fstat(self._afd).st_size == 0:
                try:  # made only to be locked: leave no empty archive behind
                    os.unlink(os.path.realpath(self.archive))
                except FileNotFoundError:
                    pass
            fcntl.flock(self._afd, fcntl.LOCK_UN)
            os.close(self._afd)
            self._afd = None
        if self._fd is not None:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "ArchiveLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


# -- header --------------------------------------------------------------------------


def make_header(config: CollectConfig, items: Sequence[Item]) -> dict[str, Any]:
    return {
        "type": "header",
        "schema": ARCHIVE_SCHEMA,
        "config": config.public(),
        "seed": config.seed,
        "params_hash": config.params_hash,
        "items": {it.id: it.request_hash for it in items},
    }


def _list(names: Iterable[str], limit: int = 5) -> str:
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def header_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between an archive's header and the current run, in words.

    Only what changes the data is compared: models (and their order), K,
    seed_per_trial, request parameters and items. Endpoint, concurrency, seed, timeouts and
    retry policy may change between runs.
    """
    out: list[str] = []
    oc, nc = old["config"], new["config"]
    if oc["collection"]["models"] != nc["collection"]["models"]:
        out.append(f"models: {oc['collection']['models']} -> {nc['collection']['models']}")
    if oc["collection"]["k"] != nc["collection"]["k"]:
        out.append(f"k: {oc['collection']['k']} -> {nc['collection']['k']}")
    ospt, nspt = oc["collection"].get("seed_per_trial", False), nc["collection"].get("seed_per_trial", False)
    if ospt != nspt:
        out.append(f"seed_per_trial: {str(ospt).lower()} -> {str(nspt).lower()}")
    if old["params_hash"] != new["params_hash"]:
        op, np_ = oc["params"], nc["params"]
        diffs = []
        for key in sorted(set(op) | set(np_)):
            if key not in np_:
                diffs.append(f"{key} removed (was {op[key]!r})")
            elif key not in op:
                diffs.append(f"{key} added ({np_[key]!r})")
            elif op[key] != np_[key]:
                diffs.append(f"{key}: {op[key]!r} -> {np_[key]!r}")
        out.append("params: " + ("; ".join(diffs) or "changed"))
    oi, ni = old["items"], new["items"]
    if oi != ni:
        parts = []
        added, removed = set(ni) - set(oi), set(oi) - set(ni)
        changed = {i for i in set(oi) & set(ni) if oi[i] != ni[i]}
        if added:
            parts.append(f"{len(added)} added ({_list(added)})")
        if removed:
            parts.append(f"{len(removed)} removed ({_list(removed)})")
        if changed:
            parts.append(f"{len(changed)} with other messages ({_list(changed)})")
        out.append("items: " + "; ".join(parts))
    return out


# -- writing -------------------------------------------------------------------------


def _line(record: Mapping[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def scrub_value(value: Any, secret: str) -> Any:
    """``value`` (JSON-like) with every occurrence of ``secret`` (as is or percent-encoded) in its strings (keys
    too) replaced by ``[API key]`` (:func:`replicate.secrets.scrub`)."""
    if isinstance(value, str):
        return scrub(value, secret)
    if isinstance(value, dict):
        return {scrub_value(k, secret): scrub_value(v, secret) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v, secret) for v in value]
    return value


@dataclass
class ArchiveWriter:
    """Appends records; :meth:`append_many` writes, flushes and fsyncs before returning.

    ``secret`` (the API key) never reaches the file: a provider or proxy that echoes it in a reply
    gets it replaced by ``[API key]`` in every string of the record (keys of at least :data:`MIN_SECRET`
    characters).
    """

    path: Path
    secret: str | None = field(default=None, repr=False)
    _fh: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._fh = open(self.path, "ab", buffering=0)

    def append_many(self, records: Iterable[Mapping[str, Any]]) -> int:
        records = list(records)
        blob = b"".join(_line(r) for r in records)
        if not blob:
            return 0
        secret = self.secret
        if secret and len(secret) >= MIN_SECRET and any(
                f.encode() in blob or orjson.dumps(f)[1:-1] in blob for f in forms(secret)):
            blob = b"".join(_line(scrub_value(r, secret)) for r in records)
        view = memoryview(blob)
        while view:
            n = self._fh.write(view)
            view = view[n:]
        os.fsync(self._fh.fileno())
        return blob.count(b"\n")

    def append(self, record: Mapping[str, Any]) -> None:
        self.append_many([record])

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


@dataclass(frozen=True, slots=True)
class OpenedArchive:
    writer: ArchiveWriter
    done: frozenset[tuple[str, str, int]]
    torn_bytes: int
    resumed: bool
    #: trials of ``done`` recorded as API errors -> their error kind
    errors: Mapping[tuple[str, str, int], str] = field(default_factory=dict)
    batches: tuple[dict[str, Any], ...] = ()  # batch mode's records so far


def open_for_collection(path: str | Path, config: CollectConfig, items: Sequence[Item]) -> OpenedArchive:
    """Prepare an archive for appending: create it with a header, or check and resume it.

    Call with the lock held. A torn last line is cut off (and its size
    returned); a header that disagrees with the current config is refused with
    the list of what changed; records of trials the current config does not
    ask for are bad input.
    """
    path = Path(path)
    new_header = make_header(config, items)
    secret = os.environ.get(config.api_key_env) or None
    if not path.exists() or path.stat().st_size == 0:
        writer = ArchiveWriter(path, secret)
        writer.append(new_header)
        fsync_folder(path.parent)
        return OpenedArchive(writer, frozenset(), 0, False)
    stream = ArchiveStream(path)
    asked = _AskedFor(config, items)
    for lineno, record in stream.trials():
        asked.check(lineno, record)
    if stream.torn_bytes:
        with open(path, "r+b") as fh:
            fh.truncate(stream.valid_size)
            os.fsync(fh.fileno())
    if stream.header is None:  # only a torn header was written
        writer = ArchiveWriter(path, secret)
        writer.append(new_header)
        return OpenedArchive(writer, frozenset(), stream.torn_bytes, False)
    changes = header_changes(stream.header, new_header)
    if changes:
        raise UsageError(
            f"{path} was collected with another configuration; refusing to resume.\n"
            + "\n".join(f"changed {c}" for c in changes)
            + "\nRestore the original settings, or collect into a new archive."
        )
    asked.raise_first(path, stream.superseded_lines)
    writer = ArchiveWriter(path, secret)
    # the header holds the first run's settings; a resume may change the operational ones (endpoint,
    # concurrency, seed, timeouts, retries), so each resume records what it ran with
    writer.append({
        "type": "resume",
        "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "config": config.public(),
        "seed": config.seed,
        "already_done": len(stream.done),
        "torn_bytes_discarded": stream.torn_bytes,
    })
    return OpenedArchive(writer, frozenset(stream.done), stream.torn_bytes, True, stream.errors,
                         tuple(stream.batches))


class _AskedFor:
    """Finds the first trial record (of those that stand) that the current config does not ask for."""

    def __init__(self, config: CollectConfig, items: Sequence[Item]) -> None:
        self.config = config
        self.ids = {it.id for it in items}
        self.models = set(config.models)
        #: (line, message) of such records: API errors (a later record may supersede them), then the first other
        self.found: list[tuple[int, str]] = []
        self.settled = False  # a record that is not an API error was found: no later line matters

    def check(self, lineno: int, r: Mapping[str, Any]) -> None:
        if self.settled or (r["model"] in self.models and str(r["item"]) in self.ids and r["trial"] < self.config.k):
            return
        self.found.append((lineno, (
            f"trial ({r['model']!r}, {str(r['item'])!r}, {r['trial']}) is not part of this collection "
            f"(models {', '.join(self.config.models)}; k={self.config.k}; {len(self.ids)} items); "
            "was the archive edited by hand?")))
        self.settled = not r.get("error_kind")

    def raise_first(self, path: Path, superseded: Sequence[int]) -> None:
        gone = set(superseded)
        for lineno, message in self.found:
            if lineno not in gone:
                raise BadInput(message, path=path, line=lineno)
