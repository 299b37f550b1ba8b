"""Mending an archive that holds duplicate trials: ``replicate repair-archive`` against a plain whole-file script.

The archive is bench_archive's SYNTHETIC one (3 models x N items x K trials, a response of about 1 KB a
trial, 1% API errors of which a tenth are superseded by a later record), to which the trial records of
one model are appended a second time, as a second collector writing the same archive would leave them,
one of them with another reply. Fresh interpreters, interleaved in each round, each on its own copy of
the damaged archive (CPU is user + sys; peak memory each process's own VmHWM, bench/peak_rss.py):

- plain: read the whole file, ``bytes.splitlines``, ``orjson.loads`` every line, keep the first record of
  each (model, item, trial) in a dict (a later record of a trial first recorded as an API error replaces
  it), write the lines kept to a new file and rename it over the archive; print the lines dropped and
  the trials kept;
- ours: ``replicate repair-archive ARCHIVE -f json`` (a backup copy, the repaired file, and the archive
  read again to check it).

The two must agree: the repaired files byte for byte, the dropped lines and the trials kept.

Usage::

    python bench/bench_repair.py [--small] [--items N] [--k K] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_archive import MODELS, write_inputs  # noqa: E402  (the synthetic archive)
from bench_items import child  # noqa: E402  (a fresh interpreter's CPU, peak RSS and stdout)

ROOT = Path(__file__).resolve().parent.parent

PLAIN = r'''
import os, sys, orjson
path = sys.argv[1]
with open(path, "rb") as fh:
    data = fh.read()
end = data.rfind(b"\n") + 1
body, tail = data[:end], data[end:]
first, kept, dropped = {}, [], []
for n, line in enumerate(body.splitlines(keepends=True), 1):
    if not line.strip():
        kept.append(line)
        continue
    rec = orjson.loads(line)
    if rec.get("type") == "trial":
        key = (str(rec["model"]), str(rec["item"]), rec["trial"])
        earlier = first.get(key)
        if earlier is not None and not earlier.get("error_kind"):
            dropped.append(n)
            continue
        first[key] = rec
    kept.append(line)
with open(path + ".new", "wb") as fh:
    fh.write(b"".join(kept) + tail)
os.replace(path + ".new", path)
print(orjson.dumps({"dropped": dropped, "trials_kept": len(first)}).decode())
'''


def damaged_archive(top: Path, n_items: int, k: int) -> tuple[Path, int]:
    """bench_archive's archive with the trial records of its second model appended again (one changed)."""
    _, _, arch, n = write_inputs(top, n_items, k)
    model = f'"model":"{MODELS[1]}"'.encode()
    with arch.open("rb") as src:  # read before anything is appended
        lines = [line for line in src
                 if line.startswith(b'{"type":"trial"') and model in line and b'"error_kind":null' in line]
    lines[0] = lines[0].replace(b'"finish_reason":"stop"', b'"finish_reason":"length"')
    with arch.open("ab") as out:
        out.writelines(lines)
    return arch, len(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="CI size: 300 items, K = 10, one round")
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit-gb", type=float, default=4.5, help="address-space bound of every child (GiB)")
    a = ap.parse_args(argv)
    if a.small:
        a.items, a.k, a.rounds = 300, 10, 1
    ok = True
    res: dict[str, dict[str, list[float]]] = {"plain": {"cpu": [], "rss": []}, "ours": {"cpu": [], "rss": []}}
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        arch, again = damaged_archive(top, a.items, a.k)
        print(f"  archive: {arch.stat().st_size / 1e6:.0f} MB, {again:,} trial records appended again", flush=True)
        (top / "plain.py").write_text(PLAIN, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "REPLICATE_CACHE_DIR": str(top / "cache")}
        for _ in range(a.rounds):
            outs = {}
            for who in ("plain", "ours"):
                copy = top / f"{who}.jsonl"
                for old in top.glob(f"{who}.jsonl*"):
                    old.unlink()
                shutil.copyfile(arch, copy)
                cmd = [str(top / "plain.py"), str(copy)] if who == "plain" else \
                    ["-m", "replicate", "repair-archive", str(copy), "-f", "json"]
                cpu, rss, out = child(cmd, env, top, a.limit_gb)
                res[who]["cpu"].append(cpu)
                res[who]["rss"].append(rss)
                outs[who] = json.loads(out)
                print(f"    {who}: {cpu:.2f} s CPU, {rss:.0f} MB", flush=True)
            ours = outs["ours"]
            if [d["line"] for d in ours["dropped"]] != outs["plain"]["dropped"] or \
                    ours["trials_kept"] != outs["plain"]["trials_kept"] or len(ours["dropped"]) != again or \
                    (top / "ours.jsonl").read_bytes() != (top / "plain.jsonl").read_bytes():
                print("MISMATCH: the repaired archive or its report differs from the plain script's", file=sys.stderr)
                ok = False
    pc, pr = statistics.median(res["plain"]["cpu"]), max(res["plain"]["rss"])
    oc, orss = statistics.median(res["ours"]["cpu"]), max(res["ours"]["rss"])
    print(f"\nmedian CPU s (user + sys), peak RSS MB\n  plain {pc:7.2f} s {pr:7.0f} MB\n"
          f"  ours  {oc:7.2f} s {orss:7.0f} MB   CPU {oc / pc:5.2f}x   memory {orss / pr:5.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
