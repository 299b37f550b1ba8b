"""Batch mode: the provider's Files + Batches API into the same crash-safe archive.

One run, under the archive's lock:

1. **Take up what an earlier run submitted** (the bookkeeping is in :mod:`replicate.collect.batchbook`).
   Batches without a ``batch_done`` record are pending; an upload without a batch (killed between upload
   and create) is looked up in the provider's batch list by its input file, and created only when no batch
   uses it. So a killed collector never submits twice. Pending batches made with other batch settings
   (completion window, split limits) than this run's are refused, never mixed.
2. **Submit every missing triple no pending batch asks for** (also the chunks a killed run never
   submitted): request lines (custom_id ``MODEL|ITEM|TRIAL``) split within ``batch_max_lines`` and
   ``batch_max_bytes``; per chunk: upload (``batch_upload`` record with its settings and custom_ids,
   fsynced), create (``batch`` record, fsynced). ``retry_errors`` also asks the trials recorded as API
   errors, as the online collector does (:func:`replicate.collect.runner.settled`).
3. **Poll them all and import** each one as it ends, until all ended or ``batch_deadline`` seconds after
   the run started: batches still in progress then stay pending for the next run.

``cancel=True`` replaces 2: every pending batch is cancelled (an uncreated upload is dropped, or its batch
cancelled if the create went through), then polled to its end and its answered requests imported; the
rest is left missing for the next run.

Importing: a 200 line is a trial; a 4xx line (not 408/409/429) is that trial's ``api_error``; a 5xx/429
line or a line-level ``error`` is left missing for the next run. Each ended batch gets a ``batch_done``
record (status, counts). The summary says how many triples of the collection are still missing at the
end (``missing``; the CLI then exits 1), which batches are still pending, and why a batch failed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from replicate.collect.archive import ArchiveLock, OpenedArchive, open_for_collection
from replicate.collect.batchapi import TERMINAL, BatchAPI
from replicate.collect.batchbook import Book, Triple, check_settings, covered
from replicate.collect.batchfile import records_from_results, request_entries
from replicate.collect.client import ChatClient
from replicate.collect.config import CollectConfig, Item
from replicate.collect.runner import model_state, mostly_errors, mostly_errors_line, settled
from replicate.errors import ReplicateError

__all__ = ["BatchAPI", "BatchSummary", "collect_batch", "records_from_results", "render_batch_summary",
           "split_lines"]


def split_lines(lines: Iterable[bytes], *, max_lines: int, max_bytes: int) -> list[list[bytes]]:
    """Chunks of ``lines`` within both limits (a single line larger than ``max_bytes`` is an error). Pure."""
    chunks: list[list[bytes]] = []
    cur: list[bytes] = []
    size = 0
    for line in lines:
        if len(line) > max_bytes:
            raise ReplicateError(f"one request line is {len(line)} bytes, more than batch_max_bytes={max_bytes}")
        if cur and (len(cur) >= max_lines or size + len(line) > max_bytes):
            chunks.append(cur)
            cur, size = [], 0
        cur.append(line)
        size += len(line)
    if cur:
        chunks.append(cur)
    return chunks


@dataclass
class BatchSummary:
    archive: str
    submitted: list[str] = field(default_factory=list)  # batch ids created in this run
    resumed: list[str] = field(default_factory=list)  # batch ids of earlier runs taken up in this run
    cancelled: list[str] = field(default_factory=list)  # batch ids this run asked the provider to cancel
    pending: list[str] = field(default_factory=list)  # batch ids still in progress when this run stopped polling
    recorded: int = 0
    api_errors: int = 0
    retried_errors: int = 0  # api_error trials asked again (retry_errors)
    left_missing: int = 0  # lines answered with a transient error, or not answered (failed/expired/cancelled)
    statuses: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # batch id -> why it failed (the provider's errors)
    missing: int = 0  # triples of the collection still not in the archive when this run ended
    cancel: bool = False  # a --cancel-batches run (it submits nothing)
    recorded_triples: set[Triple] = field(default_factory=set, repr=False)
    #: per model, over the whole archive after this run: trials, api_errors, api_error kinds (as online)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def mostly_errors(self) -> list[str]:
        """Models more than half of whose recorded trials are API errors (the rule of online mode)."""
        return mostly_errors(self.models)

    def to_json(self) -> dict[str, Any]:
        return {"archive": self.archive, "mode": "batch", "submitted": self.submitted, "resumed": self.resumed,
                "cancelled": self.cancelled, "pending": self.pending, "trials_recorded": self.recorded,
                "api_errors": self.api_errors, "retried_errors": self.retried_errors,
                "left_missing": self.left_missing, "statuses": self.statuses, "reasons": self.reasons,
                "missing": self.missing, "cancel": self.cancel, "models": self.models,
                "mostly_api_errors": self.mostly_errors}


def collect_batch(config: CollectConfig, items: Sequence[Item], archive: str | Path, *,
                  progress: TextIO | None = None, sleep: Callable[[float], None] = time.sleep,
                  retry_errors: bool = False, cancel: bool = False,
                  clock: Callable[[], float] = time.monotonic) -> BatchSummary:
    """Run batch mode (see the module docstring) and return what it did."""
    archive = Path(archive)
    say = (lambda msg: (progress.write(msg + "\n"), progress.flush())) if progress is not None else (lambda m: None)
    summary = BatchSummary(str(archive), cancel=cancel)
    deadline = None if config.batch.deadline is None else clock() + config.batch.deadline
    with ArchiveLock(archive):
        opened = open_for_collection(archive, config, items)
        client = ChatClient.from_config(config)
        run = _Run(config, items, archive, opened, BatchAPI(client), summary, say)
        try:
            book = Book.of(opened.batches)
            pending = run.cancel_all(book) if cancel else run.take_up_and_submit(book, retry_errors)
            summary.pending = list(run.wait(pending, sleep, clock, deadline))
            have = set(opened.done) | summary.recorded_triples
            summary.missing = len(config.models) * len(items) * config.k - len(have)
            summary.models = model_state(config.models, run.state)
        finally:
            client.close()
            opened.writer.close()
    return summary


@dataclass
class _Run:
    """What the steps of one batch run share."""

    config: CollectConfig
    items: Sequence[Item]
    archive: Path
    opened: OpenedArchive
    api: BatchAPI
    summary: BatchSummary
    say: Callable[[str], Any]
    #: every trial in the archive -> its latest record's api_error kind (None: a reply), kept up to date
    state: dict[Triple, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state.update({t: self.opened.errors.get(t) for t in self.opened.done})

    def _record_batch(self, batch_id: str, fid: str, lines: Any) -> None:
        self.opened.writer.append({"type": "batch", "batch_id": batch_id, "input_file_id": fid, "lines": lines})

    def take_up_and_submit(self, book: Book, retry_errors: bool) -> dict[str, str]:
        """Pending batches of earlier runs (uncreated uploads found or created), then new ones for the rest."""
        if book.open_uploads():
            check_settings(book, self.config, self.archive, self.say)
        pending = book.pending()
        for fid, rec in book.uncreated().items():
            found = self.api.find_by_input(fid)  # killed between upload and create: did the create go through?
            batch = found if found is not None else self.api.create(fid, self.config.batch.window)
            self._record_batch(batch["id"], fid, rec.get("lines"))
            self.say(f"batch {batch['id']}: {'found' if found else 'created'} for the upload {fid} of an earlier run")
            pending[batch["id"]] = fid
        for bid in pending:
            self.say(f"batch {bid}: submitted by an earlier run; waiting for it")
        self.summary.resumed = list(pending)
        skip = settled(self.opened, retry_errors=retry_errors)
        self.summary.retried_errors = len(self.opened.done) - len(skip)
        asked = covered(book, self.config.models, self.api.content, self.archive) if pending else set()
        return {**pending, **self.submit(set(skip) | asked)}

    def submit(self, skip: set[Triple]) -> dict[str, str]:
        """Upload and create one batch per chunk of the triples not in ``skip``: batch id -> input file id."""
        entries = list(request_entries(self.config, self.items, skip))
        b = self.config.batch
        chunks = split_lines((line for _, line in entries), max_lines=b.max_lines, max_bytes=b.max_bytes)
        out: dict[str, str] = {}
        start = 0
        for n, chunk in enumerate(chunks, 1):
            ids = [cid for cid, _ in entries[start:start + len(chunk)]]
            start += len(chunk)
            fid = self.api.upload(b"".join(chunk))
            self.opened.writer.append({"type": "batch_upload", "input_file_id": fid, "lines": len(chunk),
                                       "settings": b.submission(), "custom_ids": ids})
            batch = self.api.create(fid, b.window)
            self._record_batch(batch["id"], fid, len(chunk))
            out[batch["id"]] = fid
            self.summary.submitted.append(batch["id"])
            self.say(f"batch {n}/{len(chunks)}: {batch['id']} submitted ({len(chunk)} requests)")
        return out

    def cancel_all(self, book: Book) -> dict[str, str]:
        """Cancel every pending batch; drop an upload no batch was created from. Submits nothing."""
        pending = book.pending()
        for fid, rec in book.uncreated().items():
            found = self.api.find_by_input(fid)
            if found is None:
                self.opened.writer.append({"type": "batch_done", "batch_id": None, "input_file_id": fid,
                                           "status": "cancelled", "recorded": 0})
                self.say(f"upload {fid}: no batch was created from it; dropped")
                continue
            self._record_batch(found["id"], fid, rec.get("lines"))
            pending[found["id"]] = fid
        if not pending:
            self.say("no batches in progress to cancel")
        for bid in pending:
            status = self.api.cancel(bid).get("status")
            self.summary.cancelled.append(bid)
            self.say(f"batch {bid}: cancel requested ({status})")
        self.summary.resumed = list(pending)
        return pending

    def wait(self, pending: dict[str, str], sleep: Callable[[float], None], clock: Callable[[], float],
             deadline: float | None) -> dict[str, str]:
        """Poll until every batch ended (each imported as it ends) or the deadline; what is still pending."""
        left = dict(pending)
        while left:
            for bid in list(left):
                b = self.api.get(bid)
                counts = b.get("request_counts") or {}
                self.say(f"batch {bid}: {b.get('status')} ({counts.get('completed', 0)} done, "
                         f"{counts.get('failed', 0)} failed of {counts.get('total', '?')})")
                if b.get("status") in TERMINAL:
                    self._import(b)
                    del left[bid]
            if not left:
                break
            remaining = float("inf") if deadline is None else deadline - clock()
            if remaining <= 0:
                for bid in left:
                    self.summary.statuses[bid] = "pending"
                    self.say(f"batch {bid}: still in progress at the deadline; left for the next run")
                break
            sleep(min(self.config.batch.poll, remaining))
        return left

    def _import(self, b: dict[str, Any]) -> None:
        s = self.summary
        # a result supersedes a recorded api_error; a triple recorded in this run is not recorded again
        already = set(self.opened.done) - set(self.opened.errors) | s.recorded_triples
        records: list[dict[str, Any]] = []
        errors = 0
        for key in ("output_file_id", "error_file_id"):  # each file parsed whole before anything is written
            if b.get(key):
                recs, errs = records_from_results(self.api.content(b[key]), self.config, already,
                                                  source=f"batch {b['id']} {key} {b[key]}")
                already |= {(r["model"], r["item"], r["trial"]) for r in recs}
                records += recs
                errors += errs
        self.opened.writer.append_many(records)
        self.state.update({(r["model"], r["item"], r["trial"]): r.get("error_kind") for r in records})
        total = int((b.get("request_counts") or {}).get("total") or 0)
        s.recorded += len(records)
        s.api_errors += errors
        s.left_missing += max(0, total - len(records))
        s.statuses[b["id"]] = str(b.get("status"))
        s.recorded_triples |= {(r["model"], r["item"], r["trial"]) for r in records}
        failures = b["errors"].get("data") if isinstance(b.get("errors"), dict) else None
        if isinstance(failures, list) and failures:
            s.reasons[b["id"]] = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in failures[:3]
                                           if isinstance(e, dict))[:500]
        self.opened.writer.append({"type": "batch_done", "batch_id": b["id"], "status": b.get("status"),
                                   "recorded": len(records), "request_counts": b.get("request_counts")})


def render_batch_summary(s: BatchSummary) -> str:
    lines = [f"archive: {s.archive} (batch mode)",
             f"batches submitted: {len(s.submitted)}; taken up from earlier runs: {len(s.resumed)}"
             + (f"; cancelled: {len(s.cancelled)}" if s.cancelled else ""),
             f"trials recorded: {s.recorded}; api errors: {s.api_errors}; left for the next run: {s.left_missing}"]
    if s.retried_errors:
        lines.append(f"api errors asked again (--retry-errors): {s.retried_errors}")
    for bid, st in s.statuses.items():
        lines.append(f"batch {bid}: {st}" + (f" ({s.reasons[bid]})" if bid in s.reasons else ""))
    if s.pending:
        lines.append(f"{_n(len(s.pending), 'batch', 'batches')} still in progress at the deadline: rerun the same "
                     "command to wait for them, or add --cancel-batches to cancel them")
    if s.missing:
        again = "rerun without --cancel-batches" if s.cancel else "rerun the same command"
        lines.append(f"{_n(s.missing, 'triple', 'triples')} still missing: {again} to ask for them")
    for m in s.mostly_errors:
        lines.append(mostly_errors_line(m, s.models[m]))
    return "\n".join(lines) + "\n"



def _n(n: int, one: str, many: str) -> str:
    return f"{n} {one} is" if n == 1 else f"{n} {many} are"
