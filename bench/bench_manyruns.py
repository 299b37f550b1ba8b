"""Benchmark: how many runs fit in memory: peak RSS and CPU of ``matrix`` and of the load alone as runs grow.

Issue 39's last item ("out-of-core only through an existing engine"): does a release of hundreds or
thousands of runs fit, and if not, is it the label table (runs x items codes and keys) or the pairs
(quadratic in runs) that fills the memory? SYNTHETIC releases (``bench_scale.generate``, seeded) of R runs
at about 10k items per run (``--runs``), and optionally R runs at about 100k items (``--big``). Each
command a fresh interpreter with no cache, its peak memory its own VmHWM or a forked child's
(``bench/peak_rss.py``), interleaved in one round per size:

- ``default``: ``replicate --no-cache matrix -f json`` with the default intervals;
- ``replicates 0``: the same with ``--replicates 0`` (``--r0-runs``: sizes run with it only);
- ``load``: the load alone, as the command does it (``load_runs`` with ``--jobs auto`` and the
  parser, then ``Loaded.labelled``): the label table, no pairs;
- ``plain``: bench_growth's plain script (orjson per line, the parser per reply, every pair's four cells
  by numpy products; no intervals).

Then a model of each command's peak, fitted by non-negative least squares over the sizes:
``peak = start + b * runs * items + p * pairs + c * runs * pairs`` (pairs = runs (runs - 1); ``start`` the
command's peak on a 2-run release of about 400 items; ``c``: what grows as runs^3, the difficulty
baseline's counts of every edge over the other runs), and the largest release it predicts fits in 8, 16
and 32 GB at 10k and 100k items. Each size's measured / fitted peak is printed: a peak that grows faster
than the model shows there. ``--results FILE`` keeps the measurements; ``--report FILE`` prints their
report again.

Checks (exit 1 when one fails): the four cells of every pair are the same in every matrix run and the
plain script; the load labels every item of every run.

    python bench/bench_manyruns.py [--small] [--runs 44,88,176] [--r0-runs 352] [--big 88] [--keep DIR] [--results FILE]

Run it under ``ulimit -v`` and ``nice``: at 176 runs the default run takes minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_growth import PLAIN_MATRIX, SCALE, SMALL_SCALE, child  # noqa: E402
from bench_judge import PARSER  # noqa: E402
from bench_process import cells_of_matrix  # noqa: E402
from bench_scale import prepare  # noqa: E402

LOAD = r'''
import sys, json
from pathlib import Path
from replicate.judge.api import load_runs
from replicate.judge.select import runs_from_toml
loaded = load_runs(runs_from_toml(Path(sys.argv[1])), jobs="auto", parsers=(sys.argv[2],))
print(json.dumps({r.name: len(r) for r in loaded.labelled(sys.argv[2])}))
'''

#: the release whose peak is taken as each command's fixed start-up: 2 runs at bench_growth's small scale
START = (2, 1)
SMALL_RUNS, SMALL_R0, SMALL_BIG = (4, 8), (), 4
GB = 1e9


def sizes_of(a: argparse.Namespace) -> list[tuple[int, int, tuple[str, ...]]]:
    """(runs, item factor, commands) of every size, smallest first."""
    every = ("default", "replicates 0", "load", "plain")
    no_default = ("replicates 0", "load", "plain")
    out = [(r, 1, every) for r in a.runs] + [(r, 1, no_default) for r in a.r0_runs]
    if a.big:
        out.append((a.big, 10, no_default))
    return sorted(out)


def commands(z: dict, which: tuple[str, ...]) -> dict[str, list[str]]:
    ours = [sys.executable, "-m", "replicate", "--no-cache", "matrix", "--runs", str(z["toml"]), "-p", PARSER, "-f", "json"]
    every = {
        "default": ours,
        "replicates 0": [*ours, "--replicates", "0"],
        "load": [sys.executable, str(z["root"] / "load.py"), str(z["toml"]), PARSER],
        "plain": [sys.executable, str(z["root"] / "plain.py"), str(z["toml"]), PARSER],
    }
    return {n: every[n] for n in which}


def measure(z: dict, which: tuple[str, ...], env: dict[str, str]) -> bool:
    """Run every command of ``which`` on the release ``z`` once, recording CPU s and peak MB; False on a mismatch."""
    ok, cells = True, {}
    for name, cmd in commands(z, which).items():
        try:
            cpu, rss, out = child(cmd, env)
        except SystemExit as failed:  # out of memory under ulimit -v: said, and left out of the fit
            print(f"    {z['runs']} runs x {z['items']:,}, {name}: FAILED {str(failed)[-300:]}", flush=True)
            ok = False
            continue
        z["cpu"][name], z["rss"][name] = cpu, rss
        print(f"    {z['runs']} runs x {z['items']:,}, {name}: {cpu:.2f} s CPU, {rss:.0f} MB", flush=True)
        if name == "load":
            lengths = json.loads(out)
            if len(lengths) != z["runs"] or any(n != z["items"] for n in lengths.values()):
                print(f"MISMATCH ({z['runs']} runs): the load labelled {sorted(set(lengths.values()))} items "
                      f"a run over {len(lengths)} runs, not {z['items']} over {z['runs']}", file=sys.stderr)
                ok = False
        else:
            cells[name] = json.loads(out) if name == "plain" else cells_of_matrix(out)
        del out
    if "plain" in cells and any(c != cells["plain"] for c in cells.values()):
        print(f"MISMATCH ({z['runs']} runs): the four cells differ between approaches", file=sys.stderr)
        ok = False
    return ok


def _terms(z: dict) -> list[float]:
    """The model's terms of a size: runs x items, pairs, runs x pairs."""
    r, pairs = z["runs"], z["runs"] * (z["runs"] - 1)
    return [r * z["items"], pairs, r * pairs]


