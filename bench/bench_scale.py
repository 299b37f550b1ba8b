"""Benchmark: how `replicate matrix` grows with runs (5, 22, 50) and items (x1, x4), in time and peak memory.

For each size a SYNTHETIC release is generated the way ``bench_process.py``
does (``bench_judge.release_spec`` + ``make_release``: the 22-run release has
20,646 items per run; x4 draws four times the queries of each split, so 82,584
items per run), all runs in one ``RUNS.toml``. Then, each in a fresh
interpreter, whole process (start-up, imports, reading, parsing, figures with
the default intervals, JSON):

- straightforward: ``bench_process.STRAIGHTFORWARD`` (json per line, the
  parser per reply, a Python loop per ordered pair);
- ours, cold: ``replicate matrix --runs RUNS.toml -p umbrela-fallback@1 -f json``
  with an empty cache folder (a fresh one per round);
- ours, warm: the same command again with the run and label caches kept (what
  a rerun meets: the runs and labels are kept, the output is computed);
- phases (in one more fresh interpreter, in the library): imports, load,
  parse, figures, JSON (times without tracing), then the same again under
  tracemalloc for the memory held after load + parse and the peak of each phase.

Peak memory of a whole process is its own high-water mark (VmHWM, recorded
at exit by ``peak_rss.py``; ``ru_maxrss`` would start from this process's
peak). Medians over ``--rounds``. The files sit in the OS page cache in
every round (they were just written): "cold" means an empty label cache.

Checks (exit 1 when one fails): the four cells of every pair are the same in
the matrix's JSON and the straightforward script's, and the warm output is
byte-identical to the cold one. Printed, not failed on (timings on a shared
machine): time(x4) / time(x1) per approach and phase, flagged when above
``QUADRATIC_FLAG`` (4 for linear growth; less when fixed costs weigh in), and
memory per million records (run x item).

    python bench/bench_scale.py [--small] [--rounds N] [--no-straightforward] [--keep DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judge import PARSER, compiled, release_spec  # noqa: E402
from bench_process import STRAIGHTFORWARD, cells_of_matrix  # noqa: E402

from replicate.examples.judge_release import Release, make_release, runs_toml  # noqa: E402

#: (runs, item factor) measured: growth in runs at x1, growth in items at 22 runs.
FULL = ((5, 1), (22, 1), (50, 1), (22, 4))
#: --small (CI): a twentieth of the items at 3 runs, x1 and x4 (library phases run in-process).
SMALL = ((3, 1), (3, 4))
SMALL_SCALE = 0.05
#: time(x4) / time(x1) above this is flagged as worse than linear in items.
QUADRATIC_FLAG = 5.0


@dataclasses.dataclass
class Size:
    runs: int
    factor: int
    root: Path
    toml: Path
    items: int  # per run
    mb: float
    wall: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # approach -> seconds per round
    cpu: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # approach -> user + sys seconds per round
    rss: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # approach -> peak RSS MB per round
    cells: dict | None = None
    phases: dict = dataclasses.field(default_factory=dict)

    @property
    def records(self) -> int:
        return self.runs * self.items

    @property
    def label(self) -> str:
        return f"{self.runs} runs, x{self.factor}"

    def add(self, approach: str, wall: float, cpu: float, rss: float) -> None:
        self.wall.setdefault(approach, []).append(wall)
        self.cpu.setdefault(approach, []).append(cpu)
        self.rss.setdefault(approach, []).append(rss)

    def median(self, what: str, approach: str) -> float:
        values = getattr(self, what)[approach]
        return max(values) if what == "rss" else statistics.median(values)

    def check(self, cells: dict, what: str) -> None:
        if self.cells is None:
            self.cells = cells
        elif cells != self.cells:
            bad = next(k for k in self.cells if self.cells[k] != cells.get(k))
            raise SystemExit(f"MISMATCH ({self.label}) on {bad!r}: {what} {cells.get(bad)}, before {self.cells[bad]}")


def generate(root: Path, runs: int, factor: int, *, scale: float) -> tuple[Path, int, float]:
    """A release of ``runs`` runs (2 repeats from 5 runs on, else 1) at ``factor`` x the items; its RUNS.toml."""
    repeats = 2 if runs >= 5 else 1
    vs, splits = release_spec(versions=runs - repeats, repeats=repeats, scale=scale)
    splits = [dataclasses.replace(s, queries=s.queries * factor, items=s.items * factor) for s in splits]
    rel = make_release(root, vs, splits=splits, seed=7, compact=True)
    everything = Release(root, files={**rel.files, **rel.repeats})  # every run in [runs]: all ordered pairs
    toml = root / "RUNS.toml"
    toml.write_text(runs_toml(everything), encoding="utf-8")
    files = [root / f for fs in everything.files.values() for f in fs]
    items = sum(s.items for s in splits if s.items is not None)
    return toml, items, sum(f.stat().st_size for f in files) / 1e6


#: Runs a Python command line and records its own peak RSS (VmHWM) at exit: see that file for why.
PEAK = Path(__file__).resolve().parent / "peak_rss.py"


def child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run the Python command ``cmd``: wall time, CPU time (user + sys), its own peak RSS in MB and stdout.

    The peak is the child's VmHWM (through :data:`PEAK`), not ``ru_maxrss``,
    which would start from this process's peak.
    """
    assert cmd[0] == sys.executable
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".kib") as peak:
        t = time.perf_counter()
        p = subprocess.Popen([sys.executable, str(PEAK), *cmd[1:]], stdout=out, stderr=err,
                             env={**env, "PEAK_RSS_FILE": peak.name})
        _, status, usage = os.wait4(p.pid, 0)
        secs = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[:5])} ... exited {p.returncode}:\n{err.read().decode()[-2000:]}")
        kib = int(Path(peak.name).read_text(encoding="ascii"))
        return secs, usage.ru_utime + usage.ru_stime, kib / 1024, out.read().decode()


