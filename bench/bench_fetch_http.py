"""Downloading a release's files over http: a plain loop versus ``replicate fetch``.

A GitHub-shaped server on 127.0.0.1 (the one the tests use, backed by a real
repository) answers every raw-file request after a fixed delay, standing in for
network latency. On the same repository, in the same run:

1. straightforward: one ``requests.get`` per file, in a loop, written to disk
   (no verification, no manifest);
2. ``replicate.fetch.fetch(..., via http)`` with one download at a time
   (``jobs=1``): the same plus tree listing, blob-id verification, manifest;
3. the same with ``jobs=8`` (the default).

Checks all three wrote identical bytes and prints the times and ratios.
Usage: ``python bench/bench_fetch_http.py [--small]``.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fetch_support.server import FakeGitHub  # noqa: E402
from replicate.fetch import HttpSettings, fetch  # noqa: E402


def build(root: Path, n_files: int, seed: int = 0):
    import git

    rng = random.Random(seed)
    repo = git.Repo.init(root / "study", initial_branch="main")
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "bench")
        cw.set_value("user", "email", "bench@example.org")
        cw.set_value("commit", "gpgsign", "false")
    res = root / "study" / "results"
    res.mkdir()
    for j in range(n_files):
        rows = "".join(f'{{"qid": {q}, "label": {rng.randint(0, 3)}}}\n' for q in range(300))
        (res / f"run_{j:03d}.jsonl").write_text(rows)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "release")
    return repo


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.jsonl"))}


def run(work: Path, *, n_files: int, delay: float) -> dict:
    repo = build(work, n_files)
    gh = FakeGitHub(repo).start()
    try:
        gh.fail(r"/raw/", delay=delay, times=10**9)
        commit = repo.head.commit.hexsha
        paths = [f"results/run_{j:03d}.jsonl" for j in range(n_files)]

        t0 = time.perf_counter()
        plain = work / "plain"
        with requests.Session() as s:
            for p in paths:
                resp = s.get(f"{gh.raw}/org/study/{commit}/{p}", timeout=30)
                resp.raise_for_status()
                (plain / p).parent.mkdir(parents=True, exist_ok=True)
                (plain / p).write_bytes(resp.content)
        t_plain = time.perf_counter() - t0

        times = {}
        for jobs in (1, 8):
            settings = HttpSettings(api_url=gh.api, raw_url=gh.raw, jobs=jobs)
            t0 = time.perf_counter()
            r = fetch("org/study", include=["results/**"], dest=work / f"ours{jobs}", http=settings,
                      cache_dir=work / f"cache{jobs}")
            times[jobs] = time.perf_counter() - t0
            if len(r.written) != n_files or digests(work / f"ours{jobs}") != digests(plain):
                raise SystemExit("the approaches disagree")
    finally:
        gh.stop()
    return {"files": n_files, "delay": delay, "t_plain": t_plain, "t_jobs1": times[1], "t_jobs8": times[8]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a few files (seconds)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        r = run(Path(tmp), n_files=10 if args.small else 200, delay=0.02)
    print(f"{r['files']} files, {r['delay'] * 1000:.0f} ms per raw-file answer")
    print(f"plain requests.get loop   : {r['t_plain']:6.2f} s")
    print(f"replicate fetch, jobs=1   : {r['t_jobs1']:6.2f} s  (ratio plain/ours {r['t_plain'] / r['t_jobs1']:.2f}x)")
    print(f"replicate fetch, jobs=8   : {r['t_jobs8']:6.2f} s  (ratio plain/ours {r['t_plain'] / r['t_jobs8']:.2f}x)")


if __name__ == "__main__":
    main()