def fit(rows: list[dict], name: str, start: float, b: float | None = None) -> tuple[list[float], list[float]] | None:
    """MB per (run x item), per pair and per (run x pair) of ``name``'s peak above ``start`` (non-negative least
    squares; with ``b`` given, the first is fixed to it), and each size's measured / fitted peak."""
    from scipy.optimize import nnls

    pts = [z for z in rows if name in z["rss"]]
    if len(pts) < 2:
        return None
    x = np.array([_terms(z) for z in pts], dtype=float)
    y = np.array([z["rss"][name] - start for z in pts])
    if name == "load":  # no pairs in a load
        coef = [float(nnls(x[:, :1], y)[0][0]), 0.0, 0.0]
    elif b is not None:
        coef = [b, *(float(v) for v in nnls(x[:, 1:], y - b * x[:, 0])[0])]
    else:
        coef = [float(v) for v in nnls(x, y)[0]]
    return coef, [z["rss"][name] / (start + float(np.dot(coef, t))) for z, t in zip(pts, x)]


def largest(start: float, coef: list[float], items: int, mb: float) -> int:
    """The most runs R whose fitted peak is at most ``mb``."""
    def peak(r: int) -> float:
        return start + float(np.dot(coef, _terms({"runs": r, "items": items})))

    lo, hi = 1, 2
    while peak(hi) <= mb and hi < 10**7:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if peak(mid) <= mb else (lo, mid)
    return lo


