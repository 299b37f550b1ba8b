"""Batch mode: the provider's Files + Batches API into the same crash-safe archive.

One run, under the archive's lock:

1. **Finish what an earlier run submitted.** Every ``batch`` record without a
   ``batch_done`` record is polled to its end and its results imported; a
   ``batch_upload`` record without a ``batch`` record (killed between upload
   and create) is looked up in the provider's batch list by its input file, and
   created only when no batch uses that file. So a killed collector never
   submits twice. A run that found such batches submits nothing new: what they
   left missing (failed, expired, partially completed batches) is for the next
   run.
2. **Otherwise submit the missing triples**: request lines (custom_id
   ``MODEL|ITEM|TRIAL``) split into chunks within ``batch_max_lines`` and
   ``batch_max_bytes``; per chunk: upload (``batch_upload`` record, fsynced),
   create (``batch`` record, fsynced), then poll all of them and import.

Importing: a 200 line is a trial; a 4xx line (not 408/409/429) is that trial's
``api_error``; a 5xx/429 line or a line-level ``error`` is left missing for the
next run. Each finished batch gets a ``batch_done`` record (status, counts).
The summary says how many triples of the collection are still missing at the
end (``missing``; the CLI then exits 1) and why a batch failed (``reasons``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

import orjson
import requests

from replicate.collect.archive import ArchiveLock, ArchiveWriter, OpenedArchive, open_for_collection
from replicate.collect.batchfile import CHAT_URL, parse_custom_id, request_lines, result_outcome
from replicate.collect.client import ChatClient, PermanentFault
from replicate.collect.config import CollectConfig, Item
from replicate.errors import BadInput, ReplicateError

TERMINAL = ("completed", "failed", "expired", "cancelled")


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
    resumed: list[str] = field(default_factory=list)  # batch ids of earlier runs finished in this run
    recorded: int = 0
    api_errors: int = 0
    left_missing: int = 0  # lines answered with a transient error, or not answered (failed/expired)
    statuses: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # batch id -> why it failed (the provider's errors)
    missing: int = 0  # triples of the collection still not in the archive when this run ended
    recorded_triples: set[tuple[str, str, int]] = field(default_factory=set, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"archive": self.archive, "mode": "batch", "submitted": self.submitted, "resumed": self.resumed,
                "trials_recorded": self.recorded, "api_errors": self.api_errors,
                "left_missing": self.left_missing, "statuses": self.statuses, "reasons": self.reasons,
                "missing": self.missing}


class BatchAPI:
    """The Files and Batches endpoints over the collection's HTTP client (key, proxies, CA)."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.root = client.base_url.rstrip("/")

    def _call(self, method: str, path: str, **kw: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.client._key()}"}
        try:
            r = self.client.session.request(method, self.root + path, headers=headers,
                                            timeout=(self.client.connect_timeout, self.client.timeout), **kw)
        except requests.RequestException as exc:
            raise PermanentFault("connection", self.client.scrub(f"{method} {path}: {type(exc).__name__}")) from None
        if r.status_code != 200:
            info = self.client._error_info(r.content, r.status_code)
            raise PermanentFault(f"http_{r.status_code}", f"{method} {path}: {info.message}")
        return r

    def upload(self, blob: bytes) -> str:
        r = self._call("POST", "/files", files={"file": ("requests.jsonl", blob, "application/jsonl")},
                       data={"purpose": "batch"})
        return str(r.json()["id"])

    def create(self, file_id: str, window: str) -> dict[str, Any]:
        return dict(self._call("POST", "/batches", json={"input_file_id": file_id, "endpoint": CHAT_URL,
                                                          "completion_window": window}).json())

    def get(self, batch_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/batches/{batch_id}").json())

    def find_by_input(self, file_id: str) -> dict[str, Any] | None:
        data = self._call("GET", "/batches", params={"limit": 100}).json().get("data") or []
        return next((b for b in data if b.get("input_file_id") == file_id), None)

    def content(self, file_id: str) -> bytes:
        return self._call("GET", f"/files/{file_id}/content").content


def collect_batch(config: CollectConfig, items: Sequence[Item], archive: str | Path, *,
                  progress: TextIO | None = None, sleep: Callable[[float], None] = time.sleep) -> BatchSummary:
    """Run batch mode (see the module docstring) and return what it did."""
    archive = Path(archive)
    say = (lambda msg: (progress.write(msg + "\n"), progress.flush())) if progress is not None else (lambda m: None)
    summary = BatchSummary(str(archive))
    with ArchiveLock(archive):
        opened = open_for_collection(archive, config, items)
        client = ChatClient.from_config(config)
        api = BatchAPI(client)
        try:
            pending = _pending(opened, api, config, summary, say)
            if pending:
                summary.resumed = list(pending)
            else:
                done = set(opened.done)
                chunks = split_lines(request_lines(config, items, frozenset(done)),
                                     max_lines=config.batch.max_lines, max_bytes=config.batch.max_bytes)
                for n, chunk in enumerate(chunks, 1):
                    fid = api.upload(b"".join(chunk))
                    opened.writer.append({"type": "batch_upload", "input_file_id": fid, "lines": len(chunk)})
                    batch = api.create(fid, config.batch.window)
                    opened.writer.append({"type": "batch", "batch_id": batch["id"], "input_file_id": fid,
                                          "lines": len(chunk)})
                    pending[batch["id"]] = fid
                    summary.submitted.append(batch["id"])
                    say(f"batch {n}/{len(chunks)}: {batch['id']} submitted ({len(chunk)} requests)")
            _finish_all(pending, api, opened, config, summary, say, sleep)
            have = set(opened.done) | summary.recorded_triples
            summary.missing = len(config.models) * len(items) * config.k - len(have)
        finally:
            client.close()
            opened.writer.close()
    return summary


def _pending(opened: OpenedArchive, api: BatchAPI, config: CollectConfig, summary: BatchSummary,
             say: Callable[[str], Any]) -> dict[str, str]:
    """Batches an earlier run submitted and did not finish (batch id -> input file id)."""
    uploads: dict[str, dict[str, Any]] = {}
    created: dict[str, str] = {}
    finished: set[str] = set()
    for rec in opened.batches:
        if rec["type"] == "batch_upload":
            uploads[rec["input_file_id"]] = rec
        elif rec["type"] == "batch":
            created[rec["batch_id"]] = rec["input_file_id"]
        else:
            finished.add(rec["batch_id"])
    pending = {b: f for b, f in created.items() if b not in finished}
    for fid, rec in uploads.items():
        if fid in created.values():
            continue
        found = api.find_by_input(fid)  # killed between upload and create: did the create go through?
        batch = found if found is not None else api.create(fid, config.batch.window)
        opened.writer.append({"type": "batch", "batch_id": batch["id"], "input_file_id": fid,
                              "lines": rec.get("lines")})
        say(f"batch {batch['id']}: {'found' if found else 'created'} for the upload {fid} of an earlier run")
        if batch["id"] not in finished:
            pending[batch["id"]] = fid
    for b in pending:
        say(f"batch {b}: submitted by an earlier run; waiting for it (nothing new is submitted)")
    return pending


def _finish_all(pending: dict[str, str], api: BatchAPI, opened: OpenedArchive, config: CollectConfig,
                summary: BatchSummary, say: Callable[[str], Any], sleep: Callable[[float], None]) -> None:
    left = dict(pending)
    while left:
        for bid in list(left):
            b = api.get(bid)
            counts = b.get("request_counts") or {}
            say(f"batch {bid}: {b.get('status')} ({counts.get('completed', 0)} done, {counts.get('failed', 0)} "
                f"failed of {counts.get('total', '?')})")
            if b.get("status") in TERMINAL:
                _import(b, api, opened, config, summary)
                del left[bid]
        if left:
            sleep(config.batch.poll)


def records_from_results(blob: bytes, config: CollectConfig, already: set[tuple[str, str, int]], *,
                         source: str = "batch") -> tuple[list[dict[str, Any]], int]:
    """Archive records of a batch's output/error lines, and how many are API errors. Pure.

    Triples in ``already`` and repeats are skipped; transient answers (5xx, 408,
    409, 429, a line-level error) are left out, to be asked again.
    """
    from replicate.collect.runner import _record

    seen: set[tuple[str, str, int]] = set()
    records = []
    errors = 0
    where = Path(source)
    params_hash = config.params_hash  # a sha256 over the params: once, not per line
    models = sorted(config.models, key=len, reverse=True)
    for lineno, line in enumerate(blob.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BadInput(f"a batch result line is not JSON ({exc})", path=where, line=lineno) from None
        if not isinstance(obj, dict):
            raise BadInput("a batch result line is not a JSON object", path=where, line=lineno)
        triple = parse_custom_id(str(obj.get("custom_id")), models)
        if triple is None:
            raise BadInput(f"custom_id {obj.get('custom_id')!r} names no (model|item|trial) of this collection",
                           path=where, line=lineno)
        if triple in already or triple in seen:
            continue
        raw_resp = obj.get("response")
        resp: dict[str, Any] = raw_resp if isinstance(raw_resp, dict) else {}
        status = resp.get("status_code")
        if obj.get("error") or status in (408, 409, 429) or (isinstance(status, int) and status >= 500):
            continue  # transient: left missing for the next run
        outcome = result_outcome(obj, where, lineno)
        seed = config.params_for(triple[2])["seed"] if config.seed_per_trial else None
        records.append(_record(*triple, params_hash, outcome, seed))
        seen.add(triple)
        errors += outcome.error_kind is not None
    return records, errors


def _import(b: dict[str, Any], api: BatchAPI, opened: OpenedArchive, config: CollectConfig,
            summary: BatchSummary) -> None:
    writer: ArchiveWriter = opened.writer
    already = set(opened.done) - set(opened.errors)
    records: list[dict[str, Any]] = []
    errors = 0
    for key in ("output_file_id", "error_file_id"):  # each file parsed whole before anything is written
        if b.get(key):
            recs, errs = records_from_results(api.content(b[key]), config, already,
                                              source=f"batch {b['id']} {key} {b[key]}")
            already |= {(r["model"], r["item"], r["trial"]) for r in recs}
            records += recs
            errors += errs
    writer.append_many(records)
    total = int((b.get("request_counts") or {}).get("total") or 0)
    summary.recorded += len(records)
    summary.api_errors += errors
    summary.left_missing += max(0, total - len(records))
    summary.statuses[b["id"]] = str(b.get("status"))
    summary.recorded_triples |= {(r["model"], r["item"], r["trial"]) for r in records}
    failures = b["errors"].get("data") if isinstance(b.get("errors"), dict) else None
    if isinstance(failures, list) and failures:
        summary.reasons[b["id"]] = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in failures[:3]
                                             if isinstance(e, dict))[:500]
    writer.append({"type": "batch_done", "batch_id": b["id"], "status": b.get("status"),
                   "recorded": len(records), "request_counts": b.get("request_counts")})


def render_batch_summary(s: BatchSummary) -> str:
    lines = [f"archive: {s.archive} (batch mode)",
             f"batches submitted: {len(s.submitted)}; finished from earlier runs: {len(s.resumed)}",
             f"trials recorded: {s.recorded}; api errors: {s.api_errors}; left for the next run: {s.left_missing}"]
    for bid, st in s.statuses.items():
        lines.append(f"batch {bid}: {st}" + (f" ({s.reasons[bid]})" if bid in s.reasons else ""))
    if s.missing:
        lines.append(f"{s.missing} triples are still missing: rerun the same command to ask for them")
    return "\n".join(lines) + "\n"
