"""Collector throughput against the local simulated endpoint (no artificial latency).

Runs, on the same items and the same server (started in a separate process so
that it does not share the collector's interpreter lock):

1. a plain sequential loop of ``requests.post`` (the straightforward approach);
2. the same loop over one keep-alive ``requests.Session``;
3. the collector at concurrency 1 (same work plus retries policy, archive
   records with flush + fsync, bookkeeping): its extra time per request is the
   collector's per-request overhead;
4. the collector at concurrency 36.

Checks every approach got one valid completion per request, prints requests/s
and the ratio. Usage: ``python bench/bench_collect.py [--small]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import orjson
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replicate.collect.archive import read_archive  # noqa: E402
from replicate.collect.config import load_config, load_items  # noqa: E402
from replicate.collect.runner import collect  # noqa: E402

FIX = ROOT / "fixtures" / "collect"
ENV = "REPLICATE_BENCH_KEY"


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "replicate", "sim-server", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("sim-server did not start")
    return proc, url


def sequential(url: str, items, models, k: int, *, session: bool = False) -> tuple[float, int]:
    post = requests.Session().post if session else requests.post
    t0 = time.perf_counter()
    ok = 0
    for model in models:
        for it in items:
            for _ in range(k):
                r = post(url + "/chat/completions", timeout=30,
                                  json={"model": model, "messages": [dict(m) for m in it.messages]},
                                  headers={"Authorization": "Bearer bench"})
                ok += r.status_code == 200 and bool(orjson.loads(r.content)["choices"])
    return time.perf_counter() - t0, ok


def run_collector(url: str, items, models, k: int, concurrency: int, out: Path) -> tuple[float, int]:
    cfg = load_config(FIX / "config.toml").with_overrides(base_url=url, api_key_env=ENV, models=models, k=k,
                                                          concurrency=concurrency)
    cfg = replace(cfg, timeout=30.0)
    t0 = time.perf_counter()
    s = collect(cfg, items, out)
    dt = time.perf_counter() - t0
    recs = read_archive(out).records
    ok = sum(1 for _, r in recs if r["error_kind"] is None and (r["text"] or r["refusal"]))
    assert s.trials_recorded == len(recs)
    return dt, ok


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="200 requests instead of 2,000")
    args = ap.parse_args(argv)
    os.environ.setdefault(ENV, "bench")
    items = load_items(FIX / "items.jsonl")
    models = ["sim-a", "sim-b"]
    k = 5 if args.small else 50
    n = len(items) * len(models) * k
    proc, url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t_seq, ok_seq = sequential(url, items, models, k)
            t_ses, ok_ses = sequential(url, items, models, k, session=True)
            t_c1, ok_c1 = run_collector(url, items, models, k, 1, Path(tmp) / "c1.jsonl")
            t_c36, ok_c36 = run_collector(url, items, models, k, 36, Path(tmp) / "c36.jsonl")
    finally:
        proc.terminate()
        proc.wait()
    assert ok_seq == ok_ses == ok_c1 == ok_c36 == n, (ok_seq, ok_ses, ok_c1, ok_c36, n)
    res = {
        "requests": n,
        "sequential_requests_post_per_s": n / t_seq,
        "sequential_session_per_s": n / t_ses,
        "collector_c1_per_s": n / t_c1,
        "collector_c36_per_s": n / t_c36,
        "overhead_ms_per_request_c1": 1000 * (t_c1 - t_ses) / n,
        "ratio_c36_vs_sequential": t_seq / t_c36,
    }
    print(f"{n} requests ({len(items)} items x {len(models)} models x K={k}), sim server in its own process")
    print(f"  sequential requests.post loop : {res['sequential_requests_post_per_s']:8.1f} req/s "
          f"({1000 * t_seq / n:.2f} ms/request)")
    print(f"  sequential Session().post loop: {res['sequential_session_per_s']:8.1f} req/s "
          f"({1000 * t_ses / n:.2f} ms/request, keep-alive)")
    print(f"  collector, concurrency 1      : {res['collector_c1_per_s']:8.1f} req/s "
          f"({1000 * t_c1 / n:.2f} ms/request; overhead vs the keep-alive loop "
          f"{res['overhead_ms_per_request_c1']:+.2f} ms: retry policy, record, flush + fsync)")
    print(f"  collector, concurrency 36     : {res['collector_c36_per_s']:8.1f} req/s "
          f"(x{res['ratio_c36_vs_sequential']:.2f} the sequential loop)")
    print("  all four got one valid completion per request: ok")
    return res


if __name__ == "__main__":
    main()
