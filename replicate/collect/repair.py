"""Mending an archive that holds duplicate trials (``replicate repair-archive``).

Two collectors writing one archive at once (possible before the lock was taken on
the archive's own inode: one reached it through a symlink or a hard link) leave
the same (model, item, trial) recorded twice, which ``collect`` and ``score``
then refuse. The repair keeps the first record of each (model, item, trial), as
the reader would: a later record of a trial first recorded as an API error
supersedes it (``collect --retry-errors`` writes those) and is kept too. Every
other line (header, resume and batch records, a torn last line) is kept byte for
byte. The original is copied to a backup first; the repaired file replaces the
archive's real file in one rename, under the archive's lock.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from replicate.collect.archive import ArchiveLock, scan_archive
from replicate.collect.archive_read import GZIP_REFUSAL, archive_blocks
from replicate.command_input import read_input
from replicate.errors import BadInput
from replicate.outfile import write_file
from replicate.reading.stream import GZIP_MAGIC, line_chunks


@dataclass(frozen=True, slots=True)
class DroppedRecord:
    """A duplicate record left out: its line, its trial, the line of the record kept, whether the two differ."""

    line: int
    model: str
    item: str
    trial: int
    kept_line: int
    differs: bool


@dataclass(frozen=True, slots=True)
class RepairReport:
    archive: str
    backup: str | None  # None when nothing needed mending (no file written)
    lines: int
    trials_kept: int
    dropped: tuple[DroppedRecord, ...]

    def to_json(self) -> dict:
        return {"archive": self.archive, "backup": self.backup, "lines": self.lines, "trials_kept": self.trials_kept,
                "dropped": [{"line": d.line, "model": d.model, "item": d.item, "trial": d.trial,
                             "kept_line": d.kept_line, "differs": d.differs} for d in self.dropped]}


def _backup_path(real: Path) -> Path:
    """``ARCHIVE.bak``, else the first free ``ARCHIVE.bak.N``: an earlier backup is never overwritten."""
    cand = real.with_name(real.name + ".bak")
    n = 1
    while cand.exists() or cand.is_symlink():
        cand = real.with_name(f"{real.name}.bak.{n}")
        n += 1
    return cand


def _starts_with(path: Path, magic: bytes) -> bool:
    """Whether the regular file ``path`` begins with ``magic`` (what cannot be read is left to the reader)."""
    try:
        with open(path, "rb") as fh:
            return os.path.isfile(path) and fh.read(len(magic)) == magic
    except OSError:
        return False


def _without_payload(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k not in ("ts", "latency_s", "attempts")}


class _Lines:
    """The archive's lines, read as often as needed: a regular file in blocks (memory bounded by a block, not
    the file), anything else (a pipe) once and held. Line numbers count every line ending (``\n``,
    ``\r\n`` or a lone ``\r``), as ``bytes.splitlines`` and the archive's reader do."""

    def __init__(self, real: Path, shown: Path) -> None:
        self.real = real  # the file read (the archive's real file, through any symlink)
        self.path = shown  # the archive as the user named it, in errors
        self._held = None if real.is_file() else read_input(shown, what="archive")
        self._fd: int | None = None  # the file, opened again to read an earlier record of a duplicate

    def _blocks(self) -> Iterator[bytes]:
        return iter((self._held,)) if self._held is not None else archive_blocks(self.real)

    def chunks(self) -> Iterator[tuple[list[bytes], bytes]]:
        """``(lines, torn)`` per chunk of whole lines, each line with its ending; ``torn`` is a last line the
        file does not end with a newline after (only in the last chunk, else empty)."""
        for chunk in line_chunks(self._blocks(), path=self.path):
            end = chunk.rfind(b"\n") + 1
            yield chunk[:end].splitlines(keepends=True), chunk[end:]

    def at(self, offset: int, size: int) -> bytes:
        """The ``size`` bytes at ``offset`` (a line read again: the cost of a duplicate, not of every line)."""
        if self._held is not None:
            return self._held[offset:offset + size]
        if self._fd is None:
            self._fd = os.open(self.real, os.O_RDONLY)
        return os.pread(self._fd, size, offset)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def find_duplicates(lines: _Lines) -> tuple[list[DroppedRecord], int, int]:
    """The duplicates to drop, the number of trial records kept and the number of newlines, in one pass that
    keeps a key and a line's place per trial, never the records. A line that is not JSON is bad input (this
    mends duplicates, not damage of other kinds)."""
    dropped: list[DroppedRecord] = []
    #: (model, item, trial) -> line number, byte offset and size of the record kept, whether it is an API error
    first: dict[tuple[str, str, int], tuple[int, int, int, bool]] = {}
    names: dict[str, str] = {}
    trials = lineno = offset = newlines = 0
    for chunk, torn in lines.chunks():
        for line in chunk:
            lineno += 1
            here, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise BadInput(f"archive record is not valid JSON: {exc}; only duplicate trials are repaired",
                               path=lines.path, line=lineno) from None
            if isinstance(rec, dict) and rec.get("type") == "trial" and isinstance(rec.get("trial"), int):
                model, item = str(rec.get("model")), str(rec.get("item"))
                key = (names.setdefault(model, model), names.setdefault(item, item), rec["trial"])
                earlier = first.get(key)
                if earlier is not None and not earlier[3]:
                    kept = orjson.loads(lines.at(earlier[1], earlier[2]))
                    dropped.append(DroppedRecord(lineno, *key, earlier[0],
                                                 _without_payload(rec) != _without_payload(kept)))
                    continue
                if earlier is None:
                    trials += 1
                first[key] = (lineno, here, len(line), bool(rec.get("error_kind")))
        newlines += sum(line.endswith(b"\n") for line in chunk)
        offset += len(torn)
    return dropped, trials, newlines