# -- the in-library phases (run in a child: python bench_scale.py --phases RUNS.toml) -------------


def phases(toml: Path) -> dict:
    """Wall and CPU seconds of each phase, then (second pass, under tracemalloc) the memory each holds and peaks at."""
    out: dict = {}
    t, c = time.perf_counter(), time.process_time()
    from replicate.judge.api import load_runs
    from replicate.judge.matrix import matrix
    from replicate.judge.select import runs_from_toml
    from replicate.judge.uncertainty import Uncertainty

    out["imports_s"], out["imports_cpu"] = time.perf_counter() - t, time.process_time() - c

    def one_pass(mark) -> dict:
        loaded = load_runs(runs_from_toml(toml))
        mark("load")
        labelled = loaded.labelled(PARSER)
        mark("parse")
        u = Uncertainty(replicates=1000, seed=0, cluster=None, key_fields=tuple(loaded.fields.key_fields), min_items=100)
        m = matrix(labelled, policy="intersect", uncertainty=u)
        mark("figures")
        body = m.to_json()
        json.dumps(body)
        mark("json")
        return body

    last = [time.perf_counter(), time.process_time()]

    def timing(name: str) -> None:
        now = [time.perf_counter(), time.process_time()]
        out[f"{name}_s"], out[f"{name}_cpu"] = now[0] - last[0], now[1] - last[1]
        last[:] = now

    body = one_pass(timing)
    import tracemalloc

    tracemalloc.start()

    def memory(name: str) -> None:
        current, peak = tracemalloc.get_traced_memory()
        out[f"{name}_peak_mb"] = peak / 1e6
        out[f"{name}_held_mb"] = current / 1e6
        tracemalloc.reset_peak()

    one_pass(memory)
    tracemalloc.stop()
    out["cells"] = {p["old"]["name"] + "\t" + p["new"]["name"]: [p["cells"][k] for k in ("both", "only_old", "only_new", "neither")]
                    for p in body["pairs"]}
    return out



# -- measuring ----------------------------------------------------------------------------------


