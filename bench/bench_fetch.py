"""Two speed comparisons for ``replicate fetch``, each run on the same data in the same run.

**git** — fetching a release's small result files out of a repository with
large history. A synthetic repository holds ``results/`` (small JSONL files,
what an audit needs) beside ``data/`` (large incompressible files rewritten in
every commit). Compared: (1) ``git clone`` (full history, checkout) over
file:// then copying ``results/``; (2) ``git clone --depth 1`` then copying;
(3) ``fetch(url, include=["results/**"])``: bare partial clone
(``--filter=blob:none``), only the selected blobs downloaded. Prints wall time
and bytes stored on disk.

**http** — downloading many files from a GitHub-shaped server on 127.0.0.1
(the tests' fake server, backed by a real repository) that answers every
raw-file request after a fixed delay standing in for network latency.
Compared: (1) a plain loop of ``requests.get`` writing each file (no
verification, no manifest); (2) ``fetch`` over http with ``jobs=1``;
(3) with ``jobs=8`` (the default).

Both check that every approach wrote byte-identical files.
Usage: ``python bench/bench_fetch.py [--small] [--part git|http|all]``.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the fake GitHub server of the fetch tests

from replicate.fetch import HttpSettings, fetch  # noqa: E402


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def build_repo(root: Path, *, n_big: int, big_size: int, commits: int, n_small: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    repo = root / "study"
    (repo / "data").mkdir(parents=True)
    (repo / "results").mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    for k, v in {"user.name": "bench", "user.email": "bench@example.org", "commit.gpgsign": "false",
                 "uploadpack.allowFilter": "true", "uploadpack.allowAnySHA1InWant": "true"}.items():
        _git("config", k, v, cwd=repo)
    for c in range(commits):
        for i in range(n_big):
            (repo / "data" / f"blob_{i:03d}.bin").write_bytes(rng.randbytes(big_size))
        for j in range(n_small):
            rows = "".join(f'{{"qid": {q}, "label": {rng.randint(0, 3)}}}\n' for q in range(200))
            (repo / "results" / f"run_{j:02d}.jsonl").write_text(rows)
        _git("add", "-A", cwd=repo)
        _git("commit", "-q", "-m", f"release {c}", cwd=repo)
    return repo


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def run(work: Path, *, n_big: int, big_size: int, commits: int, n_small: int) -> dict:
    repo = build_repo(work, n_big=n_big, big_size=big_size, commits=commits, n_small=n_small)
    url = repo.as_uri()

    t0 = time.perf_counter()
    clone = work / "clone"
    subprocess.run(["git", "-c", "protocol.file.allow=always", "clone", "-q", url, str(clone)],
                   check=True, capture_output=True)
    plain_dest = work / "plain" / "results"
    shutil.copytree(clone / "results", plain_dest)
    t_plain = time.perf_counter() - t0
    bytes_plain = du(clone) + du(plain_dest)

    t0 = time.perf_counter()
    shallow = work / "shallow"
    subprocess.run(["git", "-c", "protocol.file.allow=always", "clone", "-q", "--depth", "1", url, str(shallow)],
                   check=True, capture_output=True)
    shallow_dest = work / "shallow_copy" / "results"
    shutil.copytree(shallow / "results", shallow_dest)
    t_shallow = time.perf_counter() - t0
    bytes_shallow = du(shallow) + du(shallow_dest)

    t0 = time.perf_counter()
    result = fetch(url, include=["results/**"], dest=work / "ours", cache_dir=work / "cache")
    t_ours = time.perf_counter() - t0
    bytes_ours = du(work / "cache") + du(work / "ours")

    ours = {k.removeprefix("results/"): v for k, v in hashes(work / "ours").items() if k.startswith("results/")}
    if ours != hashes(plain_dest) or ours != hashes(shallow_dest) or len(result.written) != n_small:
        raise SystemExit("the two approaches disagree")
    return {"files": n_small, "history_bytes": n_big * big_size * commits,
            "t_plain": t_plain, "t_shallow": t_shallow, "t_ours": t_ours,
            "bytes_plain": bytes_plain, "bytes_shallow": bytes_shallow, "bytes_ours": bytes_ours}


def build_http_repo(root: Path, n_files: int, seed: int = 0):
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


def run_http(work: Path, *, n_files: int, delay: float) -> dict:
    from support.server import FakeGitHub

    repo = build_http_repo(work, n_files)
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
    ap.add_argument("--small", action="store_true", help="tiny sizes (seconds)")
    ap.add_argument("--part", choices=["git", "http", "all"], default="all")
    args = ap.parse_args()
    mib = 1 << 20
    if args.part in ("git", "all"):
        size = dict(n_big=4, big_size=256 << 10, commits=2, n_small=5) if args.small else \
            dict(n_big=40, big_size=1 << 20, commits=4, n_small=20)
        with tempfile.TemporaryDirectory() as tmp:
            r = run(Path(tmp), **size)
        print(f"git: {r['files']} result files, {r['history_bytes'] / mib:.0f} MiB of large blobs in history")
        print(f"  git clone + copy           : {r['t_plain']:7.2f} s  {r['bytes_plain'] / mib:8.2f} MiB on disk")
        print(f"  git clone --depth 1 + copy : {r['t_shallow']:7.2f} s  {r['bytes_shallow'] / mib:8.2f} MiB on disk")
        print(f"  replicate fetch            : {r['t_ours']:7.2f} s  {r['bytes_ours'] / mib:8.2f} MiB on disk")
        print(f"  ratio full clone/ours   : time {r['t_plain'] / r['t_ours']:.1f}x, "
              f"disk {r['bytes_plain'] / r['bytes_ours']:.0f}x")
        print(f"  ratio shallow clone/ours: time {r['t_shallow'] / r['t_ours']:.1f}x, "
              f"disk {r['bytes_shallow'] / r['bytes_ours']:.0f}x")
    if args.part in ("http", "all"):
        with tempfile.TemporaryDirectory() as tmp:
            r = run_http(Path(tmp), n_files=10 if args.small else 200, delay=0.02)
        print(f"http: {r['files']} files, {r['delay'] * 1000:.0f} ms added to each raw-file answer")
        print(f"  plain requests.get loop : {r['t_plain']:6.2f} s")
        print(f"  replicate fetch, jobs=1 : {r['t_jobs1']:6.2f} s  (ratio plain/ours {r['t_plain'] / r['t_jobs1']:.2f}x)")
        print(f"  replicate fetch, jobs=8 : {r['t_jobs8']:6.2f} s  (ratio plain/ours {r['t_plain'] / r['t_jobs8']:.2f}x)")


if __name__ == "__main__":
    main()
