"""Batch mode's own overhead for a 135,000-request study: writing the request lines, splitting them into
batches, and parsing the result lines into archive records (written with one fsync per batch).

No network: the result lines a provider would return are built beforehand (outside the timing) from the
request lines. Beside it, the straightforward loop: ``json.dumps`` per request and ``f.write`` per line,
then ``json.loads`` per result line, a record dict and ``json.dumps`` + ``f.write`` per record.
Both produce the same triples; the ratio is printed. Usage: ``python bench/bench_batch.py [--small]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from types import MappingProxyType

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replicate.collect.archive import ArchiveWriter  # noqa: E402
from replicate.collect.batch import split_lines  # noqa: E402
from replicate.collect.batchfile import records_from_results, request_lines  # noqa: E402
from replicate.collect.config import BatchSettings, CollectConfig, Item  # noqa: E402


def study(n_items: int, k: int) -> tuple[CollectConfig, list[Item]]:
    items = [Item(id=f"q{i:05d}", benchmark="b", reference=str(i), scorer="final-answer-line@1",
                  messages=(MappingProxyType({"role": "user", "content": f"Question {i}: what is {i} + {i}? "
                                              "End with a line 'Final answer: N'."}),)) for i in range(n_items)]
    cfg = CollectConfig(base_url="http://127.0.0.1:1/v1", api_key_env="K", models=("model-a", "model-b"), k=k,
                        params=MappingProxyType({"max_completion_tokens": 2048}), batch=BatchSettings(enabled=True))
    return cfg, items


def fake_results(req_lines: list[bytes]) -> bytes:
    out = []
    for n, line in enumerate(req_lines):
        r = orjson.loads(line)
        body = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1_760_000_000, "model": "m-2026",
                "system_fingerprint": "fp_1", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": "Some working.\nFinal answer: 42", "refusal": None}}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 12,
                          "completion_tokens_details": {"reasoning_tokens": 0}}}
        out.append(orjson.dumps({"id": f"r{n}", "custom_id": r["custom_id"],
                                 "response": {"status_code": 200, "body": body}, "error": None}))
    return b"\n".join(out) + b"\n"


def ours(cfg: CollectConfig, items: list[Item], results: bytes, tmp: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    chunks = split_lines(request_lines(cfg, items), max_lines=cfg.batch.max_lines, max_bytes=cfg.batch.max_bytes)
    for n, chunk in enumerate(chunks):
        (tmp / f"req-{n}.jsonl").write_bytes(b"".join(chunk))
    w = ArchiveWriter(tmp / "ours.jsonl")
    recs, _ = records_from_results(results, cfg, set())
    w.append_many(recs)
    w.close()
    return time.perf_counter() - t0, len(recs)


def straightforward(cfg: CollectConfig, items: list[Item], results: bytes, tmp: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    with open(tmp / "plain-req.jsonl", "w") as fh:
        for model in cfg.models:
            for it in items:
                for t in range(cfg.k):
                    body = {"model": model, "messages": [dict(m) for m in it.messages], **cfg.params}
                    fh.write(json.dumps({"custom_id": f"{model}|{it.id}|{t}", "method": "POST",
                                         "url": "/v1/chat/completions", "body": body}) + "\n")
    n = 0
    with open(tmp / "plain.jsonl", "w") as fh:
        for line in results.decode().splitlines():
            r = json.loads(line)
            model, item, trial = r["custom_id"].rsplit("|", 2)
            body = r["response"]["body"]
            msg = body["choices"][0]["message"]
            fh.write(json.dumps({"type": "trial", "model": model, "item": item, "trial": int(trial),
                                 "text": msg["content"], "finish_reason": body["choices"][0]["finish_reason"],
                                 "usage": body["usage"], "response_model": body["model"]}) + "\n")
            n += 1
    return time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="1,350 requests instead of 135,000")
    args = ap.parse_args()
    n_items, k = (135, 5) if args.small else (1350, 50)
    cfg, items = study(n_items, k)
    total = len(cfg.models) * n_items * k
    results = fake_results(list(request_lines(cfg, items)))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        t_plain, n_plain = straightforward(cfg, items, results, tmp)
        t_ours, n_ours = ours(cfg, items, results, tmp)
    assert n_plain == n_ours == total, (n_plain, n_ours, total)
    print(f"{total} requests ({len(cfg.models)} models x {n_items} items x K={k})")
    print(f"straightforward loop (json, one write per line): {t_plain:.2f} s")
    print(f"batch mode overhead (write, split, parse, archive): {t_ours:.2f} s")
    print(f"ratio (straightforward / ours): {t_plain / t_ours:.2f}x")


if __name__ == "__main__":
    main()