def prepare(top: Path, sizes, *, scale: float) -> list[Size]:
    out = []
    for runs, factor in sizes:
        root = top / f"r{runs}-x{factor}"
        t = time.perf_counter()
        # in a child, so that this process stays small
        said = child([sys.executable, str(Path(__file__).resolve()), "--generate", str(root), str(runs), str(factor),
                      str(scale)], dict(os.environ))[3]
        toml_path, items, mb = json.loads(said)
        toml = Path(toml_path)
        print(f"  {runs} runs x {items:,} items ({mb:.1f} MB) generated in {time.perf_counter() - t:.1f} s", flush=True)
        out.append(Size(runs, factor, root, toml, items, mb))
    return out


def measure(sizes: list[Size], *, rounds: int, naive: bool, fresh: bool) -> None:
    """The straightforward script once per size, then rounds of (cold, warm) over every size in turn, then the phases.

    Sizes alternate within each round, so that a busy spell on the machine
    falls on all sizes alike.
    """
    env = {k: v for k, v in os.environ.items() if k != "REPLICATE_CACHE_DIR"}
    if naive:
        for z in sizes:
            script = z.root / "straightforward.py"
            script.write_text(STRAIGHTFORWARD, encoding="utf-8")
            *m, out = child([sys.executable, str(script), str(z.toml), PARSER], env)
            z.add("straightforward", *m)
            z.check(json.loads(out), "straightforward")
    for r in range(rounds):
        for z in sizes:
            cache = z.root / f"cache-{r}"  # a fresh, empty cache folder each round
            cmd = [sys.executable, "-m", "replicate", "matrix", "--runs", str(z.toml), "-p", PARSER, "-f", "json"]
            outs = {}
            for state in STATES:
                *m, outs[state] = child(cmd, {**env, "REPLICATE_CACHE_DIR": str(cache)})
                z.add(state, *m)
            shutil.rmtree(cache, ignore_errors=True)
            for state in STATES[1:]:
                if outs[state] != outs["cold"]:
                    raise SystemExit(f"MISMATCH ({z.label}): the {state} run's output differs from the cold run's")
            z.check(cells_of_matrix(outs["cold"]), "matrix")
    for z in sizes:
        if fresh:
            z.phases = json.loads(child([sys.executable, str(Path(__file__).resolve()), "--phases", str(z.toml)], env)[3])
        else:  # --small: in this interpreter (imports already done)
            z.phases = phases(z.toml)
        z.check(z.phases.pop("cells"), "library phases")


PHASES = ("imports", "load", "parse", "figures", "json")
#: The whole-process runs of ours per round: empty cache, then runs and labels kept.
STATES = ("cold", "warm")


def report(sizes: list[Size], *, fresh: bool) -> None:
    approaches = list(sizes[0].wall)
    print("\nwhole process (median wall s, median CPU s = user + sys, peak RSS MB)")
    print("  runs  items/run  pairs " + "".join(f"{a:>27}" for a in approaches)
          + ("".join(f"{'ratio ' + s:>13}" for s in STATES) + " (wall)" if "straightforward" in approaches else ""))
    for z in sizes:
        cells = "".join(f"  {z.median('wall', a):8.2f} {z.median('cpu', a):7.2f} {z.median('rss', a):6.0f} MB"
                        for a in approaches)
        ratio = ""
        if "straightforward" in approaches:
            ratio = "".join(f"{z.median('wall', 'straightforward') / z.median('wall', s):>12.1f}x" for s in STATES)
        print(f"  {z.runs:>4}  {z.items:>9,}  {z.runs * (z.runs - 1):>5} {cells}{ratio}")
    where = "one fresh interpreter per size" if fresh else "in this interpreter (imports done once)"
    print(f"\nlibrary phases, {where}: wall s (CPU s); memory under tracemalloc, held after the phase / peak in it, MB")
    print("  runs  items/run " + "".join(f"{k:>16}" for k in PHASES) + "   load held/peak  parse held/peak  figures peak")
    for z in sizes:
        p = z.phases
        secs = "".join(f"{p[k + '_s']:>8.3f} ({p[k + '_cpu']:5.2f})" for k in PHASES)
        print(f"  {z.runs:>4}  {z.items:>9,}{secs}   {p['load_held_mb']:>6.0f}/{p['load_peak_mb']:<6.0f}   "
              f"{p['parse_held_mb']:>6.0f}/{p['parse_peak_mb']:<6.0f}   {p['figures_peak_mb']:>8.0f}")
    growth(sizes)


