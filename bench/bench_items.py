"""Benchmark: the item-level engine vs the straightforward scipy loop, on the same data.

The full design of the motivating study: 900 items (3 benchmarks x 300), three
models, K = 50 trials, three edges, 1,000 permutation replications, i.e.
2.7 million Fisher tests. The straightforward approach calls
``scipy.stats.fisher_exact`` per item per replication and
``scipy.stats.false_discovery_control`` per cell per replication; it runs on a
slice of the replications and is extrapolated. The engine runs the whole
design (reading the table included). The observed classifications of the two
are compared item by item and must be identical.

    python bench/bench_items.py [--small]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a quick run: 3 x 40 items, K = 20, 100 replications")
    args = ap.parse_args(argv)
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
    return 0 if r["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
