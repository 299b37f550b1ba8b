"""Benchmark: `verify` (read each file once, label once per parser, cache edges) vs a per-claim loop.

A synthetic release written to a temporary directory: 6 versions and 2
repeats, each pooling a DL 2019-like and a DL 2020-like file (20,646 items per
run in full size), and a claims file of 73 claims (every edge figure of the 5
adjacent edges, 4 run figures per version, the 4 floor figures), verified
under 3 parsers.

- straightforward: for each claim and each parser, read the claim's runs from
  disk, label them, and compute the figure with the judge library's
  ``compare``/``floor`` (what a script per printed number would do);
- ours: :func:`replicate.verify.verify`.

Every recomputed value must agree (to 1e-12). Prints both times and the ratio.

    python bench/bench_verify.py [--small]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from replicate.examples.judge_release import Split, Version, make_release

PARSER_NAMES = ("umbrela-checked@1", "umbrela-fallback@1", "umbrela-strict@1")
EDGE_METRICS = (
    "cells.both", "cells.only_old", "cells.only_new", "cells.neither", "regression_rate",
    "regression_share_of_old_correct", "backward_rate", "change_rate", "independence_ratio",
)
RUN_METRICS = (("em", "percent"), ("mae", "ratio"), ("pearson", "ratio"), ("unparsed", "count"))
FLOOR_METRICS = ("floor.regression_min", "floor.regression_max", "floor.change_min", "floor.change_max")


def write_release(root: Path, *, small: bool) -> tuple[Path, list[str], list[str]]:
    styles = ("plain", "mto", "reasoning", "bold", "long", "plain")
    versions = [Version(f"v{i}", accuracy=0.5 + 0.02 * i, stickiness=0.5, style=styles[i], odd_rate=0.05,
                        unparseable_rate=0.02) for i in range(6)]
    versions += [Version(f"v5-r{k}", accuracy=0.6, stickiness=0.85, style="plain", repeat_of="v5") for k in (1, 2)]
    if small:
        splits = [Split("results", 4, 20, 19335), Split("results_2020", 4, 20, 1030303)]
    else:
        splits = [Split("results", 43, 216, 19335, items=9_260), Split("results_2020", 54, 211, 1030303, items=11_386)]
    release = make_release(root, versions, splits=splits, seed=7, compact=True)
    files = {**release.files, **release.repeats}
    names = list(release.files)
    repeats = ["v5", *release.repeats]
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
    from replicate.verify.claims import load_claims

    cf = load_claims(claims_path)
    out: dict[tuple[str, str], float | int | None] = {}
    for c in cf.claims:
        for p in PARSERS.get_many(PARSER_NAMES):
            loaded = load_runs([RunSpec(n, tuple(root / f for f in cf.runs[n])) for n in c.run_names])
            runs = [r.label_with(p) for r in loaded.runs]
            if c.scope == "edge":
                cmp = compare(runs[0], runs[1])
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
    return {(r.claim.id, p): r.computed[p].to_json() for r in v.results for p in r.parsers}


def run(small: bool) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        claims_path, _, _ = write_release(root, small=small)
        t0 = time.perf_counter()
        a = straightforward(claims_path, root)
        t1 = time.perf_counter()
        b = ours(claims_path, root)
        t2 = time.perf_counter()
    assert a.keys() == b.keys(), "both approaches must recompute the same claims"
    for k in a:
        x, y = a[k], b[k]
        if x is None or y is None:
            assert x is None and y is None, k
        else:
            assert abs(x - y) <= 1e-12 * max(1.0, abs(x)), (k, x, y)
    return t1 - t0, t2 - t1, len(a)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a tiny release (smoke test)")
    args = ap.parse_args(argv)
    slow, fast, n = run(args.small)
    size = "small" if args.small else "8 runs x 20,646 items"
    print(f"{n} claim x parser values, {size}: straightforward {slow:.2f} s, verify {fast:.2f} s, "
          f"ratio {slow / fast:.1f}x (values agree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
