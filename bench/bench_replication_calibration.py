"""Calibration: how often `verify --replication` gives a wrong verdict, measured by simulation (seeded).

Each replicate draws a release from a known truth, prints its claims (the
release's own figures, rounded as a paper prints them: correct claims), draws
a fresh collection and runs the check (:func:`replicate.verify.trials_check.check_trials`,
tables written as JSONL and read back, as ``verify`` does).

Designs (models ``a`` and ``b``; ``b`` improves 20 of the 200 items by 0.30):

- ``all``: 200 items, K = 30, fresh = all the release's items;
- ``random15`` / ``easiest15`` / ``items25-44``: the fresh collection holds
  15 random items, the 15 easiest (highest rate of ``a``) or items 25-44;
- ``paired240``: 240 items, 40 truly improved by +0.45 and 20 regressed by
  0.45, K = 50, all items (the paired share's power);
- ``differs``: as ``all``, but the fresh truth differs: ``a`` 10 points more
  accurate on every item and ``b``'s improvement gone; a ``replicates``
  verdict on a claim whose figure moved by more than the tolerance is wrong.

Tolerance 5 points. Per design and metric family: the rate of ``does not
replicate`` on correct claims (target <= 5%), of ``replicates`` (power) and
of ``underpowered``, each with its Monte Carlo standard error; for
``differs``, the rate of ``replicates`` among the claims whose fresh figure
lies more than the tolerance from the release's (target <= 5%). Exits 1 when a false-verdict rate exceeds 5% by more
than 3 Monte Carlo standard errors.

``--ideal`` measures the means' test alone, without the pipeline: two
collections of the same truth (rates Beta(1.2, 2.5)) for N items and K trials
each, the share of "does not replicate" from the z test and from the t test
with Welch-Satterthwaite degrees of freedom that verify uses
(:func:`replicate.stats.replication.paired_mean_difference`).

    python bench/bench_replication_calibration.py [--small] [--reps N] [--seed S] [--ideal] [--jobs N]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from replicate.trials.fresh import restrict
from replicate.trials.load import TrialsTable, read_trials
from replicate.verify.claims_file import parse_claims
from replicate.verify.trials_check import check_trials
from replicate.verify.trials_recompute import TrialsRecomputer
from support.synth.trials import synthetic_rows, write_jsonl  # noqa: E402

SEED = 20261204
TOLERANCE = "0.05"
TARGET = 0.05

#: (id, metric, unit, names, family shown)
CLAIMS = [
    ("acc-a", "accuracy", "percent", {"model": "a", "benchmark": "bench"}, "mean"),
    ("acc-b", "accuracy", "percent", {"model": "b", "benchmark": "bench"}, "mean"),
    ("delta", "items.delta", "percent", {"edge": "a:b", "benchmark": "bench"}, "mean"),
    ("p-plus", "items.p_plus", "percent", {"edge": "a:b", "benchmark": "bench"}, "paired share"),
    ("p-minus", "items.p_minus", "percent", {"edge": "a:b", "benchmark": "bench"}, "paired share"),
    ("p-chg", "items.p_chg", "percent", {"edge": "a:b", "benchmark": "bench"}, "paired share"),
    ("improved", "items.improved", "count", {"edge": "a:b", "benchmark": "bench"}, "paired share"),
    ("equivalent", "items.equivalent", "percent", {"edge": "a:b", "benchmark": "bench"}, "paired share"),
    ("inconclusive", "items.inconclusive", "percent", {"edge": "a:b", "benchmark": "bench"}, "paired share"),
    ("screen", "screen.share", "percent", {"benchmark": "bench"}, "share (unpaired)"),
    ("n", "items.n", "count", {"edge": "a:b", "benchmark": "bench"}, "design"),
]
FAMILY = {cid: fam for cid, _, _, _, fam in CLAIMS}


def truth(n: int, rng: np.random.Generator, *, up: int, down: int, by: float) -> dict[str, np.ndarray]:
    """Rates of a and b per item: a ~ Beta(1.2, 2.5); b = a, ``up`` items + ``by``, the next ``down`` - ``by``."""
    a = rng.beta(1.2, 2.5, n)
    b = a.copy()
    b[:up] = np.minimum(a[:up] + by, 1.0)
    b[up:up + down] = np.maximum(a[up:up + down] - by, 0.0)
    return {"a": a, "b": b}


def _claim(cid: str, metric: str, unit: str, names: dict, value: str) -> dict:
    return {"id": cid, "metric": metric, "trials": "s", "value": value, "unit": unit, "tolerance": TOLERANCE,
            **names}


def printed(release: TrialsTable) -> list[dict]:
    """The release's own figures, rounded to one decimal of a percent (counts as they are): correct claims."""
    draft = parse_claims({"trials": {"s": ["r.jsonl"]},
                          "claims": [_claim(i, m, u, nm, "0") for i, m, u, nm, _ in CLAIMS]}, path="c.toml")
    rc = TrialsRecomputer({"s": release})
    rc.prepare(draft.trials.claims)
    out = []
    for (cid, metric, unit, names, _), c in zip(CLAIMS, draft.trials.claims):
        v = rc.compute(c).value
        assert v is not None, cid
        out.append(_claim(cid, metric, unit, names, str(v) if unit == "count" else f"{float(Fraction(v) * 100):.1f}"))
    return out


