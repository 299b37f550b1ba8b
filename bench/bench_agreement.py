"""Benchmark: `replicate agreement` as a whole process vs a straightforward sklearn + krippendorff loop.

On the 8 LLMJudge runs x 4,423 (query, passage) pairs against the human qrels
(committed under ``fixtures/case-studies/llmjudge``, decompressed into a temporary
directory so that both sides read the same plain files), every figure (kappa
unweighted / linear / quadratic, Scott's pi, alpha nominal / ordinal / interval /
ratio, tau-b, rho) on the grades as read and binarized at 1, 2 and 3, each with
a 95% cluster-bootstrap interval (25 query clusters), each side in a fresh
interpreter:

- straightforward: a plain script reading the files line by line, and for each
  run, each replicate (the observed sample, then the same cluster draws as ours:
  ``default_rng(seed).integers(G, size=(B, G))``) and each reading, the items of
  the drawn queries concatenated and every figure recomputed with
  ``sklearn.metrics.cohen_kappa_score`` (``labels``: every whole number from the
  smallest grade to the largest, so that its weights are over the grades' values,
  the stray 10 of h2oloo-zeroshot2 included), ``krippendorff.alpha``,
  ``scipy.stats.kendalltau`` / ``spearmanr`` and a few lines for Scott's pi;
  ``numpy.percentile`` over the replicates, each arm stretched for the number of
  clusters (``sqrt(G/(G-1)) t_{G-1} / z``, scipy's quantiles) as the tool does;
- ours: ``replicate --no-cache agreement RUN... --gold QRELS --binarize 1,2,3 -f json``.

Both run at ``--check-replicates`` replicates (default 100) and must agree on
every value and bound to 1e-9 (exit 1 otherwise); the ratio at that size is
measured. Ours is also timed at 1,000 replicates; the loop's time at 1,000 is
its measured time at the check size scaled by the replicates (its cost is
linear in them: one pass per replicate), and printed as such unless
``--check-replicates 1000`` runs it whole. Wall and CPU seconds are both
printed (on a shared machine the wall time waits for other processes).
``--small``: 2 runs and 20 replicates, no scaling.

    python bench/bench_agreement.py [--small] [--check-replicates N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "fixtures" / "case-studies" / "llmjudge"
QRELS = "llmjudge_test_qrel_idx.txt"
RUNS = ["h2oloo-zeroshot1", "h2oloo-zeroshot2", "willia-umbrela1", "Olz-gpt4o", "TREMA-direct",
        "NISTRetrieval-instruct0", "NISTRetrieval-instruct1", "NISTRetrieval-instruct2"]
THRESHOLDS = (1, 2, 3)

#: The straightforward whole-process script: argv = replicates seed QRELS RUN...; prints JSON.
STRAIGHTFORWARD = r'''
import json, sys, warnings
import numpy as np
import krippendorff
from scipy.stats import kendalltau, norm, spearmanr, t as t_dist
from sklearn.metrics import cohen_kappa_score

warnings.simplefilter("ignore")
B, seed, qrels, runs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]

def read(path):
    out = {}
    for line in open(path):
        q, _, d, g = line.split()
        out[(q, d)] = int(g)
    return out

gold = read(qrels)
labels = {r: read(r) for r in runs}
keys = sorted(set(gold).intersection(*[set(v) for v in labels.values()]))
queries = sorted({q for q, _ in keys})
members = {q: [] for q in queries}
for i, (q, _) in enumerate(keys):
    members[q].append(i)
g = np.array([gold[k] for k in keys])
domain = sorted(set(g.tolist()).union(*[set(v.values()) for v in labels.values()]))
draws = np.random.default_rng(seed).integers(len(queries), size=(B, len(queries)))
samples = [np.arange(len(keys))] + [np.concatenate([members[queries[c]] for c in row]) for row in draws]

def pi(a, b):
    n = len(a)
    p_o = np.mean(a == b)
    vals, counts = np.unique(np.concatenate([a, b]), return_counts=True)
    p_e = np.sum((counts / (2 * n)) ** 2)
    return (p_o - p_e) / (1 - p_e) if p_e != 1 else float("nan")

def alpha(a, b, level, dom):
    try:
        return krippendorff.alpha(np.vstack([a, b]).astype(float), value_domain=dom, level_of_measurement=level)
    except ValueError:
        return float("nan")

def figures(a, b, dom):
    whole = list(range(min(dom), max(dom) + 1))  # sklearn weighs positions: every whole number makes them values
    return {
        "cohen_kappa": cohen_kappa_score(a, b, labels=whole),
        "cohen_kappa_linear": cohen_kappa_score(a, b, labels=whole, weights="linear"),
        "cohen_kappa_quadratic": cohen_kappa_score(a, b, labels=whole, weights="quadratic"),
        "scott_pi": pi(a, b),
        **{f"krippendorff_alpha_{lv}": alpha(a, b, lv, dom) for lv in ("nominal", "ordinal", "interval", "ratio")},
        "kendall_tau": kendalltau(a, b).statistic,
        "spearman": spearmanr(a, b).statistic,
    }

out = {}
for r in runs:
    x = np.array([labels[r][k] for k in keys])
    for t in [None, 1, 2, 3]:
        reps = []
        for idx in samples:
            a, b = x[idx], g[idx]
            if t is not None:
                a, b = (a >= t).astype(int), (b >= t).astype(int)
            reps.append(figures(a, b, domain if t is None else [0, 1]))
        row = {}
        for f in reps[0]:
            v = np.array([rep[f] for rep in reps[1:]], dtype=float)
            v = v[~np.isnan(v)]
            value = float(reps[0][f])
            bounds = [None, None]
            if len(v) and not np.isnan(value):
                # percentile arms stretched for the number of clusters, as every interval of the tool:
                # sqrt(G / (G - 1)) * t(G - 1) / z, kept within [-1, 1]
                G = len(queries)
                c = np.sqrt(G / (G - 1)) * t_dist.ppf(0.975, G - 1) / norm.ppf(0.975)
                lo, hi = float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))
                bounds = [max(-1.0, value - c * (value - lo)), min(1.0, value + c * (hi - value))]
            row[f] = [None if np.isnan(value) else value, *bounds]
        out[f"{r.rsplit('/', 1)[-1]}\t{t}"] = row
print(json.dumps(out))
'''


def decompressed(root: Path) -> tuple[Path, list[Path]]:
    """The committed qrels and 8 runs, decompressed under ``root`` (the loop reads plain text)."""
    paths = []
    for name in [QRELS, *(f"{r}.txt" for r in RUNS)]:
        paths.append(root / name)
        paths[-1].write_bytes(gzip.decompress((DATA / f"{name}.gz").read_bytes()))
    return paths[0], paths[1:]


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + sys) and standard output of a fresh process."""
    t, c = time.perf_counter(), _children_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs, cpu = time.perf_counter() - t, _children_cpu() - c
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... exited {p.returncode}:\n{p.stderr[-2000:]}")
    return secs, cpu, p.stdout


