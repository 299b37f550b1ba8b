"""Batch mode's bookkeeping in the archive: what earlier runs uploaded, created and finished.

Records (fsynced as they happen, see :data:`replicate.collect.archive.BATCH_RECORDS`):

- ``batch_upload``: an uploaded input file: ``input_file_id``, ``lines``, ``settings`` (the batch settings it
  was made with: :meth:`BatchSettings.submission`) and ``custom_ids`` (the triples it asks for);
- ``batch``: a batch created from an upload: ``batch_id``, ``input_file_id``;
- ``batch_done``: a batch whose results were imported (``status``, counts); with ``batch_id`` null, an upload
  dropped by ``--cancel-batches`` before any batch was created from it.

A batch without ``batch_done`` is *pending*: the next run waits for it (or cancels it); an upload without a
batch and not dropped is *uncreated* (the run was killed between upload and create).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import orjson

from replicate.collect.batchfile import parse_custom_id
from replicate.collect.config import CollectConfig
from replicate.errors import BadInput, UsageError

Triple = tuple[str, str, int]


@dataclass
class Book:
    uploads: dict[str, dict[str, Any]] = field(default_factory=dict)  # input file id -> batch_upload record
    created: dict[str, str] = field(default_factory=dict)  # batch id -> input file id
    finished: set[str] = field(default_factory=set)  # batch ids with a batch_done record
    dropped: set[str] = field(default_factory=set)  # input file ids of uploads dropped before a batch existed

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> "Book":
        book = cls()
        for rec in records:
            if rec["type"] == "batch_upload":
                book.uploads[rec["input_file_id"]] = dict(rec)
            elif rec["type"] == "batch":
                book.created[rec["batch_id"]] = rec["input_file_id"]
            elif rec.get("batch_id") is None:
                book.dropped.add(str(rec.get("input_file_id")))
            else:
                book.finished.add(rec["batch_id"])
        return book

    def pending(self) -> dict[str, str]:
        """Batches created and not finished: batch id -> input file id."""
        return {b: f for b, f in self.created.items() if b not in self.finished}

    def uncreated(self) -> dict[str, dict[str, Any]]:
        """Uploads no batch was recorded for (and not dropped): input file id -> its record."""
        made = set(self.created.values())
        return {f: r for f, r in self.uploads.items() if f not in made and f not in self.dropped}

    def open_uploads(self) -> dict[str, dict[str, Any]]:
        """The upload records of pending batches and of uncreated uploads."""
        fids = set(self.pending().values()) | set(self.uncreated())
        return {f: self.uploads.get(f, {"input_file_id": f}) for f in fids}


def check_settings(book: Book, config: CollectConfig, archive: Path, say: Callable[[str], Any]) -> None:
    """Refuse to resume pending batches with other batch settings than they were submitted with.

    Raises :class:`UsageError` naming each changed setting (old -> new) and the two ways on; an upload
    recorded without its settings (an older version's archive) is said to be unchecked.
    """
    now = config.batch.submission()
    changes: dict[str, tuple[Any, Any]] = {}
    for fid, rec in sorted(book.open_uploads().items()):
        old = rec.get("settings")
        if not isinstance(old, dict):
            say(f"upload {fid}: its batch settings are not recorded (an archive written by an older version): "
                "not checked against this run's")
            continue
        for key, value in now.items():
            if key in old and old[key] != value:
                changes.setdefault(key, (old[key], value))
    if changes:
        lines = [f"changed {k}: {orjson.dumps(o).decode()} -> {orjson.dumps(n).decode()}"
                 for k, (o, n) in sorted(changes.items())]
        raise UsageError(
            f"{archive} has batches in progress that were submitted with other batch settings; refusing to mix "
            "them.\n" + "\n".join(lines) + "\nRestore the original settings to resume them (change them once "
            "they have ended), or cancel them first with --cancel-batches (their answered requests are imported) "
            "and rerun with the new settings.")


def covered(book: Book, models: Sequence[str], download: Callable[[str], bytes], archive: Path) -> set[Triple]:
    """The triples the open uploads ask for (read from their records, else from the uploaded file).

    A custom_id naming no triple of this collection is bad input naming the upload.
    """
    out: set[Triple] = set()
    for fid, rec in book.open_uploads().items():
        ids = rec.get("custom_ids")
        if not isinstance(ids, list):  # an older version's record: read the input file back
            ids = [orjson.loads(line).get("custom_id") for line in download(fid).splitlines() if line.strip()]
        for cid in ids:
            triple = parse_custom_id(str(cid), models)
            if triple is None:
                raise BadInput(f"the batch upload {fid} asks for custom_id {cid!r}, which names no "
                               "(model|item|trial) of this collection; was the archive edited by hand?", path=archive)
            out.add(triple)
    return out
