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
from dataclasses import dataclass
from pathlib import Path

import orjson

from replicate.collect.archive import ArchiveLock, scan_archive
from replicate.collect.archive_read import GZIP_REFUSAL
from replicate.command_input import read_input
from replicate.errors import BadInput
from replicate.outfile import write_file
from replicate.reading.stream import GZIP_MAGIC


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


def dedupe_lines(data: bytes, path: Path) -> tuple[list[bytes], list[DroppedRecord], int]:
    """The lines to keep, the duplicates dropped and the number of trial records kept.

    A line that is not JSON is bad input (this mends duplicates, not damage of other kinds).
    """
    end = data.rfind(b"\n") + 1
    body, tail = data[:end], data[end:]
    kept: list[bytes] = []
    dropped: list[DroppedRecord] = []
    first: dict[tuple[str, str, int], tuple[int, dict]] = {}
    trials = 0
    for lineno, line in enumerate(body.splitlines(keepends=True), 1):
        if not line.strip():
            kept.append(line)
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BadInput(f"archive record is not valid JSON: {exc}; only duplicate trials are repaired",
                           path=path, line=lineno) from None
        if isinstance(rec, dict) and rec.get("type") == "trial" and isinstance(rec.get("trial"), int):
            key = (str(rec.get("model")), str(rec.get("item")), rec["trial"])
            earlier = first.get(key)
            if earlier is not None and not earlier[1].get("error_kind"):
                dropped.append(DroppedRecord(lineno, *key, earlier[0],
                                             _without_payload(rec) != _without_payload(earlier[1])))
                continue
            if earlier is None:
                trials += 1
            first[key] = (lineno, rec)
        kept.append(line)
    if tail:
        kept.append(tail)
    return kept, dropped, trials


def repair_archive(archive: str | Path) -> RepairReport:
    """Drop the duplicate trial records of ``archive`` (see the module docstring); the result reads cleanly."""
    archive = Path(archive)
    if not archive.exists():
        raise BadInput("archive not found", path=archive)
    with ArchiveLock(archive):
        real = Path(os.path.realpath(archive))
        if _starts_with(real, GZIP_MAGIC):  # refused before the file is read as lines (as collect refuses it)
            raise BadInput(GZIP_REFUSAL, path=archive)
        data = read_input(real, what="archive")
        kept, dropped, trials = dedupe_lines(data, archive)
        lines = data.count(b"\n")
        if not dropped:
            scan_archive(archive)  # other damage is reported as bad input, not "nothing to repair"
            return RepairReport(str(archive), None, lines, trials, ())
        backup = _backup_path(real)
        shutil.copy2(real, backup)
        write_file(real, kept)  # whole or not at all, with the archive's mode
        scan_archive(archive)  # what is left must read cleanly
        return RepairReport(str(archive), str(backup), lines, trials, tuple(dropped))


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