def ours_cmd(qrels: Path, runs: list[Path], replicates: int) -> list[str]:
    return [sys.executable, "-m", "replicate", "--no-cache", "agreement", *map(str, runs), "--reader", "trec-qrels@1",
            "--gold", str(qrels), "--gold-reader", "trec-qrels@1", "--binarize", ",".join(map(str, THRESHOLDS)),
            "--replicates", str(replicates), "--seed", "0", "-f", "json"]


def disagreements(ours: str, plain: str) -> list[str]:
    """Where our values or bounds differ from the loop's by more than 1e-9."""
    rows = {f"{r['left']}\t{r['binarize']}": r for r in json.loads(ours)["rows"]}
    bad = []
    for key, figs in json.loads(plain).items():
        row = rows[key]
        for fig, (value, low, high) in figs.items():
            iv = row["interval"][fig] or {"low": None, "high": None}  # no interval where the figure is undefined
            if value is None:  # undefined (a run that never grades 3, binarized at 3, is constant: no tau-b or rho)
                low = high = None
            got = (row[fig], iv["low"], iv["high"])
            if any((x is None) != (y is None) or (x is not None and abs(x - y) > 1e-9)
                   for x, y in zip(got, (value, low, high))):
                bad.append(f"{key.replace(chr(9), ' >= ')} {fig}: ours {got}, loop {(value, low, high)}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="2 runs, 20 replicates (for CI)")
    ap.add_argument("--check-replicates", type=int, help="replicates of the compared runs (default 100; --small 20)")
    args = ap.parse_args(argv)
    check = args.check_replicates or (20 if args.small else 100)
    with tempfile.TemporaryDirectory(prefix="bench-agreement-") as tmp:
        qrels, runs = decompressed(Path(tmp))
        source = "LLMJudge runs"
        runs = runs[:2] if args.small else runs
        script = Path(tmp) / "plain.py"
        script.write_text(STRAIGHTFORWARD)
        print(f"{len(runs)} runs from {source}; figures: 10 x (as read + {len(THRESHOLDS)} thresholds)")
        w_ours, c_ours, ours = timed(ours_cmd(qrels, runs, check))
        w_plain, c_plain, plain = timed([sys.executable, str(script), str(check), "0", str(qrels), *map(str, runs)])
        bad = disagreements(ours, plain)
        print(f"at {check} replicates: straightforward {w_plain:.2f} s wall ({c_plain:.2f} s CPU), "
              f"ours {w_ours:.2f} s wall ({c_ours:.2f} s CPU); ratio {w_plain / w_ours:.1f}x wall, "
              f"{c_plain / c_ours:.1f}x CPU (measured)")
        if not args.small and check < 1000:
            w_full, c_full, _ = timed(ours_cmd(qrels, runs, 1000))
            scale = 1001 / (check + 1)  # the observed sample plus each replicate: one pass each
            print(f"at 1000 replicates: ours {w_full:.2f} s wall ({c_full:.2f} s CPU, measured); straightforward "
                  f"about {w_plain * scale:.0f} s wall ({c_plain * scale:.0f} s CPU: its {check}-replicate time "
                  f"x 1001/{check + 1}); ratio about {w_plain * scale / w_full:.0f}x wall, "
                  f"{c_plain * scale / c_full:.0f}x CPU")
        if bad:
            print(f"DISAGREE on {len(bad)} values or bounds:\n  " + "\n  ".join(bad[:10]))
            return 1
        print(f"values and interval bounds agree to 1e-9 ({len(json.loads(plain))} rows x 10 figures)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
