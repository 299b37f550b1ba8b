"""Benchmark: `replicate matrix` as a whole process vs the straightforward per-pair script.

Builds the SYNTHETIC benchmark release with
``replicate.examples.judge_release`` (the same spec as ``bench_judge.py``:
20 versions + 2 repeats = 22 runs x 20,646 items, about 110 MB), writes its
``runs.toml`` and times, each in a fresh interpreter (start-up, imports,
reading, parsing, figures and JSON output included):

- straightforward: a plain script reading each file with ``json.loads`` per
  line, labelling every reply with the same parser, and for each ordered pair
  a Python loop over the shared items counting the four cells;
- ours: ``replicate matrix --runs RUNS.toml -p umbrela-fallback@1 -f json``,
  twice with a fresh cache directory (cold, then warm: a rerun over unchanged
  files) when the label cache is present.

The four cells of every pair must be identical in both. ``--profile`` also
runs the matrix command under cProfile and prints the top functions by
cumulative time.

    python bench/bench_process.py [--small] [--profile] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judge import PARSER, release_spec  # noqa: E402

from replicate.examples.judge_release import Release, make_release, runs_toml  # noqa: E402

#: The straightforward whole-process script: json per line, the parser per reply, a loop per pair.
STRAIGHTFORWARD = r'''
import json, sys, tomllib
from pathlib import Path
from replicate.parsing import PARSERS
toml = Path(sys.argv[1]); parser = PARSERS.get(sys.argv[2])
spec = tomllib.loads(toml.read_text(encoding="utf-8"))
runs = spec["runs"]
labels = {}
for name, files in runs.items():
    lab = {}
    for f in files:
        with open(toml.parent / f, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                r = json.loads(line)
                out = r["model_output"] if "model_output" in r else r["gemini_output"]
                lab[(str(r["query_id"]), str(r["corpus_id"]))] = (int(r["original_qrel_score"]), parser(out))
    labels[name] = lab
pairs = {}
for a in labels:
    for b in labels:
        if a == b:
            continue
        la, lb = labels[a], labels[b]
        both = only_old = only_new = neither = 0
        for key in la.keys() & lb.keys():
            g, xa = la[key]
            _, xb = lb[key]
            if xa is None or xb is None:
                continue
            ra, rb = xa == g, xb == g
            if ra and rb:
                both += 1
            elif ra:
                only_old += 1
            elif rb:
                only_new += 1
            else:
                neither += 1
        pairs[a + "\t" + b] = [both, only_old, only_new, neither]
print(json.dumps(pairs))
'''


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... exited {p.returncode}:\n{p.stderr[-2000:]}")
    return secs, p.stdout


def cells_of_matrix(out: str) -> dict[str, list[int]]:
    d = json.loads(out)
    return {
        p["old"]["name"] + "\t" + p["new"]["name"]: [p["cells"][k] for k in ("both", "only_old", "only_new", "neither")]
        for p in d["pairs"]
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="5 versions + 1 repeat at a tenth of the items (for CI)")
    ap.add_argument("--profile", action="store_true", help="also profile the matrix command with cProfile")
    ap.add_argument("--keep", type=Path, help="generate into DIR and keep it (default: a temp dir, removed)")
    args = ap.parse_args(argv)
    versions, repeats, scale = (5, 1, 0.1) if args.small else (20, 2, 1.0)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-process-"))
    cache = Path(tempfile.mkdtemp(prefix="bench-process-cache-"))
    env = {**os.environ, "REPLICATE_CACHE_DIR": str(cache)}
    try:
        vs, splits = release_spec(versions=versions, repeats=repeats, scale=scale)
        t = time.perf_counter()
        rel = make_release(root, vs, splits=splits, seed=7, compact=True)
        # all 22 runs (versions and repeats) in [runs]: the matrix covers every ordered pair
        everything = Release(root, files={**rel.files, **rel.repeats})
        (root / "RUNS.toml").write_text(runs_toml(everything), encoding="utf-8")
        files = [root / f for fs in [*rel.files.values(), *rel.repeats.values()] for f in fs]
        mb = sum(f.stat().st_size for f in files) / 1e6
        n_runs = len(rel.files) + len(rel.repeats)
        print(f"release: {n_runs} runs, {len(files)} files, {mb:.1f} MB (generated in {time.perf_counter() - t:.1f} s)")

        script = root / "straightforward.py"
        script.write_text(STRAIGHTFORWARD, encoding="utf-8")
        toml = str(root / "RUNS.toml")
        naive_s, naive_out = timed([sys.executable, str(script), toml, PARSER], env)
        matrix = [sys.executable, "-m", "replicate", "matrix", "--runs", toml, "-p", PARSER, "-f", "json"]
        cold_s, cold_out = timed(matrix, env)
        warm_s, warm_out = timed(matrix, env)
        if cold_out != warm_out:
            raise SystemExit("MISMATCH: the warm run's output differs from the cold run's")
        ref, got = json.loads(naive_out), cells_of_matrix(cold_out)
        if ref != got:
            bad = next(k for k in ref if ref[k] != got.get(k))
            raise SystemExit(f"MISMATCH on {bad!r}: matrix {got.get(bad)}, straightforward {ref[bad]}")
        print(f"{len(ref)} ordered pairs, identical four cells in both (whole process, fresh interpreter each)")
        print(f"  straightforward script           {naive_s:7.2f} s")
        print(f"  replicate matrix -f json, cold   {cold_s:7.2f} s   ratio {naive_s / cold_s:5.1f}x")
        print(f"  replicate matrix -f json, warm   {warm_s:7.2f} s   ratio {naive_s / warm_s:5.1f}x")
        if args.profile:
            prof = root / "matrix.prof"
            pmatrix = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "replicate", *matrix[3:]]
            shutil.rmtree(cache, ignore_errors=True)
            timed(pmatrix, env)
            import pstats

            print("\ncProfile of the cold matrix run, top 25 by cumulative time:")
            pstats.Stats(str(prof)).sort_stats("cumulative").print_stats(25)
            print("top 15 by own time:")
            pstats.Stats(str(prof)).sort_stats("tottime").print_stats(15)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
