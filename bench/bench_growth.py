"""Benchmark: how the default uncertainty grows, against plain scripts run interleaved in the same run.

Two works at the sizes of issue 39 (SYNTHETIC releases, seeded):

- ``matrix`` over a release of R runs (R = 11, 22, 44 at about 10k items per
  run; ``--items 100k`` adds 44 runs at about 100k items), each in a fresh
  interpreter with no cache (reading, parsing, figures, JSON):
  ``replicate --no-cache matrix`` with the default intervals, the same with
  ``--replicates 0``, and a plain script (orjson per line, the parser per
  reply, the four cells of every ordered pair by numpy products of the runs'
  right/wrong rows: what a careful analyst writes, no intervals);
- ``parse`` of one judge file of 1.4 M short records over 87,500 queries
  (``--small``: 20k records): ``replicate --no-cache parse`` with its default
  interval of the unparsed share, against the plain streaming loop (orjson per
  line, the parser per reply, a dict of labels).

Each row of a size is timed in turn within one round (``--rounds``), so a
busy spell on the shared machine falls on every approach alike. CPU time is
user + sys of the process and its workers; peak memory is each process's own
VmHWM (bench/peak_rss.py) or, when larger, that of a child it forked (the
difficulty refits run in one). Printed: each approach's median CPU and peak
memory, the ratios default / ``--replicates 0``, default / plain and
``--replicates 0`` / plain, and growth exponents in runs (slope of log CPU
against log runs between successive sizes, and against log pairs).

Checks (exit 1 when one fails): the four cells of every pair are the same in
the default run, the ``--replicates 0`` run and the plain script; ``parse``
and the loop count the same labels.

    python bench/bench_growth.py [--small] [--rounds N] [--items 100k] [--no-parse] [--no-matrix]

Keep it under the machine's memory: run it under ``ulimit -v`` (the default
of 44 runs x 100k items took 16 GB before issue 39).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judge import PARSER  # noqa: E402
from bench_memory import ANSWERS, STREAM, label_counts, plain_counts  # noqa: E402
from bench_process import cells_of_matrix  # noqa: E402
from bench_scale import PEAK, prepare  # noqa: E402

#: runs at about 10k items per run (scale 0.5 of the 22-run release's 20,646), item factor.
FULL = ((11, 1), (22, 1), (44, 1))
BIG = (44, 10)
SMALL = ((4, 1), (6, 1), (8, 1))
SCALE, SMALL_SCALE = 0.5, 0.02
PARSE_RECORDS, SMALL_PARSE_RECORDS = 1_400_000, 20_000
PER_QUERY = 16  # 1.4 M records: 87,500 queries

PLAIN_MATRIX = r'''
import sys, tomllib
import numpy as np, orjson
from pathlib import Path
from replicate.parsing import PARSERS
toml = Path(sys.argv[1]); parser = PARSERS.get(sys.argv[2])
runs = tomllib.loads(toml.read_text(encoding="utf-8"))["runs"]
labels, gold = {}, {}
for name, files in runs.items():
    lab = {}
    for f in files:
        with open(toml.parent / f, "rb") as fh:
            for line in fh:
                if line.strip():
                    r = orjson.loads(line)
                    key = (str(r["query_id"]), str(r["corpus_id"]))
                    gold[key] = int(r["original_qrel_score"])
                    lab[key] = parser(r["model_output"] if "model_output" in r else r["gemini_output"])
    labels[name] = lab
names = list(labels)
keys = sorted(set.intersection(*(set(v) for v in labels.values())))
g = np.array([gold[k] for k in keys])
L = np.array([[-1 if labels[n][k] is None else labels[n][k] for k in keys] for n in names])
valid = (L >= 0).astype(np.float64)
right = ((L == g) & (L >= 0)).astype(np.float64)
wrong = valid - right
n = valid @ valid.T; both = right @ right.T; only_old = right @ wrong.T
out = {}
for i, a in enumerate(names):
    for j, b in enumerate(names):
        if i != j:
            cells = [both[i, j], only_old[i, j], only_old[j, i], n[i, j] - both[i, j] - only_old[i, j] - only_old[j, i]]
            out[a + "\t" + b] = [int(round(c)) for c in cells]
print(orjson.dumps(out).decode())
'''


def child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run the Python command ``cmd``: CPU seconds (user + sys, its workers included), the peak resident MB of
    any process of it (its own VmHWM and the peak of the children it waited for, both written by
    bench/peak_rss.py: the difficulty refits run in a forked child) and its stdout. Not ``ru_maxrss`` of
    the command itself: it starts from this benchmark's own peak, which grows over the rounds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".kib") as peak, tempfile.NamedTemporaryFile(suffix=".kib") as kids:
        p = subprocess.Popen([sys.executable, str(PEAK), *cmd[1:]], stdout=out, stderr=err,
                             env={**env, "PEAK_RSS_FILE": peak.name, "PEAK_RSS_CHILDREN_FILE": kids.name})
        _, status, usage = os.wait4(p.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd[:6])} ... failed:\n{err.read().decode()[-2000:]}")
        kib = max(int(Path(f.name).read_text(encoding="ascii") or 0) for f in (peak, kids))
        return usage.ru_utime + usage.ru_stime, kib / 1024, out.read().decode()


def write_parse_file(path: Path, records: int) -> None:
    """A flat judge JSONL file of short replies (about 180 bytes a record), ``PER_QUERY`` items per query."""
    rng = random.Random(0)
    with path.open("wb") as f:
        for i in range(records):
            f.write(orjson.dumps({"query_id": str(19335 + i // PER_QUERY), "corpus_id": str(1000000 + i),
                                  "original_qrel_score": rng.randrange(4),
                                  "model_output": "Relevance: " + rng.choice(ANSWERS)}) + b"\n")


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def run_matrix(sizes, top: Path, rounds: int, env: dict[str, str], before: Path | None) -> tuple[list[dict], bool]:
    rows, ok = [], True
    for runs, factor in sizes:
        # generated in a child: this process stays small (a child's ru_maxrss starts from its parent's)
        made = prepare(top, [(runs, factor)], scale=SMALL_SCALE if runs < 10 else SCALE)[0]
        root, toml, items, mb = made.root, made.toml, made.items, made.mb
        plain = root / "plain.py"
        plain.write_text(PLAIN_MATRIX, encoding="utf-8")
        rows.append({"runs": runs, "items": items, "mb": mb, "toml": toml, "plain": plain,
                     "cpu": {}, "rss": {}, "cells": {}})
    ours = [sys.executable, "-m", "replicate", "--no-cache", "matrix", "--runs"]
    for _ in range(rounds):
        for z in rows:
            cmds = {
                "default": [*ours, str(z["toml"]), "-p", PARSER, "-f", "json"],
                "replicates 0": [*ours, str(z["toml"]), "-p", PARSER, "-f", "json", "--replicates", "0"],
                "plain": [sys.executable, str(z["plain"]), str(z["toml"]), PARSER],
            }
            if before is not None and z["items"] < 50_000:
                cmds["default, before"] = cmds["default"]
            for name, cmd in cmds.items():
                cpu, rss, out = child(cmd, {**env, "PYTHONPATH": str(before)} if name.endswith("before") else env)
                z["cpu"].setdefault(name, []).append(cpu)
                z["rss"].setdefault(name, []).append(rss)
                z["cells"][name] = json.loads(out) if name == "plain" else cells_of_matrix(out)
                print(f"    {z['runs']} runs, {name}: {cpu:.2f} s CPU, {rss:.0f} MB", flush=True)
            if any(c != z["cells"]["plain"] for c in z["cells"].values()):
                print(f"MISMATCH ({z['runs']} runs): the four cells differ between approaches", file=sys.stderr)
                ok = False
    return rows, ok


def report_matrix(rows: list[dict]) -> None:
    names = tuple(rows[0]["cpu"])
    print("\nmatrix, whole process: median CPU s (user + sys, workers included), peak RSS MB")
    print(f"  {'runs':>4} {'items':>8} " + "".join(f"{n:>22}" for n in names)
          + "   default/r0 CPU, RSS   default/plain CPU, RSS   r0/plain CPU")
    for z in rows:
        c = {n: median(z["cpu"][n]) for n in names if n in z["cpu"]}
        m = {n: max(z["rss"][n]) for n in names if n in z["rss"]}
        cells = "".join(f"{c[n]:>12.2f} {m[n]:>7.0f} MB" if n in c else f"{'-':>22}" for n in names)
        print(f"  {z['runs']:>4} {z['items']:>8,} {cells}      {c['default'] / c['replicates 0']:5.2f}x {m['default'] / m['replicates 0']:5.2f}x"
              f"          {c['default'] / c['plain']:5.2f}x {m['default'] / m['plain']:5.2f}x           "
              f"{c['replicates 0'] / c['plain']:5.2f}x")
    same = [z for z in rows if z["items"] == rows[0]["items"]]
    if len(same) >= 2:
        print("\ngrowth in runs at the same items (CPU ~ runs^e; pairs = runs (runs - 1))")
        for a, b in zip(same, same[1:]):
            r = math.log(b["runs"] / a["runs"])
            p = math.log(b["runs"] * (b["runs"] - 1) / (a["runs"] * (a["runs"] - 1)))
            parts = []
            for n in names:
                if n not in a["cpu"] or n not in b["cpu"]:
                    continue
                g = math.log(median(b["cpu"][n]) / median(a["cpu"][n]))
                parts.append(f"{n} runs^{g / r:.2f} (pairs^{g / p:.2f})")
            print(f"  {a['runs']} -> {b['runs']} runs: " + ", ".join(parts))


def run_parse(top: Path, records: int, rounds: int, env: dict[str, str]) -> tuple[dict, bool]:
    path = top / "judge.jsonl"
    write_parse_file(path, records)
    print(f"  parse file: {path.stat().st_size / 1e6:.0f} MB, {records:,} records, {records // PER_QUERY:,} queries",
          flush=True)
    loop = top / "stream.py"
    loop.write_text(STREAM, encoding="utf-8")
    cmds = {
        "replicate parse": [sys.executable, "-m", "replicate", "--no-cache", "parse", str(path), "-p", PARSER],
        "plain loop": [sys.executable, str(loop), str(path)],
    }
    res: dict = {n: {"cpu": [], "rss": []} for n in cmds}
    ok = True
    for _ in range(rounds):
        counts = {}
        for name, cmd in cmds.items():
            cpu, rss, out = child(cmd, env)
            res[name]["cpu"].append(cpu)
            res[name]["rss"].append(rss)
            counts[name] = label_counts(out) if name == "replicate parse" else plain_counts(out)
            print(f"    parse, {name}: {cpu:.2f} s CPU, {rss:.0f} MB", flush=True)
        if counts["replicate parse"] != counts["plain loop"]:
            print(f"MISMATCH: parse counts {counts['replicate parse']}, the loop {counts['plain loop']}", file=sys.stderr)
            ok = False
    return res, ok


def report_parse(res: dict) -> None:
    ours, loop = res["replicate parse"], res["plain loop"]
    c, m = median(ours["cpu"]) / median(loop["cpu"]), max(ours["rss"]) / max(loop["rss"])
    print("\nparse, whole process: median CPU s, peak RSS MB")
    for name, r in res.items():
        print(f"  {name:16} {median(r['cpu']):8.2f} {max(r['rss']):8.0f} MB")
    print(f"  replicate parse / plain loop: CPU {c:.2f}x, peak memory {m:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="4, 6 and 8 runs of about 400 items, 20k parse records (CI)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--items", choices=("10k", "100k"), default="10k", help="100k: also 44 runs x about 100k items")
    ap.add_argument("--no-parse", action="store_true")
    ap.add_argument("--no-matrix", action="store_true")
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    ap.add_argument("--before", type=Path, help="a folder holding an earlier replicate package: its default matrix "
                    "is timed too, as 'default, before' (never at 100k items: it took 16 GB)")
    a = ap.parse_args(argv)
    top = a.keep or Path(tempfile.mkdtemp(prefix="bench-growth-"))
    top.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "REPLICATE_CACHE_DIR"}
    env["REPLICATE_CACHE_DIR"] = str(top / "cache")  # --no-cache: nothing is kept; no user cache is touched
    ok = True
    t = time.perf_counter()
    try:
        if not a.no_matrix:
            sizes = SMALL if a.small else FULL + ((BIG,) if a.items == "100k" else ())
            rows, good = run_matrix(sizes, top, a.rounds, env, a.before)
            ok &= good
            report_matrix(rows)
        if not a.no_parse:
            res, good = run_parse(top, SMALL_PARSE_RECORDS if a.small else PARSE_RECORDS, a.rounds, env)
            ok &= good
            report_parse(res)
    finally:
        if a.keep is None:
            shutil.rmtree(top, ignore_errors=True)
    print(f"\n{time.perf_counter() - t:.0f} s in all; {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