def _kept(lines: _Lines, drop: set[int]) -> Iterator[bytes]:
    """The archive's bytes without the lines numbered in ``drop``, a chunk at a time."""
    lineno = 0
    for chunk, torn in lines.chunks():
        keep = []
        for line in chunk:
            lineno += 1
            if lineno not in drop:
                keep.append(line)
        yield b"".join(keep) + torn


def repair_archive(archive: str | Path) -> RepairReport:
    """Drop the duplicate trial records of ``archive`` (see the module docstring); the result reads cleanly.

    Memory grows with the archive's trials as keys (about 200 bytes a trial), not with its bytes. What the
    repair cannot read (a line that is not JSON, a line past the bound on a line's length) is refused before
    anything is written."""
    archive = Path(archive)
    if not archive.exists():
        raise BadInput("archive not found", path=archive)
    with ArchiveLock(archive):
        real = Path(os.path.realpath(archive))
        if _starts_with(real, GZIP_MAGIC):  # refused before the file is read as lines (as collect refuses it)
            raise BadInput(GZIP_REFUSAL, path=archive)
        lines = _Lines(real, archive)
        try:
            dropped, trials, newlines = find_duplicates(lines)
        finally:
            lines.close()
        if not dropped:
            scan_archive(archive)  # other damage is reported as bad input, not "nothing to repair"
            return RepairReport(str(archive), None, newlines, trials, ())
        backup = _backup_path(real)
        shutil.copy2(real, backup)
        write_file(real, _kept(lines, {d.line for d in dropped}))  # whole or not at all, with the archive's mode
        scan_archive(archive)  # what is left must read cleanly
        return RepairReport(str(archive), str(backup), newlines, trials, tuple(dropped))


def render_repair(rep: RepairReport, limit: int = 20) -> str:
    if rep.backup is None:
        return f"{rep.archive}: no duplicate trials ({rep.trials_kept} trials); nothing changed\n"
    differ = sum(d.differs for d in rep.dropped)
    out = [f"{rep.archive}: dropped {len(rep.dropped)} duplicate trial records ({differ} differing from the record "
           f"kept), kept {rep.trials_kept} trials; the original is in {rep.backup}"]
    for d in rep.dropped[:limit]:
        out.append(f"  line {d.line}: ({d.model!r}, {d.item!r}, {d.trial}) duplicate of line {d.kept_line}"
                   + (" (differs)" if d.differs else ""))
    if len(rep.dropped) > limit:
        out.append(f"  ... and {len(rep.dropped) - limit} more (--format json lists them all)")
    return "\n".join(out) + "\n"