def report(rows: list[dict], start: dict[str, tuple[float, float]]) -> None:
    names = [n for n in ("default", "replicates 0", "load", "plain") if any(n in z["rss"] for z in rows)]
    print("\nwhole process: CPU s (user + sys, workers included), peak RSS MB (VmHWM of the process or a forked child)")
    print(f"  {'runs':>5} {'items':>8} {'pairs':>7} " + "".join(f"{n:>22}" for n in names) + "   ours / plain CPU, RSS")
    print(f"  {'start':>5} {'':>8} {'':>7} " + "".join(
        f"{start[n][0]:>12.2f} {start[n][1]:>7.0f} MB" if n in start else f"{'-':>22}" for n in names))
    for z in rows:
        cells = "".join(f"{z['cpu'][n]:>12.2f} {z['rss'][n]:>7.0f} MB" if n in z["cpu"] else f"{'-':>22}" for n in names)
        pl = z["cpu"].get("plain"), z["rss"].get("plain")
        ratios = ", ".join(f"{n} {z['cpu'][n] / pl[0]:.2f}x {z['rss'][n] / pl[1]:.2f}x"
                           for n in ("default", "replicates 0") if n in z["cpu"] and pl[0])
        print(f"  {z['runs']:>5} {z['items']:>8,} {z['runs'] * (z['runs'] - 1):>7,} {cells}   {ratios}")
    same = [z for z in rows if z["items"] == rows[0]["items"]]
    print("\ngrowth in runs at the same items (CPU and peak ~ runs^e)")
    for a, b in zip(same, same[1:]):
        r = math.log(b["runs"] / a["runs"])
        parts = [f"{n} CPU ^{math.log(b['cpu'][n] / a['cpu'][n]) / r:.2f}, peak ^{math.log(b['rss'][n] / a['rss'][n]) / r:.2f}"
                 for n in names if n in a["cpu"] and n in b["cpu"]]
        print(f"  {a['runs']} -> {b['runs']} runs: " + "; ".join(parts))
    print("\nmodel of the peak: start + b x runs x items + p x pairs + c x runs x pairs (non-negative least squares;"
          "\nthe default's b is --replicates 0's when it has fewer than 3 sizes)")
    budgets = (8, 16, 32)
    print(f"  {'command':>14} {'start MB':>9} {'b B/run-item':>13} {'p KB/pair':>10} {'c B/run-pair':>13}   "
          + "  ".join(f"runs in {g} GB at 10k, 100k" for g in budgets) + "   measured/fitted")
    fitted: dict[str, list[float]] = {}
    for n in ("replicates 0", "load", "default"):
        if n not in start:
            continue
        few = n == "default" and sum(n in z["rss"] for z in rows) < 3
        got = fit(rows, n, start[n][1], fitted["replicates 0"][0] if few and "replicates 0" in fitted else None)
        if got is None:
            continue
        coef, resid = got
        fitted[n] = coef
        fits = "  ".join(f"{largest(start[n][1], coef, 10_000, g * GB / 1e6):>14,} {largest(start[n][1], coef, 100_000, g * GB / 1e6):>10,}"
                         for g in budgets)
        print(f"  {n:>14} {start[n][1]:>9.0f} {coef[0] * 1e6:>13.1f} {coef[1] * 1e3:>10.2f} {coef[2] * 1e6:>13.1f}   {fits}   "
              + " ".join(f"{v:.2f}" for v in resid))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="4 and 8 runs of about 400 items with every command, 4 runs at 10x the items "
                    "without the default (CI)")
    ap.add_argument("--runs", type=lambda s: [int(v) for v in s.split(",") if v], default=[44, 88, 176],
                    help="sizes in runs (about 10k items) timed with every command")
    ap.add_argument("--r0-runs", type=lambda s: [int(v) for v in s.split(",") if v], default=[],
                    help="sizes in runs timed without the default intervals (--replicates 0, load, plain)")
    ap.add_argument("--big", type=int, default=0, help="also this many runs at about 100k items, without the default")
    ap.add_argument("--results", type=Path, help="write every size's measurements to this JSON file")
    ap.add_argument("--report", type=Path, help="print the report of a --results file and exit (no measuring)")
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it (a size already there is reused)")
    a = ap.parse_args(argv)
    if a.report is not None:
        rows = json.loads(a.report.read_text(encoding="utf-8"))
        report(rows[1:], {n: (rows[0]["cpu"][n], rows[0]["rss"][n]) for n in rows[0]["rss"]})
        return 0
    if a.small:
        a.runs, a.r0_runs, a.big = list(SMALL_RUNS), list(SMALL_R0), SMALL_BIG
    scale = SMALL_SCALE if a.small else SCALE
    top = a.keep or Path(tempfile.mkdtemp(prefix="bench-manyruns-"))
    top.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "REPLICATE_CACHE_DIR"}
    env["REPLICATE_CACHE_DIR"] = str(top / "cache")  # --no-cache: nothing is kept; no user cache is touched
    ok, t = True, time.perf_counter()
    try:
        rows = []
        for runs, factor, which in [(*START, ("default", "replicates 0", "load")), *sizes_of(a)]:
            root = top / f"r{runs}-x{factor}-s{scale}"
            made = root / "made.json"
            if made.exists():
                toml, items, mb = json.loads(made.read_text(encoding="utf-8"))
            else:
                z0 = prepare(root, [(runs, factor)], scale=SMALL_SCALE if (runs, factor) == START else scale)[0]
                toml, items, mb = str(z0.toml), z0.items, z0.mb
                made.write_text(json.dumps([toml, items, mb]), encoding="utf-8")
            (root / "plain.py").write_text(PLAIN_MATRIX, encoding="utf-8")
            (root / "load.py").write_text(LOAD, encoding="utf-8")
            z = {"runs": runs, "items": items, "mb": mb, "toml": toml, "root": root, "cpu": {}, "rss": {}}
            print(f"  {runs} runs x {items:,} items, {mb:.0f} MB of files", flush=True)
            ok &= measure(z, which, env)
            rows.append(z)
            if a.results is not None:
                a.results.write_text(json.dumps([{k: v for k, v in r.items() if k in ("runs", "items", "mb", "cpu", "rss")}
                                                 for r in rows]), encoding="utf-8")
        start = {n: (rows[0]["cpu"][n], rows[0]["rss"][n]) for n in rows[0]["rss"]}
        report(rows[1:], start)
    finally:
        if a.keep is None:
            shutil.rmtree(top, ignore_errors=True)
    print(f"\n{time.perf_counter() - t:.0f} s in all; {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
