"""Benchmark: the item-level engine vs the straightforward scipy loop, and ``replicate items`` as a whole
process vs a plain script (CPU and peak memory), on the same data in the same run.

Two parts (``--part engine|process|both``, both by default):

- ``engine``: the full design of the motivating study: 900 items (3 benchmarks x 300), three
  models, K = 50 trials, three edges, 1,000 permutation replications, i.e.
  2.7 million Fisher tests. The straightforward approach calls
  ``scipy.stats.fisher_exact`` per item per replication and
  ``scipy.stats.false_discovery_control`` per cell per replication; it runs on a
  slice of the replications and is extrapolated. The engine runs the whole
  design (reading the table included). The observed classifications of the two
  are compared item by item and must be identical.
- ``process`` (issue 39's size): a SYNTHETIC trials table of 3 models x 10,000 items (3 benchmarks)
  x K = 50 trials, 1.5 M rows (``--small``: 300 items, K = 20), read by fresh interpreters interleaved
  in rounds: ``replicate items`` with its defaults (1,000 permutation replications), the same with
  ``--null 0``, and a plain script (orjson per line into a dict of category counts per (model,
  benchmark, item), then per edge and benchmark scipy's ``fisher_exact`` per item,
  ``false_discovery_control`` and the exact eps test: what a careful analyst writes, no null, no
  intervals). CPU is user + sys; peak memory each process's own VmHWM (bench/peak_rss.py). The
  figures both print (per cell: items, delta, improved and regressed counts; per model and benchmark:
  accuracy, items, trials per category) must be identical, and ``--null 0`` must print every figure
  the default prints but the null's. ``--before DIR`` also times the package found in DIR (an earlier
  checkout's ``replicate`` folder).

    python bench/bench_items.py [--small] [--part engine|process|both] [--rounds N] [--before DIR]

Run the full size under ``ulimit -v 4700000``: before issue 39's column store, ``replicate items`` took
1.4 GB at this size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from replicate.stats.classify import CLASSES
from replicate.trials.engine import analyse_items, per_item_rows
from replicate.trials.load import read_trials
from support.synth.trials import synthetic_rows, write_jsonl  # noqa: E402

EDGES = [("m1", "m2"), ("m2", "m3"), ("m1", "m3")]


def make_table(path: Path, n_per_bench: int, k: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    n = 3 * n_per_bench
    base = rng.uniform(0.05, 0.95, n)
    m2 = base.copy()
    m2[: n // 9] = np.clip(m2[: n // 9] + 0.5, 0, 1)
    m3 = m2.copy()
    m3[n // 9 : 2 * n // 9] = np.clip(m3[n // 9 : 2 * n // 9] - 0.5, 0, 1)
    bench = [b for b in ("b1", "b2", "b3") for _ in range(n_per_bench)]
    rows = synthetic_rows({"m1": base, "m2": m2, "m3": m3}, k=k, benchmark=bench, seed=seed + 1,
                          api_error_rate=0.01)
    write_jsonl(rows, path)


def straightforward(path: Path, *, n_null: int, seed: int, eps: Fraction = Fraction(1, 5), alpha: float = 0.05):
    """Per-row dicts, fisher_exact per item, false_discovery_control per cell, a shuffle per replication.

    Runs ``n_null`` replications per cell. Returns the observed class per (source, target,
    benchmark, item), the seconds spent on the replications, the number of Fisher tests they
    ran, and the number of item x edge tests per replication.
    """
    import orjson
    from scipy.stats import false_discovery_control, fisher_exact

    from replicate.stats.classify import float_above, float_below
    from replicate.stats.intervals import diff_interval

    outcomes: dict = {}
    for line in path.read_bytes().splitlines():
        r = orjson.loads(line)
        if r["category"] == "api_error":
            continue
        outcomes.setdefault((r["benchmark"], r["item"]), {}).setdefault(r["model"], []).append(
            r["category"] == "correct"
        )
    observed = {}
    rng = np.random.default_rng(seed)
    cells = {}
    for src, tgt in EDGES:
        for (bench, item), by_model in outcomes.items():
            if src in by_model and tgt in by_model:
                cells.setdefault((src, tgt, bench), []).append((item, by_model[src], by_model[tgt]))
    null_time = 0.0
    null_tests = 0
    for (src, tgt, bench), items in cells.items():
        ps, diffs = [], []
        for _item, xs, xt in items:
            a, n1, b, n2 = sum(xs), len(xs), sum(xt), len(xt)
            ps.append(fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue)
            diffs.append((a, n1, b, n2))
        qs = false_discovery_control(ps)
        for (item, *_), q, (a, n1, b, n2) in zip(items, qs, diffs):
            d = Fraction(b, n2) - Fraction(a, n1)
            lo, hi = diff_interval(a, n1, b, n2)
            if q <= alpha and d >= eps:
                c = "improved"
            elif q <= alpha and d <= -eps:
                c = "regressed"
            elif float_above(np.array([lo]), -eps)[0] and float_below(np.array([hi]), eps)[0]:
                c = "equivalent"
            else:
                c = "inconclusive"
            observed[(src, tgt, bench, item)] = c
        t0 = time.perf_counter()
        for _ in range(n_null):
            ps = []
            for _item, xs, xt in items:
                pool = np.array(xs + xt)
                rng.shuffle(pool)
                a, n1 = int(pool[: len(xs)].sum()), len(xs)
                b, n2 = int(pool[len(xs):].sum()), len(xt)
                ps.append(fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue)
            false_discovery_control(ps)
            null_tests += len(items)
        null_time += time.perf_counter() - t0
    return observed, null_time, null_tests, sum(len(v) for v in cells.values())


def plain_parse_seconds(path: Path) -> float:
    """The floor for reading: orjson on every line into a list of dicts, nothing checked."""
    import orjson

    t0 = time.perf_counter()
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    t = time.perf_counter() - t0
    assert rows
    return t


def run(n_per_bench: int, k: int, n_null: int, slice_null: int, out: Path) -> dict:
    path = out / f"trials_{n_per_bench}x{k}.jsonl"
    make_table(path, n_per_bench, k)
    t0 = time.perf_counter()
    table = read_trials(path)
    t_read = time.perf_counter() - t0
    res = analyse_items(table, EDGES, n_null=n_null, seed=1)
    t_engine = time.perf_counter() - t0
    ours = {(r["source"], r["target"], r["benchmark"], r["item"]): r["class"] for r in per_item_rows(res)}

    t_plain = plain_parse_seconds(path)

    t1 = time.perf_counter()
    theirs, null_time, null_tests, n_items = straightforward(path, n_null=slice_null, seed=1)
    t_naive_obs = time.perf_counter() - t1 - null_time
    per_test = null_time / max(null_tests, 1)
    full_tests = n_items * n_null
    t_naive_full = t_naive_obs + per_test * full_tests
    same = ours == theirs
    mism = sum(1 for k_ in ours if theirs.get(k_) != ours[k_])
    return {
        "rows": table.n_rows,
        "items_x_edges": n_items,
        "null": n_null,
        "fisher_tests_full": full_tests,
        "engine_s": t_engine,
        "engine_read_s": t_read,
        "plain_orjson_parse_s": t_plain,
        "naive_per_test_ms": per_test * 1000,
        "naive_slice_tests": null_tests,
        "naive_full_s_extrapolated": t_naive_full,
        "ratio": t_naive_full / t_engine,
        "identical": same,
        "mismatches": mism,
        "classes": {c: sum(v == c for v in ours.values()) for c in CLASSES},
    }


# --------------------------------------------------------------------------------------
# Whole process: replicate items vs a plain script, CPU and peak memory

PEAK = Path(__file__).resolve().parent / "peak_rss.py"
PROCESS_EDGES = ["m1:m2", "m2:m3", "m1:m3"]
FAILURES = (b"wrong", b"format_failure", b"refusal", b"truncation")

PLAIN_ITEMS = r"""
import sys
from fractions import Fraction
import orjson
from scipy.stats import false_discovery_control, fisher_exact
CATS = ("correct", "wrong", "format_failure", "refusal", "truncation", "api_error")
INDEX = {c: i for i, c in enumerate(CATS)}
counts = {}
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        if line.strip():
            r = orjson.loads(line)
            key = (r["model"], r["benchmark"], str(r["item"]))
            c = counts.get(key)
            if c is None:
                c = counts[key] = [0] * 6
            c[INDEX[r["category"]]] += 1