def verdicts(claims: list[dict], release: TrialsTable, fresh: TrialsTable) -> dict[str, tuple[str, float]]:
    """id -> (verdict, fresh figure - the release's over all its items, as a fraction)."""
    cf = parse_claims({"trials": {"s": ["r.jsonl"]}, "claims": claims}, path="c.toml")
    tv = check_trials(cf.trials, {"s": release}, {"s": fresh})
    out = {}
    for r in tv.results:
        moved = math.nan
        if r.computed.value is not None and r.released is not None and r.released.value is not None:
            count = r.claim.printed.unit == "count"
            moved = _frac(r.computed.value, r.computed.n, count) - _frac(r.released.value, r.released.n, count)
        out[r.claim.id] = (r.verdict, moved)
    return out


def _frac(v, n: int | None, count: bool) -> float:
    """A figure as a fraction (a count as a share of its ``n`` items)."""
    return float(Fraction(v) / n) if count and n else float(v)


def table_of(rows: list[dict], tmp: Path, name: str) -> TrialsTable:
    write_jsonl(rows, tmp / name)
    return read_trials(tmp / name)


def _one(args: tuple[int, int, Path]) -> dict[str, dict[str, tuple[str, float]]]:
    rep, seed, tmp = args
    where = tmp / str(rep)  # each replicate's files apart: replicates may run in parallel
    where.mkdir()
    return one_replicate(rep, seed, where)


def _replicates(reps: int, seed: int, tmp: Path, jobs: int):
    """Each replicate's verdicts in order (``jobs`` processes; every replicate is seeded by its number)."""
    work = [(rep, seed, tmp) for rep in range(reps)]
    if jobs <= 1:
        yield from map(_one, work)
        return
    import multiprocessing as mp

    with mp.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap(_one, work)


def one_replicate(rep: int, seed: int, tmp: Path) -> dict[str, dict[str, tuple[str, float]]]:
    """Every design's verdicts for replicate ``rep`` (its own seeds: ``seed`` + 1000 * rep + design)."""
    rng = np.random.default_rng(seed + 1000 * rep)
    out: dict[str, dict[str, tuple[str, float]]] = {}
    t = truth(200, rng, up=20, down=0, by=0.30)
    s = seed + 1000 * rep
    release = table_of(synthetic_rows(t, k=30, seed=s + 1), tmp, "r.jsonl")
    claims = printed(release)
    fresh = table_of(synthetic_rows(t, k=30, seed=s + 2), tmp, "f.jsonl")
    names = [f"q{i:04d}" for i in range(200)]
    subsets = {
        "all": set(names),
        "random15": {names[i] for i in rng.choice(200, 15, replace=False)},
        "easiest15": {names[i] for i in np.argsort(-t["a"], kind="stable")[:15]},
        "items25-44": set(names[25:45]),
    }
    for design, keep in subsets.items():
        f = fresh if design == "all" else restrict(fresh, {("bench", i) for i in keep})
        out[design] = verdicts(claims, release, f)
    moved = {"a": np.minimum(t["a"] + 0.10, 1.0), "b": np.minimum(t["a"] + 0.10, 1.0)}
    out["differs"] = verdicts(claims, release, table_of(synthetic_rows(moved, k=30, seed=s + 3), tmp, "d.jsonl"))
    t240 = truth(240, rng, up=40, down=20, by=0.45)
    rel240 = table_of(synthetic_rows(t240, k=50, seed=s + 4), tmp, "r240.jsonl")
    out["paired240"] = verdicts(printed(rel240), rel240,
                                table_of(synthetic_rows(t240, k=50, seed=s + 5), tmp, "f240.jsonl"))
    return out


#: (items, trials per item) of ``--ideal``
IDEAL = ((200, 30), (15, 30), (15, 5), (5, 10), (40, 3), (15, 2))


def ideal(reps: int, seed: int) -> int:
    """``--ideal``: the false "does not replicate" rate of the means' z and t tests on equal truths."""
    from replicate.stats.replication import mean_rate_error, paired_mean_difference, satterthwaite_df

    print(f"means' test alone: {reps} simulated pairs of collections per row, seed {seed}, rates Beta(1.2, 2.5)")
    print("| items | trials | z test | t test, Welch-Satterthwaite df (verify) |\n| --- | --- | --- | --- |")
    for n, k in IDEAL:
        rng = np.random.default_rng([seed, n, k])
        z_rej = t_rej = 0
        valid = np.full(n, k)
        for _ in range(reps):
            p = rng.beta(1.2, 2.5, n)
            cf, cr = rng.binomial(k, p), rng.binomial(k, p)
            ef, er = mean_rate_error(cf, valid), mean_rate_error(cr, valid)
            mf, mr = float((cf / k).mean()), float((cr / k).mean())
            z = paired_mean_difference(mf, mr, ef[0], er[0])
            t = paired_mean_difference(mf, mr, ef[0], er[0], df=satterthwaite_df(ef, er))
            z_rej += z.low > 0 or z.high < 0
            t_rej += t.low > 0 or t.high < 0
        print(f"| {n} | {k} | {rate(z_rej, reps)} | {rate(t_rej, reps)} |")
    return 0


