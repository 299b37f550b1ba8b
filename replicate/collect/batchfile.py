"""Batch files for servers driven by hand: request JSONL out, result JSONL in.

``collect --export-batch FILE`` writes one line per missing (model, item,
trial), in the OpenAI Batch API input format that vLLM's ``run-batch`` also
reads::

    {"custom_id": "MODEL|ITEM|TRIAL", "method": "POST", "url": "/v1/chat/completions",
     "body": {"model": ..., "messages": [...], ...[params]}}

``collect --import-batch FILE`` reads the result lines (``{"custom_id": ...,
"response": {"status_code": 200, "body": {...}}, "error": null}``) and appends
them to the archive like an online run would (same record fields, same
crash-safe writes, under the archive's lock). A result for a triple already
recorded is skipped and counted (unless it answers a trial recorded as an
API error, which it then supersedes); a line naming a triple the collection does
not ask for, or not in that format, is bad input naming the line. A non-200
response or an ``error`` becomes that trial's ``api_error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import orjson

from replicate.collect.archive import ArchiveLock, open_for_collection
from replicate.collect.config import CollectConfig, Item
from replicate.collect.plan import pending
from replicate.collect.response import Outcome, outcome_of
from replicate.command_input import json_lines, read_input
from replicate.errors import BadInput

CHAT_URL = "/v1/chat/completions"


def custom_id(model: str, item: str, trial: int) -> str:
    return f"{model}|{item}|{trial}"


def parse_custom_id(cid: str, models: Sequence[str]) -> tuple[str, str, int] | None:
    """(model, item, trial) of ``MODEL|ITEM|TRIAL``; the model is the longest configured one that fits."""
    head, sep, trial = cid.rpartition("|")
    if not sep or not (trial.isascii() and trial.isdigit()):  # int() refuses '²', which isdigit() takes
        return None
    for model in sorted(models, key=len, reverse=True):
        if head.startswith(model + "|") and len(head) > len(model) + 1:
            return model, head[len(model) + 1:], int(trial)
    return None


def request_entries(config: CollectConfig, items: Sequence[Item], done: frozenset | set = frozenset()
                    ) -> Iterator[tuple[str, bytes]]:
    """(custom_id, request line) per missing triple, phase by phase in the seeded order. Pure."""
    by_id = {it.id: it for it in items}
    for model in config.models:
        for item_id, trial in pending(items, model, k=config.k, seed=config.seed, done=done):
            body = {"model": model, "messages": [dict(m) for m in by_id[item_id].messages],
                    **config.params_for(trial)}
            cid = custom_id(model, item_id, trial)
            yield cid, orjson.dumps({"custom_id": cid, "method": "POST", "url": CHAT_URL, "body": body}) + b"\n"


def request_lines(config: CollectConfig, items: Sequence[Item], done: frozenset | set = frozenset()
                  ) -> Iterator[bytes]:
    """One request line per missing triple, phase by phase in the seeded order. Pure."""
    return (line for _, line in request_entries(config, items, done))


@dataclass(frozen=True, slots=True)
class BatchFileReport:
    path: str
    lines: int
    recorded: int = 0
    api_errors: int = 0
    already_recorded: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "lines": self.lines, "recorded": self.recorded, "api_errors": self.api_errors,
                "already_recorded": self.already_recorded}


def export_batch(config: CollectConfig, items: Sequence[Item], archive: Path, out: Path, *,
                 force: bool = False) -> BatchFileReport:
    """Write the request JSONL for every triple the archive (if any) is missing; an existing ``out`` only
    when it is an earlier export's or with ``force`` (:class:`replicate.outfile.Outputs`)."""
    from replicate.collect.archive import scan_archive
    from replicate.outfile import Outputs

    outputs = Outputs("collect", "export_batch", force=force)
    outputs.check(out)
    done = scan_archive(archive).done if archive.exists() and archive.stat().st_size else frozenset()
    lines = list(request_lines(config, items, done))
    outputs.write(out, lines)
    return BatchFileReport(str(out), len(lines))


def result_outcome(obj: Any, path: Path, lineno: int) -> Outcome:
    """The outcome of one batch result line."""
    resp = obj.get("response") if isinstance(obj, dict) else None
    err = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(resp, dict) and resp.get("status_code") == 200 and isinstance(resp.get("body"), dict):
        body = resp["body"]
        try:
            body["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            return Outcome(None, None, None, {}, 0.0, 1, {}, "invalid_json",
                           "the batch result's body is not a valid completion")
        return outcome_of(body, latency_s=0.0, attempts=1, retries={})
    if isinstance(resp, dict) and isinstance(resp.get("status_code"), int):
        body = resp.get("body")
        e = body.get("error") if isinstance(body, dict) else None
        msg = str(e.get("message")) if isinstance(e, dict) else orjson.dumps(body).decode()[:300]
        return Outcome(None, None, None, {}, 0.0, 1, {}, f"http_{resp['status_code']}",
                       f"HTTP {resp['status_code']}: {msg}"[:500], request_fault=True)
    if isinstance(err, dict):
        return Outcome(None, None, None, {}, 0.0, 1, {}, "batch_error",
                       f"{err.get('code')}: {err.get('message')}"[:500])
    raise BadInput("a batch result line needs 'response' with 'status_code' (and 'body'), or 'error'",
                   path=path, line=lineno)


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


def import_batch(config: CollectConfig, items: Sequence[Item], archive: Path, results: Path) -> BatchFileReport:
    """Append the results in ``results`` to ``archive`` (created if absent), under its lock."""
    from replicate.collect.runner import _record

    ids = {it.id for it in items}
    raw = read_input(results, what="batch results file")
    with ArchiveLock(archive):
        opened = open_for_collection(archive, config, items)
        done, was_error = set(opened.done), set(opened.errors)
        records, seen, skipped, errors, lines = [], set(), 0, 0, 0
        for lineno, obj in json_lines(raw, path=results):
            lines += 1
            cid = obj.get("custom_id") if isinstance(obj, dict) else None
            triple = parse_custom_id(cid, config.models) if isinstance(cid, str) else None
            if triple is None or triple[1] not in ids or triple[2] >= config.k:
                raise BadInput(f"custom_id {cid!r} names no (model|item|trial) of this collection", path=results,
                               line=lineno)
            outcome = result_outcome(obj, results, lineno)
            # a recorded api_error is superseded by a result that is not one; anything else is a repeat
            if triple in seen or (triple in done and (triple not in was_error or outcome.error_kind is not None)):
                skipped += 1
                continue
            seen.add(triple)
            errors += outcome.error_kind is not None
            seed = config.params_for(triple[2])["seed"] if config.seed_per_trial else None
            records.append(_record(*triple, config.params_hash, outcome, seed))
        try:
            opened.writer.append_many(records)
        finally:
            opened.writer.close()
    return BatchFileReport(str(results), lines, len(records), errors, skipped)
