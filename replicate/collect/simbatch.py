"""The sim-server's Files and Batches endpoints (OpenAI's shapes), with batch-level faults.

- ``POST /v1/files`` (multipart, ``purpose=batch``) stores a file; ``GET
  /v1/files/ID/content`` returns it.
- ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``)
  creates a batch; ``GET /v1/batches/ID`` reports it; ``GET /v1/batches``
  lists them (newest first, ``limit`` 1-100, default 20, the page ``after`` a batch id, with
  ``has_more``). ``POST /v1/batches/ID/cancel`` moves a batch
  in progress to ``cancelling``; the status check after ``cancel_polls`` ends it ``cancelled``,
  with an output file for the requests it had answered (the first
  ``cancel_answers`` lines) as OpenAI returns; a batch already ended gets a 409.
- A batch stays ``in_progress`` for ``polls`` status checks, then ends:
  ``completed`` with an output file (and an error file for requests that
  failed), or with the faults of :class:`SimBatchFaults`: ``failed`` (no
  output), ``expired`` (output for only part of the requests), or
  ``partial`` (a share of the requests in the error file with a 500).

Every request line is answered by :meth:`SimServer.answer` (no transport
faults inside a batch), so outcomes follow the same seeded draws as online.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass
class SimBatchFaults:
    polls: int = 1  # status checks a batch stays in progress for
    fail: bool = False  # every batch fails validation
    expire_after: int | None = None  # a batch expires after answering this many lines
    partial: float = 0.0  # share of lines put in the error file with a 500 (by line index, deterministic)
    cancel_answers: int = 0  # lines a batch cancelled while in progress has answered
    cancel_polls: int = 0  # status checks a batch stays cancelling for
    # The create request with this number (1-based; 0: none) is held until ``release`` is set, then the
    # batch is created all the same: a client killed meanwhile still gets its batch, as from a provider.
    hold_create: int = 0
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class SimBatchState:
    faults: SimBatchFaults = field(default_factory=SimBatchFaults)
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=dict)
    created: int = 0
    create_requests: int = 0  # batch creations asked for (counted on arrival, before any hold)
    cancelled: int = 0  # cancel requests accepted
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Any = field(default_factory=lambda: itertools.count(1))


def _multipart_file(content_type: str, raw: bytes) -> tuple[bytes | None, str | None]:
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    data, purpose = None, None
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if name == "file" and isinstance(payload, bytes):
            data = payload
        elif name == "purpose":
            purpose = payload.decode() if isinstance(payload, bytes) else None
    return data, purpose


def handle_post(handler: Any, route: str, raw: bytes) -> None:
    srv = handler.server
    st: SimBatchState = srv.batch
    if route == "/v1/files":
        data, purpose = _multipart_file(handler.headers.get("Content-Type", ""), raw)
        if data is None or purpose != "batch":
            handler._error(400, "a batch file upload needs a 'file' part and purpose=batch", "invalid_request_error")
            return
        with st.lock:
            fid = f"file-sim{next(st.ids)}"
            st.files[fid] = data
        handler._send(200, orjson.dumps({"id": fid, "object": "file", "bytes": len(data), "purpose": "batch",
                                         "filename": "input.jsonl"}))
        return
    if route.startswith("/v1/batches/") and route.endswith("/cancel"):
        _cancel(handler, st, route[len("/v1/batches/"):-len("/cancel")])
        return
    if route == "/v1/batches":
        try:
            req = orjson.loads(raw)
            fid = req["input_file_id"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            handler._error(400, "a batch needs input_file_id", "invalid_request_error")
            return
        if fid not in st.files:
            handler._error(404, f"No such File object: {fid}", "invalid_request_error")
            return
        with st.lock:
            st.create_requests += 1
            nth = st.create_requests
        if nth == st.faults.hold_create and not st.faults.release.wait(120):
            handler._error(500, "the held batch creation was never released", "server_error")
            return
        with st.lock:
            bid = f"batch_sim{next(st.ids)}"
            st.created += 1
            n = st.files[fid].count(b"\n")
            st.batches[bid] = {"id": bid, "object": "batch", "endpoint": req.get("endpoint"), "errors": None,
                               "input_file_id": fid, "completion_window": req.get("completion_window", "24h"),
                               "status": "validating", "output_file_id": None, "error_file_id": None,
                               "created_at": 1_760_000_000 + st.created,
                               "request_counts": {"total": n, "completed": 0, "failed": 0}}
            st.polls[bid] = 0
        handler._send(200, orjson.dumps(st.batches[bid]))
        return
    handler._error(404, f"no route {handler.path}", "invalid_request_error")


def handle_get(handler: Any, route: str) -> None:
    srv = handler.server
    st: SimBatchState = srv.batch
    if route.startswith("/v1/files/") and route.endswith("/content"):
        fid = route[len("/v1/files/"):-len("/content")]
        data = st.files.get(fid)
        if data is None:
            handler._error(404, f"No such File object: {fid}", "invalid_request_error")
            return
        handler._send(200, data, {"Content-Type": "application/jsonl"})
        return
    if route == "/v1/batches" or route.startswith("/v1/batches?"):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(route).query)
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            handler._error(400, "limit must be an integer from 1 to 100", "invalid_request_error")
            return
        with st.lock:
            listed = sorted(st.batches.values(), key=lambda b: -b["created_at"])
        after = query.get("after", [None])[0]
        if after is not None:  # the page after the batch with this id (a cursor, as OpenAI's)
            ids = [b["id"] for b in listed]
            listed = listed[ids.index(after) + 1:] if after in ids else []
        page = listed[:limit]
        handler._send(200, orjson.dumps({"object": "list", "data": page, "has_more": len(listed) > limit,
                                         "first_id": page[0]["id"] if page else None,
                                         "last_id": page[-1]["id"] if page else None}))
        return
    if route.startswith("/v1/batches/"):
        bid = route[len("/v1/batches/"):]
        with st.lock:
            batch = st.batches.get(bid)
            if batch is None:
                handler._error(404, f"No such Batch object: {bid}", "invalid_request_error")
                return
            st.polls[bid] += 1
            if batch["status"] == "cancelling":
                if st.polls[bid] > st.faults.cancel_polls:
                    _finish(srv, st, batch, cancel=True)
            elif batch["status"] in ("validating", "in_progress"):
                if st.polls[bid] > st.faults.polls:
                    _finish(srv, st, batch)
                else:
                    batch["status"] = "in_progress"
            body = orjson.dumps(batch)
        handler._send(200, body)
        return
    handler._error(404, f"no route {handler.path}", "invalid_request_error")


def _cancel(handler: Any, st: SimBatchState, bid: str) -> None:
    with st.lock:
        batch = st.batches.get(bid)
        if batch is None:
            handler._error(404, f"No such Batch object: {bid}", "invalid_request_error")
            return
        if batch["status"] not in ("validating", "in_progress"):
            handler._error(409, f"Cannot cancel a batch with status '{batch['status']}'.", "invalid_request_error")
            return
        batch["status"] = "cancelling"
        st.polls[bid] = 0
        st.cancelled += 1
        body = orjson.dumps(batch)
    handler._send(200, body)


def _finish(srv: Any, st: SimBatchState, batch: dict[str, Any], *, cancel: bool = False) -> None:
    f = st.faults
    if f.fail and not cancel:
        batch["status"] = "failed"
        batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": "sim: batch failed",
                                                       "line": None}]}
        return
    lines = st.files[batch["input_file_id"]].splitlines()
    out: list[dict[str, Any]] = []
    err: list[dict[str, Any]] = []
    every = round(1 / f.partial) if f.partial > 0 else 0
    stop_at = f.cancel_answers if cancel else f.expire_after
    for n, line in enumerate(lines):
        if stop_at is not None and n >= stop_at:
            break
        req = orjson.loads(line)
        cid = req["custom_id"]
        if every and n % every == 0:
            err.append({"id": f"r{n}", "custom_id": cid, "response": {"status_code": 500, "body": {
                "error": {"message": "sim: internal error", "type": "server_error"}}}, "error": None})
            continue
        status, body, _ = srv.answer(req["body"], transport=False)
        row = {"id": f"r{n}", "custom_id": cid, "response": {"status_code": status, "request_id": f"q{n}",
                                                            "body": body}, "error": None}
        (out if status == 200 else err).append(row)
    for rows, key in ((out, "output_file_id"), (err, "error_file_id")):
        if rows:
            fid = f"file-sim{next(st.ids)}"
            st.files[fid] = b"".join(orjson.dumps(r) + b"\n" for r in rows)
            batch[key] = fid
    if cancel:
        batch["status"] = "cancelled"
    else:
        batch["status"] = "expired" if f.expire_after is not None and f.expire_after < len(lines) else "completed"
    batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(err)}
