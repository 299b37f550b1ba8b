"""Benchmark: loading released judge files and all ordered pairs of runs, straightforward vs ours.

Generates a SYNTHETIC release of realistic size into a temp dir (default: 20
versions + 2 repeats = 22 runs, each 20,646 items in a DL 2019-like file of
9,260 and a DL 2020-like file of 11,386 lines; three versions write long
reasoning replies), then measures in one run:

- loading, MB/s of file bytes:
  - reference: plain orjson parsing (read bytes, split lines, orjson.loads per line);
  - straightforward: json.loads per line into a dict per run (key -> record);
  - ours: ``replicate.judge.api.load_runs`` (every check, provenance hashes included);
- all ordered pairs of the 22 runs (462), after labelling each run once:
  - straightforward: a label dict per run, set intersection and a Python loop per pair;
  - ours: align once, then four cells of every pair by matrix products, then a
    Comparison object per pair (what ``compare``/``chain`` print).

Both approaches must give identical four-cell tables for every pair.

    python bench/bench_judge.py [--small] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from replicate.examples.judge_release import Split, Version, make_release
from replicate.parsing import PARSERS, UNPARSED

PARSER = "umbrela-fallback@1"


def compiled() -> str:
    """Byte-compile replicate and its parsers (stale or missing ``.pyc`` files), as installing the package does.

    An editable install has no ``.pyc`` files until a first import writes them,
    and with ``PYTHONDONTWRITEBYTECODE`` set none is ever written: every
    process would compile every module it imports (about 0.15 s for a matrix)
    and the benchmark would time the compiler. Returns a line saying what was done.
    """
    import compileall
    import os

    import replicate
    import replicate_parsers

    for pkg in (replicate, replicate_parsers):
        compileall.compile_dir(str(Path(pkg.__file__).parent), quiet=1)
    env = "set" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "not set"
    return f"replicate and its parsers byte-compiled first, as an install does (PYTHONDONTWRITEBYTECODE {env} here)"


def release_spec(*, versions: int, repeats: int, scale: float):
    splits = [
        Split("results", queries=43, docs_per_query=216, first_query_id=19335, items=max(1, round(9260 * scale))),
        Split("results_2020", queries=54, docs_per_query=211, first_query_id=1030303, items=max(1, round(11386 * scale))),
    ]
    if scale < 1:
        splits = [
            Split(s.directory, queries=max(1, round(s.queries * scale ** 0.5)) + 1,
                  docs_per_query=max(2, round(s.docs_per_query * scale ** 0.5)) + 1,
                  first_query_id=s.first_query_id, items=s.items)
            for s in splits
        ]
    long_at = {3, 11, 17} if versions > 17 else {versions - 1}
    vs = []
    for k in range(versions):
        style = "long" if k in long_at else ("plain", "mto", "bold", "reasoning")[k % 4]
        vs.append(
            Version(
                f"v{k:02d}",
                accuracy=0.45 + 0.01 * k,
                stickiness=0.5,
                style=style,
                output_field="gemini_output" if k % 7 == 6 else "model_output",
                thoughts=k % 5 == 4,
                rewritten=3 if k % 6 == 1 else 0,
            )
        )
    for r in range(repeats):
        base = vs[versions // 2]
        vs.append(Version(f"{base.name}-repeat{r + 1}", accuracy=base.accuracy, stickiness=0.85,
                          style=base.style, output_field=base.output_field, repeat_of=base.name))
    return vs, splits


def generate(root: Path, *, versions: int, repeats: int, scale: float, seed: int = 7):
    vs, splits = release_spec(versions=versions, repeats=repeats, scale=scale)
    rel = make_release(root, vs, splits=splits, seed=seed)
    runs = {**rel.files, **rel.repeats}
    return {name: [root / f for f in files] for name, files in runs.items()}


# -- the straightforward approach ----------------------------------------------------------


def straightforward_load(runs: dict[str, list[Path]]) -> dict[str, dict]:
    out = {}
    for name, paths in runs.items():
        records = {}
        for p in paths:
            with open(p, encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    r = json.loads(line)
                    key = (str(r["query_id"]), str(r["corpus_id"]))
                    output = r["model_output"] if "model_output" in r else r["gemini_output"]
                    records[key] = (int(r["original_qrel_score"]), output)
        out[name] = records
    return out


def straightforward_pairs(labels: dict[str, dict]) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    out = {}
    names = list(labels)
    for a in names:
        for b in names:
            if a == b:
                continue
            la, lb = labels[a], labels[b]
            both = only_old = only_new = neither = 0
            for key in la.keys() & lb.keys():
                ga, xa = la[key]
                gb, xb = lb[key]
                if xa is None or xb is None:
                    continue
                ra, rb = xa == ga, xb == gb
                if ra and rb:
                    both += 1
                elif ra:
                    only_old += 1
                elif rb:
                    only_new += 1
                else:
                    neither += 1
            out[(a, b)] = (both, only_old, only_new, neither)
    return out


# -- measurements --------------------------------------------------------------------------


def orjson_reference(paths: list[Path]) -> None:
    loads = orjson.loads
    for p in paths:
        for line in p.read_bytes().split(b"\n"):
            if line:
                loads(line)


def best_of(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def run_bench(root: Path, *, versions: int, repeats: int, scale: float, repeat: int = 3, verbose: bool = True) -> dict:
    from replicate.judge.align import align
    from replicate.judge.api import load_runs
    from replicate.judge.compare import comparison_of
    from replicate.judge.pairs import pair_counts
    from replicate.judge.select import RunSpec

    t = time.perf_counter()
    runs = generate(root, versions=versions, repeats=repeats, scale=scale)
    gen_s = time.perf_counter() - t
    paths = [p for ps in runs.values() for p in ps]
    size = sum(p.stat().st_size for p in paths)
    mb = size / 1e6
    n_runs = len(runs)
    log = print if verbose else (lambda *a, **k: None)
    log(f"release: {n_runs} runs, {len(paths)} files, {mb:.1f} MB (generated in {gen_s:.1f} s) at {root}")

    ref_s, _ = best_of(lambda: orjson_reference(paths), repeat)
    naive_s, naive = best_of(lambda: straightforward_load(runs), 1)
    specs = [RunSpec(name, tuple(ps)) for name, ps in runs.items()]
    ours_s, loaded = best_of(lambda: load_runs(specs), repeat)

    parser = PARSERS.get(PARSER)
    t = time.perf_counter()
    labelled = loaded.labelled(PARSER)
    label_s = time.perf_counter() - t

    # straightforward labelling: the parser once per record, into a dict per run
    t = time.perf_counter()
    naive_labels = {
        name: {k: (g, parser(o) if parser(o) is not None else None) for k, (g, o) in recs.items()}
        for name, recs in naive.items()
    }
    naive_label_s = time.perf_counter() - t

    naive_pairs_s, naive_cells = best_of(lambda: straightforward_pairs(naive_labels), 1)

    def ours_pairs():
        aligned = align(labelled)
        counts = pair_counts(aligned, policy="intersect")
        return [comparison_of(aligned, counts, i, j) for i in range(n_runs) for j in range(n_runs) if i != j]

    ours_pairs_s, comparisons = best_of(ours_pairs, repeat)
    n_pairs = len(comparisons)

    # the two approaches agree on every pair
    for c in comparisons:
        cells = c.cells
        expect = naive_cells[(c.old.name, c.new.name)]
        got = (cells.both, cells.only_old, cells.only_new, cells.neither)
        if got != expect:
            raise SystemExit(f"MISMATCH on {c.old.name} -> {c.new.name}: ours {got}, straightforward {expect}")
    assert n_pairs == len(naive_cells) == n_runs * (n_runs - 1)
    unparsed = sum(int((lr.labels == UNPARSED).sum()) for lr in labelled)

    res = {
        "mb": mb,
        "runs": n_runs,
        "pairs": n_pairs,
        "orjson_mb_s": mb / ref_s,
        "naive_load_mb_s": mb / naive_s,
        "ours_load_mb_s": mb / ours_s,
        "load_vs_orjson": ours_s / ref_s,
        "load_speedup": naive_s / ours_s,
        "naive_pairs_s": naive_pairs_s,
        "ours_pairs_s": ours_pairs_s,
        "pairs_speedup": naive_pairs_s / ours_pairs_s,
        "label_s": label_s,
        "naive_label_s": naive_label_s,
        "unparsed": unparsed,
        "warnings": len(loaded.diagnostics),
    }
    log("")
    log(f"loading ({mb:.1f} MB)")
    log(f"  plain orjson parse (reference)  {res['orjson_mb_s']:8.1f} MB/s  {ref_s:6.2f} s")
    log(f"  straightforward (json, dicts)   {res['naive_load_mb_s']:8.1f} MB/s  {naive_s:6.2f} s")
    log(f"  ours (load_runs, all checks)    {res['ours_load_mb_s']:8.1f} MB/s  {ours_s:6.2f} s")
    log(f"  ours / orjson time: {res['load_vs_orjson']:.2f}x (aim: <= 2x); ours vs straightforward: {res['load_speedup']:.1f}x faster")
    log("")
    log(f"labelling with {PARSER}: ours {label_s:.2f} s (identical texts read once), straightforward {naive_label_s:.2f} s")
    log(f"  ({unparsed} outputs unparsed over {n_runs} runs; {res['warnings']} warnings)")
    log("")
    log(f"all {n_pairs} ordered pairs of {n_runs} runs (four cells, identical in both approaches)")
    log(f"  straightforward (sets + loop)   {n_pairs / naive_pairs_s:10.1f} pairs/s  {naive_pairs_s:7.3f} s")
    log(f"  ours (align + matrix products)  {n_pairs / ours_pairs_s:10.1f} pairs/s  {ours_pairs_s:7.3f} s")
    log(f"  speedup: {res['pairs_speedup']:.0f}x")
    return res


def startup() -> tuple[float, bool]:
    """Seconds for `replicate --help` in a fresh interpreter, and whether scipy got imported."""
    code = "import sys, replicate.cli.app as a; print('scipy' in sys.modules)"
    scipy_loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "True"
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "replicate", "--help"], capture_output=True)
        best = min(best, time.perf_counter() - t)
    return best, scipy_loaded


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a quick run: 6 runs at a tenth of the size")
    ap.add_argument("--keep", type=Path, help="generate into DIR and keep it (default: a temp dir, removed)")
    args = ap.parse_args(argv)
    versions, repeats, scale = (5, 1, 0.1) if args.small else (20, 2, 1.0)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-judge-"))
    try:
        run_bench(root, versions=versions, repeats=repeats, scale=scale)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    secs, scipy_loaded = startup()
    print("")
    print(f"start-up: `python -m replicate --help` {secs:.2f} s; scipy imported at start-up: {scipy_loaded}")


if __name__ == "__main__":
    main()
