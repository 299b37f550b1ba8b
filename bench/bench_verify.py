"""Benchmark: `verify` (read each file once, label once per parser, cache edges) vs a per-claim loop.

A synthetic release written to a temporary directory: ``--runs`` runs (20
versions and 2 repeats by default, the size of the 22-run release; 8 runs
with ``--small``), each pooling a DL 2019-like and a DL 2020-like file (20,646
items per run in full size), and a claims file of every edge figure of the
adjacent edges (9 each), 4 run figures per version and the 4 floor figures
(255 claims at 22 runs: 19 edges, 20 versions), verified under 3 parsers.

- straightforward: for each claim and each parser, read the claim's runs from
  disk, label them, and compute the figure with the judge library's
  ``compare``/``floor`` (what a script per printed number would do);
- ours: :func:`replicate.verify.verify`.

Measured twice:

- with ``--in-process``, in one interpreter (imports done): both functions above, once each;
- whole process, each in a fresh interpreter, in alternating rounds (medians):
  the straightforward loop as a script (this file with ``--per-claim``) against
  ``replicate verify CLAIMS --root DIR -p P1 -p P2 -p P3 -f json`` (default
  intervals: 1,000 bootstrap replicates per edge and floor, which the loop does
  not compute) with an empty label cache (cold, a fresh cache dir per round) and
  again over that cache (warm: a rerun over unchanged files).

Every recomputed value must agree (to 1e-12), the warm output must be
byte-identical to the cold one, and the warm run must take every run from the
run cache and its labels from the label cache (``--verbose``: a hit per run,
and per run and parser, no miss). Prints the times and ratios; exits non-zero
on any disagreement.

    python bench/bench_verify.py [--small] [--runs N] [--rounds N] [--in-process]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judge import compiled  # noqa: E402

from replicate.examples.judge_release import Split, Version, make_release  # noqa: E402

PARSER_NAMES = ("umbrela-checked@1", "umbrela-fallback@1", "umbrela-strict@1")
EDGE_METRICS = (
    "cells.both", "cells.only_old", "cells.only_new", "cells.neither", "regression_rate",
    "regression_share_of_old_correct", "backward_rate", "change_rate", "independence_ratio",
)
RUN_METRICS = (("em", "percent"), ("mae", "ratio"), ("pearson", "ratio"), ("unparsed", "count"))
FLOOR_METRICS = ("floor.regression_min", "floor.regression_max", "floor.change_min", "floor.change_max")


def write_release(root: Path, *, small: bool, runs: int = 22) -> tuple[Path, list[str], list[str]]:
    """A release of ``runs`` runs (``runs - 2`` versions and 2 repeats of the last) and its claims file."""
    styles = ("plain", "mto", "reasoning", "bold", "long", "plain")
    n = runs - 2
    last = f"v{n - 1}"
    versions = [Version(f"v{i}", accuracy=0.5 + 0.1 * i / n, stickiness=0.5, style=styles[i % len(styles)], odd_rate=0.05,
                        unparseable_rate=0.02) for i in range(n)]
    versions += [Version(f"{last}-r{k}", accuracy=versions[-1].accuracy, stickiness=0.85, style=styles[(n - 1) % len(styles)],
                         repeat_of=last) for k in (1, 2)]
    if small:
        splits = [Split("results", 4, 20, 19335), Split("results_2020", 4, 20, 1030303)]
    else:
        splits = [Split("results", 43, 216, 19335, items=9_260), Split("results_2020", 54, 211, 1030303, items=11_386)]
    release = make_release(root, versions, splits=splits, seed=7, compact=True)
    files = {**release.files, **release.repeats}
    names = list(release.files)
    repeats = [last, *release.repeats]
    lines = ["[study]", 'title = "bench"', "[runs]"]
    lines += [f'"{n}" = [{", ".join(repr(f).replace(chr(39), chr(34)) for f in fs)}]' for n, fs in files.items()]
    claims = []
    for a, b in zip(names, names[1:]):
        for m in EDGE_METRICS:
            unit = "count" if m.startswith("cells.") else ("ratio" if m == "independence_ratio" else "percent")
            claims.append(f'id = "{a}-{b}-{m}"\nmetric = "{m}"\nold = "{a}"\nnew = "{b}"\nvalue = "1"\nunit = "{unit}"')
    for n in names:
        for m, unit in RUN_METRICS:
            claims.append(f'id = "{n}-{m}"\nmetric = "{m}"\nrun = "{n}"\nvalue = "1"\nunit = "{unit}"')
    for m in FLOOR_METRICS:
        runs = ", ".join(f'"{r}"' for r in repeats)
        claims.append(f'id = "floor-{m}"\nmetric = "{m}"\nruns = [{runs}]\nvalue = "1"\nunit = "percent"')
    text = "\n".join(lines) + "\n" + "".join(f"\n[[claims]]\n{c}\n" for c in claims)
    path = root / "claims.toml"
    path.write_text(text)
    return path, names, repeats


def straightforward(claims_path: Path, root: Path) -> dict[tuple[str, str], float | int | None]:
    """One claim at a time: read its runs, label them, compute with compare/floor."""
    from replicate.judge.api import load_runs
    from replicate.judge.compare import compare
    from replicate.judge.floor import floor
    from replicate.judge.select import RunSpec
    from replicate.parsing import PARSERS, UNPARSED
    from replicate.verify.claims_file import load_claims

    cf = load_claims(claims_path)
    out: dict[tuple[str, str], float | int | None] = {}
    for c in cf.claims:
        for p in PARSERS.get_many(PARSER_NAMES):
            loaded = load_runs([RunSpec(n, tuple(root / f for f in cf.runs[n])) for n in c.run_names])
            runs = [r.label_with(p) for r in loaded.runs]
            if c.scope == "edge":
                cmp = compare(runs[0], runs[1], uncertainty=None, agreement=False)
                fig = cmp.to_json()
                value = fig["cells"][c.metric[6:]] if c.metric.startswith("cells.") else fig[c.metric]
            elif c.scope == "floor":
                fl = floor(runs)
                span = fl.regression_span if "regression" in c.metric else fl.change_span
                value = span.min if c.metric.endswith("min") else span.max
            else:
                r = runs[0]
                ok = r.labels != UNPARSED
                labels, gold = r.labels[ok].astype(int), r.gold[ok].astype(int)
                if c.metric == "unparsed":
                    value = int((~ok).sum())
                elif c.metric == "em":
                    value = float((labels == gold).mean())
                elif c.metric == "mae":
                    value = float(abs(labels - gold).mean())
                else:
                    import numpy as np

                    value = float(np.corrcoef(labels, gold)[0, 1])
            out[(c.id, p.name)] = value
    return out


def ours(claims_path: Path, root: Path) -> dict[tuple[str, str], float | int | None]:
    from replicate.verify import verify

    v = verify(claims_path, root=str(root), parsers=list(PARSER_NAMES), date="2026-01-01")
    return {(r.claim.id, p): r.computed[p].to_json() for r in v.runs.results for p in r.parsers}


Values = dict[tuple[str, str], "float | int | None"]


def agree(a: Values, b: Values) -> None:
    """Raise SystemExit unless both recomputed the same claims to the same values (1e-12)."""
    if a.keys() != b.keys():
        raise SystemExit(f"MISMATCH: the two approaches recomputed different claims: {sorted(a.keys() ^ b.keys())[:5]}")
    for k in a:
        x, y = a[k], b[k]
        if (x is None or y is None) and not (x is None and y is None):
            raise SystemExit(f"MISMATCH on {k}: {x} vs {y}")
        if x is not None and y is not None and abs(x - y) > 1e-12 * max(1.0, abs(x)):
            raise SystemExit(f"MISMATCH on {k}: {x} vs {y}")


def in_process(claims_path: Path, root: Path) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    a = straightforward(claims_path, root)
    t1 = time.perf_counter()
    b = ours(claims_path, root)
    t2 = time.perf_counter()
    agree(a, b)
    return t1 - t0, t2 - t1, len(a)


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str, str]:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:5])} ... exited {p.returncode}:\n{p.stderr[-2000:]}")
    return secs, p.stdout, p.stderr


def of_json(out: str) -> Values:
    return {(c["id"], p): v for c in json.loads(out)["claims"] for p, v in c["computed"].items()}


def whole_process(claims_path: Path, root: Path, *, rounds: int, runs: int) -> tuple[dict[str, float], int]:
    """Alternating rounds of the per-claim script, verify cold and verify warm, each a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "REPLICATE_CACHE_DIR"}
    per_claim = [sys.executable, str(Path(__file__).resolve()), "--per-claim", str(claims_path), str(root)]
    parsers = [a for p in PARSER_NAMES for a in ("-p", p)]
    cmd = [sys.executable, "-m", "replicate", "--verbose", "verify", str(claims_path), "--root", str(root), *parsers,
           "-f", "json", "--date", "2026-01-01", "--no-fail"]
    times: dict[str, list[float]] = {"straightforward": [], "cold": [], "warm": []}
    for r in range(rounds):
        cache = root / f"cache-{r}"
        env["REPLICATE_CACHE_DIR"] = str(cache)
        secs, out, _ = timed(per_claim, env)
        times["straightforward"].append(secs)
        ref = {(k[0], k[1]): v for k, v in ((tuple(k.split("\t")), v) for k, v in json.loads(out).items())}
        secs, cold, err = timed(cmd, env)
        times["cold"].append(secs)
        if err.count("label cache: miss") != runs * len(PARSER_NAMES):
            raise SystemExit(f"verify did not write a label cache entry per run and parser:\n{err[-1000:]}")
        secs, warm, err = timed(cmd, env)
        times["warm"].append(secs)
        if err.count("label cache: hit") != runs * len(PARSER_NAMES) or "label cache: miss" in err:
            raise SystemExit(f"verify did not read every run's labels from the label cache:\n{err[-1000:]}")
        if err.count("run cache: hit") != runs or "run cache: miss" in err:
            raise SystemExit(f"verify did not take every run from the run cache:\n{err[-1000:]}")
        if warm != cold:
            raise SystemExit("MISMATCH: the warm verify output differs from the cold one")
        agree(ref, of_json(cold))
        shutil.rmtree(cache, ignore_errors=True)
    return {k: statistics.median(v) for k, v in times.items()}, len(ref)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a tiny release (smoke test)")
    ap.add_argument("--rounds", type=int, default=None, help="whole-process rounds (default 3; 1 with --small)")
    ap.add_argument("--runs", type=int, default=None, help="runs in the release, 2 of them repeats (default 22; 8 with --small)")
    ap.add_argument("--in-process", action="store_true", help="also time both in one interpreter (minutes at 22 runs)")
    ap.add_argument("--per-claim", nargs=2, type=Path, metavar=("CLAIMS", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.per_claim is not None:  # the straightforward loop as a whole process: values as JSON
        values = straightforward(*args.per_claim)
        print(json.dumps({f"{cid}\t{p}": v for (cid, p), v in values.items()}))
        return 0
    rounds = args.rounds or (1 if args.small else 3)
    n_runs = args.runs or (8 if args.small else 22)
    if n_runs < 4:
        ap.error("--runs must be at least 4 (two versions and two repeats)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        claims_path, names, repeats = write_release(root, small=args.small, runs=n_runs)
        runs = len(set(names) | set(repeats))
        n_claims = sum(1 for line in claims_path.read_text().splitlines() if line == "[[claims]]")
        items = sum(1 for f in (root / "results", root / "results_2020") for _ in (f / f"{names[0]}_annotations.jsonl").open())
        print(f"{n_runs} runs x {items:,} items, {n_claims} claims, {len(PARSER_NAMES)} parsers")
        print(compiled())
        if args.in_process:
            slow, fast, _ = in_process(claims_path, root)
            print(f"in one interpreter: straightforward {slow:.2f} s, verify {fast:.2f} s, ratio {slow / fast:.1f}x "
                  "(values agree)")
        t, n = whole_process(claims_path, root, rounds=rounds, runs=runs)
    print(f"whole process, {n} claim x parser values, median of {rounds} alternating round(s) (values agree; warm output = cold output, "
          f"every run's labels read from the label cache when warm):")
    print(f"  straightforward per-claim script   {t['straightforward']:7.2f} s")
    for state in ("cold", "warm"):
        print(f"  replicate verify -f json, {state}     {t[state]:7.2f} s   ratio {t['straightforward'] / t[state]:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