by = {}
for (m, b, i), c in counts.items():
    by.setdefault((m, b), {})[i] = c
eps = Fraction(1, 5)
cells = []
for edge in sys.argv[2:]:
    s, t = edge.split(":")
    for b in sorted({b for _, b in by}):
        src, tgt = by.get((s, b), {}), by.get((t, b), {})
        rows = []
        for i in sorted(set(src) & set(tgt)):
            a, n1 = src[i][0], sum(src[i][:5])
            x, n2 = tgt[i][0], sum(tgt[i][:5])
            if n1 and n2:
                rows.append((a, n1, x, n2))
        ps = [fisher_exact([[a, n1 - a], [x, n2 - x]]).pvalue for a, n1, x, n2 in rows]
        qs = false_discovery_control(ps) if ps else []
        up = down = 0
        for (a, n1, x, n2), q in zip(rows, qs):
            d = Fraction(x, n2) - Fraction(a, n1)
            up += bool(q <= 0.05 and d >= eps)
            down += bool(q <= 0.05 and d <= -eps)
        delta = sum(Fraction(x, n2) for a, n1, x, n2 in rows) / len(rows) - sum(Fraction(a, n1) for a, n1, x, n2 in rows) / len(rows)
        cells.append([s, t, b, len(rows), float(delta), up, down])
