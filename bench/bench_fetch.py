"""Fetching a release's small result files out of a repository with large history.

A synthetic repository holds ``results/`` (small JSONL files, what an audit
needs) beside ``data/`` (large incompressible files rewritten in every commit,
like checkpoints or raw dumps). On the same repository, in the same run:

1. straightforward: ``git clone`` (full history, checkout) over file://, then
   copy ``results/`` out of the working tree;
2. the careful straightforward way: ``git clone --depth 1`` (no history, but
   every file of the last commit), then copy;
3. ours: ``replicate.fetch.fetch(url, include=["results/**"])``: bare partial
   clone (``--filter=blob:none``), only the selected blobs downloaded.

Checks both give byte-identical files, prints wall time and bytes stored on
disk for each and the ratios. Usage: ``python bench/bench_fetch.py [--small]``.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replicate.fetch import fetch  # noqa: E402


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a tiny repository (seconds)")
    args = ap.parse_args()
    size = dict(n_big=4, big_size=256 << 10, commits=2, n_small=5) if args.small else \
        dict(n_big=40, big_size=1 << 20, commits=4, n_small=20)
    with tempfile.TemporaryDirectory() as tmp:
        r = run(Path(tmp), **size)
    mib = 1 << 20
    print(f"repository: {r['files']} result files, {r['history_bytes'] / mib:.0f} MiB of large blobs in history")
    print(f"git clone + copy           : {r['t_plain']:7.2f} s  {r['bytes_plain'] / mib:8.2f} MiB on disk")
    print(f"git clone --depth 1 + copy : {r['t_shallow']:7.2f} s  {r['bytes_shallow'] / mib:8.2f} MiB on disk")
    print(f"replicate fetch            : {r['t_ours']:7.2f} s  {r['bytes_ours'] / mib:8.2f} MiB on disk")
    print(f"ratio full clone/ours   : time {r['t_plain'] / r['t_ours']:.1f}x, disk {r['bytes_plain'] / r['bytes_ours']:.0f}x")
    print(f"ratio shallow clone/ours: time {r['t_shallow'] / r['t_ours']:.1f}x, disk {r['bytes_shallow'] / r['bytes_ours']:.0f}x")


if __name__ == "__main__":
    main()