def clustered_se(counts: list[list[int]]) -> float:
    """The Monte Carlo s.e. of sum k / sum n over replicates ``[k, n]`` (linearised ratio, replicates independent)."""
    k = np.array([c[0] for c in counts], dtype=np.float64)
    n = np.array([c[1] for c in counts], dtype=np.float64)
    if len(k) < 2 or not n.sum():
        return math.nan
    p = k.sum() / n.sum()
    r = len(k)
    return float(math.sqrt(r / (r - 1) * ((k - p * n) ** 2).sum()) / n.sum())


def rate(k: int, n: int) -> str:
    if not n:
        return "-"
    p = k / n
    return f"{100 * p:5.1f}% ± {100 * math.sqrt(p * (1 - p) / n) if 0 < p < 1 else 100 * math.sqrt(0.25 / n):.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a few replicates (CI)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--ideal", action="store_true", help="the means' test alone, z against t (no pipeline)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (replicates are seeded by number: same results)")
    args = ap.parse_args(argv)
    if args.ideal:
        return ideal(args.reps or (500 if args.small else 30_000), args.seed)
    reps = args.reps or (8 if args.small else 200)
    start = time.perf_counter()
    tally: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    # per (design, family), per replicate: [does not replicate, claims]; the claims of one replicate share its
    # draws, so the Monte Carlo error of a rate is taken over replicates (clustered), not over claims
    per_rep: dict[tuple[str, str], list[list[int]]] = defaultdict(list)
    anywrong: dict[str, list[int]] = defaultdict(list)  # per design, per replicate: any false verdict at all
    with tempfile.TemporaryDirectory() as d:
        for outcome in _replicates(reps, args.seed, Path(d), args.jobs):
            for design, got in outcome.items():
                if design != "differs":
                    anywrong[design].append(int(any(v == "does not replicate" for v, _ in got.values())))
                seen: dict[str, list[int]] = defaultdict(lambda: [0, 0])
                for cid, (v, moved) in got.items():
                    seen[FAMILY[cid]][0] += v == "does not replicate"
                    seen[FAMILY[cid]][1] += 1
                    cell = tally[(design, FAMILY[cid])]
                    cell["n"] += 1
                    cell[v] += 1
                    if design == "differs" and not math.isnan(moved) and abs(moved) > float(TOLERANCE):
                        cell["moved"] += 1
                        cell["moved_replicates"] += v == "replicates"
                for fam, kn in seen.items():
                    per_rep[(design, fam)].append(kn)
    secs = time.perf_counter() - start
    print(f"replication calibration: {reps} replicates, seed {args.seed}, tolerance {TOLERANCE}, {secs:.1f} s")
    print("rate ± Monte Carlo standard error, over replicates x claims of the family (for 'does not replicate' "
          "also the error taken over replicates, in brackets: a replicate's claims share its draws)")
    print()
    print("| design | family | claims | does not replicate (correct claims) | replicates | underpowered "
          "| replicates where fresh - release > tolerance |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    bad = []
    for (design, fam), cell in tally.items():
        n = cell["n"]
        wrong_dnr = "(truth differs)" if design == "differs" else (
            f"{rate(cell['does not replicate'], n)} [{100 * clustered_se(per_rep[(design, fam)]):.1f}]")
        moved = rate(cell["moved_replicates"], cell["moved"]) if design == "differs" else "-"
        print(f"| {design} | {fam} | {n} | {wrong_dnr} | {rate(cell['replicates'], n)} | "
              f"{rate(cell['underpowered'], n)} | {moved} |")
        k, m = (cell["moved_replicates"], cell["moved"]) if design == "differs" else (cell["does not replicate"], n)
        if m and k / m > TARGET + 3 * math.sqrt(TARGET * (1 - TARGET) / m):
            bad.append(f"{design}/{fam}: {k} of {m}")
    print()
    print("A paper is judged on all its claims at once: the share of replicates in which any correct claim (of any "
          "family) reads 'does not replicate':")
    print()
    print("| design | claims per replicate | replicates with any 'does not replicate' |")
    print("| --- | --- | --- |")
    for design, flags in anywrong.items():
        per = sum(cell["n"] for (dn, _), cell in tally.items() if dn == design) // max(len(flags), 1)
        print(f"| {design} | {per} | {rate(sum(flags), len(flags))} |")
    if bad:
        print("\nFALSE-VERDICT RATE ABOVE 5% (beyond 3 Monte Carlo s.e.): " + "; ".join(bad))
        return 1
    print("\nevery false-verdict rate within 5% (3 Monte Carlo s.e.)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