accuracy = []
for (m, b) in sorted(by):
    items = by[(m, b)].values()
    rates = [Fraction(c[0], sum(c[:5])) for c in items if sum(c[:5])]
    cats = [sum(c[k] for c in items) for k in range(6)]
    accuracy.append([m, b, len(rates), float(sum(rates) / len(rates)), cats])
print(orjson.dumps({"cells": cells, "accuracy": accuracy}).decode())
"""


def write_archive(path: Path, n_items: int, k: int, seed: int = 0) -> int:
    """A trials table of models m1-m3 (m2 better than m1 on the first ninth of the items, m3 worse than m2 on
    the second), 1% API errors, failures spread over the four failure categories, three benchmarks; written
    as it is drawn (no list of rows held). Returns the number of rows."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.05, 0.95, n_items)
    m2 = base.copy()
    m2[: n_items // 9] = np.clip(m2[: n_items // 9] + 0.5, 0, 1)
    m3 = m2.copy()
    m3[n_items // 9 : 2 * n_items // 9] = np.clip(m3[n_items // 9 : 2 * n_items // 9] - 0.5, 0, 1)
    with path.open("wb") as fh:
        for model, rate in (("m1", base), ("m2", m2), ("m3", m3)):
            ok = rng.random((n_items, k)) < rate[:, None]
            api = rng.random((n_items, k)) < 0.01
            kind = rng.integers(0, len(FAILURES), (n_items, k))
            for i in range(n_items):
                head = b'{"model":"%s","item":"q%05d","trial":' % (model.encode(), i)
                bench = b"b%d" % (i * 3 // n_items + 1)
                fh.write(b"".join(
                    head + b'%d,"benchmark":"%s","category":"%s"}\n'
                    % (j, bench, b"api_error" if api[i, j] else b"correct" if ok[i, j] else FAILURES[kind[i, j]])
                    for j in range(k)))
    return 3 * n_items * k


def child(cmd: list[str], env: dict[str, str], cwd: Path, limit_gb: float | None = None) -> tuple[float, float, str]:
    """Run the Python command ``cmd`` in a fresh interpreter: CPU seconds (user + sys), its peak resident MB
    (its own VmHWM, through bench/peak_rss.py) and its stdout. Unlike bench_growth's ``child``, ``ru_maxrss``
    is not looked at: it starts from this process's own peak, which the engine part has raised.
    ``limit_gb``: the child's address space bounded (GiB)."""
    def bound() -> None:
        if limit_gb is not None:
            import resource

            lim = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".kib") as peak:
        p = subprocess.Popen([sys.executable, str(PEAK), *cmd], stdout=out, stderr=err, cwd=cwd,
                             env={**env, "PEAK_RSS_FILE": peak.name}, preexec_fn=bound)
        _, status, usage = os.wait4(p.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(cmd[:6])} ... failed:\n{err.read().decode()[-2000:]}")
        kib = int(Path(peak.name).read_text(encoding="ascii"))
        return usage.ru_utime + usage.ru_stime, kib / 1024, out.read().decode()


def figures_of_items(out: str) -> dict:
    """The figures ``replicate items -f json`` and the plain script both print, in the plain script's shape."""
    d = json.loads(out)
    cells = [[c["source"], c["target"], c["benchmark"], c["n_items"], c["delta"], c["counts"]["improved"],
              c["counts"]["regressed"]] for c in d["cells"]]
    accuracy = [[a["model"], a["benchmark"], a["n_items"], a["accuracy"], list(a["categories"].values())]
                for a in d["accuracy"]]
    return {"cells": cells, "accuracy": sorted(accuracy)}


def without_null(out: str) -> dict:
    """``items -f json`` without what the permutation null adds (its percentiles and its setting)."""
    d = json.loads(out)
    for c in d["cells"]:
        c.pop("null_p95", None)
        c.pop("null", None)
    d["settings"].pop("null", None)
    return d


def run_process(n_items: int, k: int, rounds: int, top: Path, before: Path | None) -> tuple[dict, bool]:
    path = top / f"trials_{n_items}x{k}.jsonl"
    rows = write_archive(path, n_items, k)
    print(f"  trials table: {rows:,} rows, {path.stat().st_size / 1e6:.0f} MB", flush=True)
    plain = top / "plain_items.py"
    plain.write_text(PLAIN_ITEMS, encoding="utf-8")
    edges = [a for e in PROCESS_EDGES for a in ("-e", e)]
    ours = ["-m", "replicate", "items", str(path), *edges, "-f", "json"]
    cmds = {"plain": [str(plain), str(path), *PROCESS_EDGES], "ours": ours, "ours --null 0": [*ours, "--null", "0"]}
    if before is not None:
        cmds["before"] = ours
        cmds["before --null 0"] = cmds["ours --null 0"]
    env = dict(os.environ)
    res: dict = {n: {"cpu": [], "rss": []} for n in cmds}
    ok = True
    for _ in range(rounds):
        outs = {}
        for name, cmd in cmds.items():
            run_env = {**env, "PYTHONPATH": str(before)} if name.startswith("before") else env
            cpu, rss, out = child(cmd, run_env, top)
            res[name]["cpu"].append(cpu)
            res[name]["rss"].append(rss)
            outs[name] = out
            print(f"    {name}: {cpu:.2f} s CPU, {rss:.0f} MB", flush=True)
        theirs = orjson.loads(outs["plain"])
        theirs["accuracy"] = sorted(theirs["accuracy"])
        for name, out in outs.items():
            if name != "plain" and figures_of_items(out) != theirs:
                print(f"MISMATCH: {name} and the plain script print different figures", file=sys.stderr)
                ok = False
        if without_null(outs["ours"]) != without_null(outs["ours --null 0"]):
            print("MISMATCH: --null 0 changes a figure other than the null's", file=sys.stderr)
            ok = False
        if before is not None and (outs["before"] != outs["ours"] or outs["before --null 0"] != outs["ours --null 0"]):
            print("MISMATCH: the earlier package's output differs from ours", file=sys.stderr)
            ok = False
    return res, ok


def report_process(res: dict) -> None:
    plain_cpu, plain_rss = statistics.median(res["plain"]["cpu"]), max(res["plain"]["rss"])
    print("\nreplicate items, whole process: median CPU s (user + sys), peak RSS MB, ratios to the plain script")
    for name, r in res.items():
        cpu, rss = statistics.median(r["cpu"]), max(r["rss"])
        print(f"  {name:18} {cpu:7.2f} s {rss:7.0f} MB   CPU {cpu / plain_cpu:5.2f}x   memory {rss / plain_rss:5.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a quick run: engine 3 x 40 items, K = 20, 100 "
                    "replications; process 300 items, K = 20")
    ap.add_argument("--part", choices=("engine", "process", "both"), default="both")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of the process part (each runs every command once)")
    ap.add_argument("--before", type=Path, help="a folder holding an earlier replicate package, timed beside ours")
    args = ap.parse_args(argv)
    ok = True
    if args.part in ("engine", "both"):
        n, k, n_null, sl = (40, 20, 100, 2) if args.small else (300, 50, 1000, 3)
        out = Path(__file__).resolve().parent / "out"
        try:
            out.mkdir(exist_ok=True)
        except OSError:
            out = Path(tempfile.mkdtemp())
        r = run(n, k, n_null, sl, out)
        print(f"data: {r['rows']} trial rows; {r['items_x_edges']} item x edge tests per replication; "
              f"{r['null']} replications = {r['fisher_tests_full']:,} Fisher tests")
        print(f"engine (read + everything): {r['engine_s']:.2f} s (reading {r['engine_read_s']:.2f} s)")
        print(f"reading the table: plain orjson parse of every line {r['plain_orjson_parse_s']:.2f} s, "
              f"read_trials (parse, validate, intern, duplicate check, sha256) {r['engine_read_s']:.2f} s "
              f"({r['engine_read_s'] / r['plain_orjson_parse_s']:.1f}x plain parsing)")
        print(f"straightforward: {r['naive_per_test_ms']:.3f} ms per test on a slice of {r['naive_slice_tests']:,} "
              f"tests -> {r['naive_full_s_extrapolated']:.0f} s extrapolated")
        print(f"ratio: {r['ratio']:.0f}x")
        print(f"observed classifications identical: {r['identical']} ({r['mismatches']} mismatches); {r['classes']}")
        ok &= r["identical"]
    if args.part in ("process", "both"):
        top = Path(tempfile.mkdtemp(prefix="bench-items-"))
        try:
            n_items, k = (300, 20) if args.small else (10_000, 50)
            res, good = run_process(n_items, k, args.rounds, top, args.before)
            report_process(res)
            ok &= good
        finally:
            shutil.rmtree(top, ignore_errors=True)
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
