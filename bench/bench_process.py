"""Benchmark: `replicate matrix` as a whole process vs the straightforward per-pair script.

Builds the SYNTHETIC benchmark release with
``replicate.examples.judge_release`` (the same spec as ``bench_judge.py``:
20 versions + 2 repeats = 22 runs x 20,646 items, about 110 MB), writes its
``runs.toml`` and times, each in a fresh interpreter (start-up, imports,
reading, parsing, figures and JSON output included):

- straightforward: a plain script reading each file with ``json.loads`` per
  line, labelling every reply with the same parser, and for each ordered pair
  a Python loop over the shared items counting the four cells;
- ours: ``replicate matrix --runs RUNS.toml -p umbrela-fallback@1 -f json``
  with an empty cache (cold: the default ``--jobs auto``, and again with
  ``--jobs 1`` and ``--jobs 2`` worker processes), with ``--no-cache``, with
  and with the run and label caches full (warm: everything computed, no file
  read or parsed again).

Each round runs the six in turn (the straightforward script first in even
rounds, last in odd ones); medians are printed with their ranges, beside a
bare interpreter's start-up. Every output of ours must be byte-identical.

The four cells of every pair must be identical in both. ``--profile`` also
runs the matrix command under cProfile and prints the top functions by
cumulative time.

    python bench/bench_process.py [--small] [--rounds N] [--profile] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judge import PARSER, compiled, release_spec  # noqa: E402

from replicate.examples.judge_release import Release, make_release, runs_toml  # noqa: E402
from replicate.judge.load.workers import cpus, jobs_for  # noqa: E402
from replicate.judge.select import runs_from_toml  # noqa: E402

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


#: CPU seconds (user + sys) of each timed command, its worker processes included, in the order timed.
CPU: list[float] = []


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t, c = time.perf_counter(), _children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t
    CPU.append(_children_cpu() - c)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... exited {p.returncode}:\n{p.stderr[-2000:]}")
    return secs, p.stdout


def cells_of_matrix(out: str) -> dict[str, list[int]]:
    d = json.loads(out)
    return {
        p["old"]["name"] + "\t" + p["new"]["name"]: [p["cells"][k] for k in ("both", "only_old", "only_new", "neither")]
        for p in d["pairs"]
    }


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="5 versions + 1 repeat at a tenth of the items (for CI)")
    ap.add_argument("--profile", action="store_true", help="also profile the cold matrix command with cProfile")
    ap.add_argument("--keep", type=Path, help="generate into DIR and keep it, or reuse the release already there")
    ap.add_argument("--rounds", type=int, help="rounds of the seven measurements, alternating (default 3; --small 1)")
    args = ap.parse_args(argv)
    versions, repeats, scale = (5, 1, 0.1) if args.small else (20, 2, 1.0)
    rounds = args.rounds or (1 if args.small else 3)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-process-"))
    caches = Path(tempfile.mkdtemp(prefix="bench-process-cache-"))
    try:
        toml = root / "RUNS.toml"
        t = time.perf_counter()
        if not toml.exists():
            vs, splits = release_spec(versions=versions, repeats=repeats, scale=scale)
            rel = make_release(root, vs, splits=splits, seed=7, compact=True)
            # all 22 runs (versions and repeats) in [runs]: the matrix covers every ordered pair
            everything = Release(root, files={**rel.files, **rel.repeats})
            toml.write_text(runs_toml(everything), encoding="utf-8")
        files = sorted(root.glob("results*/*.jsonl*"))
        mb = sum(f.stat().st_size for f in files) / 1e6
        print(f"release: {len(files)} files, {mb:.1f} MB (ready in {time.perf_counter() - t:.1f} s); "
              f"--jobs auto starts {jobs_for(runs_from_toml(toml), 'auto')} worker(s) here ({cpus()} CPUs)")

        print(compiled())
        script = root / "straightforward.py"
        script.write_text(STRAIGHTFORWARD, encoding="utf-8")
        matrix = [sys.executable, "-m", "replicate", "matrix", "--runs", str(toml), "-p", PARSER, "-f", "json"]
        kinds = ("straightforward", "cold", "jobs1", "jobs2", "no-cache", "warm")
        times: dict[str, list[float]] = {k: [] for k in kinds}
        cpu: dict[str, list[float]] = {k: [] for k in kinds}
        outs: dict[str, str] = {}
        for r in range(rounds):
            cache = caches / f"round-{r}"
            env = {**os.environ, "REPLICATE_CACHE_DIR": str(cache)}
            order = list(kinds)
            if r % 2:  # alternate: the straightforward script last in odd rounds
                order = order[1:] + order[:1]
            for what in order:
                if what == "straightforward":
                    secs, out = timed([sys.executable, str(script), str(toml), PARSER], env)
                elif what in ("jobs1", "jobs2"):  # cold too, in a cache of their own
                    own = {**env, "REPLICATE_CACHE_DIR": str(caches / f"round-{r}-{what}")}
                    secs, out = timed([*matrix, "--jobs", what[-1]], own)
                elif what == "no-cache":
                    secs, out = timed([*matrix[:3], "--no-cache", *matrix[3:]], env)
                else:  # cold: an empty cache; warm: the same command again, run and label caches full
                    secs, out = timed(matrix, env)
                times[what].append(secs)
                cpu[what].append(CPU[-1])
                if outs.setdefault(what, out) != out:
                    raise SystemExit(f"MISMATCH: {what} printed other bytes in round {r + 1}")
        mine = {outs[k] for k in kinds[1:]}
        if len(mine) != 1:
            raise SystemExit("MISMATCH: the outputs of cold (auto, --jobs 1, --jobs 2), --no-cache and warm "
                             "are not byte-identical")
        ref, got = json.loads(outs["straightforward"]), cells_of_matrix(outs["cold"])
        if ref != got:
            bad = next(k for k in ref if ref[k] != got.get(k))
            raise SystemExit(f"MISMATCH on {bad!r}: matrix {got.get(bad)}, straightforward {ref[bad]}")
        print(f"{len(ref)} ordered pairs, identical four cells in both; cold (auto, --jobs 1, --jobs 2), --no-cache, "
              "warm byte-identical")
        print(f"whole process, fresh interpreter each, median of {rounds} alternating round(s); "
              "CPU = user + sys of the process and its workers:")
        naive = median(times["straightforward"])
        labels = {
            "straightforward": "straightforward script",
            "cold": "matrix -f json, cold (empty cache)",
            "jobs1": "  the same, --jobs 1",
            "jobs2": "  the same, --jobs 2",
            "no-cache": "matrix -f json, --no-cache",
            "warm": "matrix -f json, run+label caches",
        }
        for what in kinds:
            m = median(times[what])
            ratio = "" if what == "straightforward" else f"   ratio {naive / m:6.1f}x"
            spread = f"[{min(times[what]):.2f}-{max(times[what]):.2f}]"
            print(f"  {labels[what]:38s} {m:7.3f} s {spread:>13s}   CPU {median(cpu[what]):6.2f} s{ratio}")
        bare = median([timed([sys.executable, "-c", "pass"], os.environ.copy())[0] for _ in range(3)])
        print(f"  (bare interpreter start-up: {bare:.3f} s)")
        if args.profile:
            prof = root / "matrix.prof"
            env = {**os.environ, "REPLICATE_CACHE_DIR": str(caches / "profile")}
            timed([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "replicate", *matrix[3:]], env)
            import pstats

            print("\ncProfile of the cold matrix run, top 25 by cumulative time:")
            pstats.Stats(str(prof)).sort_stats("cumulative").print_stats(25)
            print("top 15 by own time:")
            pstats.Stats(str(prof)).sort_stats("tottime").print_stats(15)
    finally:
        shutil.rmtree(caches, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