def growth(sizes: list[Size]) -> None:
    by = {(z.runs, z.factor): z for z in sizes}
    for big in (z for z in sizes if z.factor == 4):
        small = by.get((big.runs, 1))
        if small is None:
            continue
        print(f"\ngrowth in items at {big.runs} runs, x1 -> x4 (CPU s; 4.0 is linear, fixed costs pull it below; "
              f"flagged above {QUADRATIC_FLAG}):")
        rows = [(a, small.median("cpu", a), big.median("cpu", a)) for a in big.cpu]
        rows += [(f"phase {k}", small.phases[k + "_cpu"], big.phases[k + "_cpu"]) for k in PHASES if k != "imports"]
        for name, a, b in rows:
            ratio = b / a if a > 0 else float("inf")
            flag = "   FLAG: worse than linear in items" if ratio > QUADRATIC_FLAG else ""
            print(f"  {name:<16} {a:8.3f} s -> {b:8.3f} s   cpu(x4)/cpu(x1) = {ratio:4.2f}{flag}")
        extra = big.records - small.records
        print(f"memory per million records (run x item), x1 -> x4 at {big.runs} runs:")
        for a in big.rss:
            per = (big.median("rss", a) - small.median("rss", a)) / extra * 1e6
            print(f"  {a:<16} peak RSS grows {per:5.0f} MB per million records")
        for ph in ("load", "parse"):
            per = big.phases[f"{ph}_held_mb"] / big.records * 1e6
            print(f"  held after {ph:<5} {per:5.0f} MB per million records (tracemalloc; {big.phases[f'{ph}_held_mb']:.0f} MB at x4)")
    at_x1 = sorted((z for z in sizes if z.factor == 1), key=lambda z: z.runs)
    if len(at_x1) > 1:
        print("\ngrowth in runs at x1 (records grow with runs, pairs with runs^2): CPU s per million records")
        for z in at_x1:
            per = ", ".join(f"{a} {z.median('cpu', a) / z.records * 1e6:.2f}" for a in z.cpu)
            print(f"  {z.runs:>3} runs ({z.runs * (z.runs - 1):>4} pairs): {per}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help=f"sizes {SMALL} at {SMALL_SCALE} of the items (for CI)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds of cold + warm per size (default 3; 1 with --small)")
    ap.add_argument("--no-straightforward", action="store_true", help="skip the straightforward script (minutes at 50 runs and x4)")
    ap.add_argument("--keep", type=Path, help="generate under DIR and keep it (default: a temp dir, removed)")
    ap.add_argument("--phases", type=Path, metavar="RUNS_TOML", help=argparse.SUPPRESS)  # the phases child
    ap.add_argument("--generate", nargs=4, help=argparse.SUPPRESS)  # the generating child
    args = ap.parse_args(argv)
    if args.phases is not None:
        print(json.dumps(phases(args.phases)))
        return 0
    if args.generate is not None:  # the generating child: prints [RUNS.toml, items per run, MB]
        root, runs, factor, scale_ = args.generate
        toml, items, mb = generate(Path(root), int(runs), int(factor), scale=float(scale_))
        print(json.dumps([str(toml), items, mb]))
        return 0
    sizes, scale = (SMALL, SMALL_SCALE) if args.small else (FULL, 1.0)
    rounds = args.rounds or (1 if args.small else 3)
    top = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        print(compiled())
        print(f"matrix -p {PARSER} -f json; {rounds} round(s) of cold + warm per size")
        prepared = prepare(top, sizes, scale=scale)
        measure(prepared, rounds=rounds, naive=not args.no_straightforward, fresh=not args.small)
        report(prepared, fresh=not args.small)
        print("\nidentical four cells in the matrix (every round), the straightforward script and the library phases; "
              "warm output byte-identical to cold")
    finally:
        if args.keep is None:
            shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
