"""``replicate regrade``: size and draw a human re-validation sample for a judge swap (pure but for the draw's file).

The pilot pool is the pairs both runs (OLD, NEW) labelled, with their human
grades; strata are NEW's grades, clusters the first key field (the query).
:mod:`replicate.stats.regrade` holds the figures; this module builds the pool,
collects the sizing per metric and writes the sample a person grades.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from replicate.errors import Message, Param, UsageError
from replicate.judge.align import align
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.parsing import UNPARSED
from replicate.stats.regrade import (
    METRICS,
    Pool,
    analytic_n,
    icc_anova,
    simulated_half_width,
    simulated_n,
    stratified_sample,
)


@dataclass(frozen=True)
class MetricSizing:
    metric: str
    pool_value: float
    icc: float | None  # of the pair's indicator (EM, regression); None for kappa
    analytic_n: int | None
    analytic_checked: float | None  # the simulated half-width at analytic_n
    simulated_n: int | None

    def to_json(self) -> dict:
        return {"metric": self.metric, "pool_value": self.pool_value, "icc": self.icc,
                "analytic_n": self.analytic_n, "simulated_half_width_at_analytic_n": self.analytic_checked,
                "simulated_n": self.simulated_n}


@dataclass(frozen=True, eq=False)
class RegradePlan:
    old: str
    new: str
    parser: str
    pairs: int
    left_out: int  # pairs unparsed on a side
    queries: int
    strata: tuple[tuple[int, int], ...]  # (NEW's grade, pairs)
    half_width: float
    replicates: int
    seed: int
    sizings: tuple[MetricSizing, ...]
    key_names: tuple[str, ...]
    draw: dict[str, Any] | None = field(default=None)

    @property
    def recommended(self) -> int | None:
        ns = [s.simulated_n for s in self.sizings]
        return None if any(n is None for n in ns) else max(n for n in ns if n is not None)

    def to_json(self) -> dict:
        return {"old": self.old, "new": self.new, "parser": self.parser, "pairs": self.pairs,
                "left_out_unparsed": self.left_out, "queries": self.queries,
                "strata": [{"grade": g, "pairs": n} for g, n in self.strata],
                "half_width": self.half_width, "confidence_level": 0.95, "replicates": self.replicates,
                "seed": self.seed, "metrics": [s.to_json() for s in self.sizings],
                "recommended_n": self.recommended, "draw": self.draw,
                "method": "stratified by NEW's grade (proportional); simulated: whole queries resampled, then the "
                          "stratified sample drawn; analytic: design effect 1 + (n/Q - 1) rho"}


def pool_of(old: LabelledRun, new: LabelledRun) -> tuple[Pool, np.ndarray, int]:
    """The pool of pairs both runs labelled, their keys, and how many pairs were left out as unparsed."""
    al = align([old, new])
    ok = (al.labels[0] != UNPARSED) & (al.labels[1] != UNPARSED)
    keys = al.keys[ok]
    queries = np.asarray([str(k).split(KEY_SEP, 1)[0] for k in keys], dtype=object)
    _, clusters = np.unique(queries, return_inverse=True)
    gold = al.gold[ok].astype(np.int64)
    if (gold < 0).any():
        raise UsageError("regrade needs a human grade for every pair (gold): some pairs have none")
    pool = Pool(strata=al.labels[1][ok].astype(np.int64), clusters=clusters, new=al.labels[1][ok].astype(np.int64),
                gold=gold, old_right=al.labels[0][ok] == al.gold[ok])
    return pool, keys, int((~ok).sum())


def plan_regrade(old: LabelledRun, new: LabelledRun, *, half_width: float, metrics: Sequence[str] = METRICS,
                 replicates: int = 400, seed: int = 0) -> tuple[RegradePlan, Pool, np.ndarray]:
    if not 0 < half_width < 1:
        raise UsageError(Message(Param("half_width"), f" must lie in (0, 1), e.g. 0.06 for +-6 points; got {half_width}"))
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise UsageError(Message(Param("metrics"), f": unknown {', '.join(bad)}; one of {', '.join(METRICS)}"))
    if replicates < 50:
        raise UsageError(Message(Param("replicates"), f" must be at least 50, got {replicates}"))
    pool, keys, left_out = pool_of(old, new)
    if pool.n < 10:
        raise UsageError(f"{pool.n} pairs labelled by both runs: too few to size a sample from")
    sizings = []
    for m in dict.fromkeys(metrics):
        a = analytic_n(pool, m, half_width) if m != "kappa" else None
        checked = (simulated_half_width(pool, m, a, replicates=replicates, seed=seed) if a is not None else None)
        sizings.append(MetricSizing(
            m, pool.value(m), None if m == "kappa" else icc_anova(pool.indicator(m).astype(float), pool.clusters),
            a, checked, simulated_n(pool, m, half_width, replicates=replicates, seed=seed)))
    grades, counts = np.unique(pool.strata, return_counts=True)
    plan = RegradePlan(old.name, new.name, new.parser, pool.n, left_out, pool.n_clusters,
                       tuple((int(g), int(c)) for g, c in zip(grades, counts)), half_width, replicates, seed,
                       tuple(sizings), tuple(new.key_names or ("key",)))
    return plan, pool, keys


def draw_sample(pool: Pool, keys: np.ndarray, n: int, *, seed: int, key_names: Sequence[str]) -> tuple[bytes, dict]:
    """The CSV a person grades (key fields, an empty human_grade; NEW's grade not shown) and the draw's record."""
    import csv
    import io

    if not 1 <= n <= pool.n:
        raise UsageError(Message(Param("n"), f" must lie in [1, {pool.n}] (the pairs both runs labelled), got {n}"))
    idx, _ = stratified_sample(pool.strata, n, np.random.default_rng(seed))
    idx = np.sort(idx)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*key_names, "human_grade"])
    for i in idx.tolist():
        parts = str(keys[i]).split(KEY_SEP)
        w.writerow([*parts, ""])
    data = buf.getvalue().encode()
    grades, drawn = np.unique(pool.strata[idx], return_counts=True)
    record = {"n": n, "seed": seed, "strata": "the new judge's grade (proportional allocation, largest remainder)",
              "drawn": [{"grade": int(g), "pairs": int(c)} for g, c in zip(grades, drawn)],
              "sha256": hashlib.sha256(data).hexdigest(),
              "keys": [str(keys[i]) for i in idx.tolist()]}
    return data, record


def render_regrade(plan: RegradePlan, fmt: Any) -> str:
    from replicate.output import Format, pct, prose, table

    fmt = Format(fmt)

    def n_text(n: int | None) -> str:
        return "unreachable" if n is None else str(n)

    rows = [[s.metric, f"{s.pool_value:.3f}" if s.metric == "kappa" else pct(s.pool_value, 1),
             "-" if s.icc is None else f"{s.icc:.3f}", "-" if s.metric == "kappa" else n_text(s.analytic_n),
             "-" if s.analytic_checked is None else f"+-{100 * s.analytic_checked:.1f} pts", n_text(s.simulated_n)]
            for s in plan.sizings]
    head = (f"Human re-validation of {plan.old} -> {plan.new}: pairs for +-{100 * plan.half_width:g} points "
            f"(95%), stratified by {plan.new}'s grade")
    strata = ", ".join(f"grade {g}: {n}" for g, n in plan.strata)
    out = [f"## {head}\n" if fmt is Format.markdown else f"{head}\n",
           f"pool: {plan.pairs} pairs over {plan.queries} queries ({strata}); {plan.left_out} unparsed on a side "
           f"left out; parser {plan.parser}\n",
           table(rows, ["metric", "pool value", "ICC", "analytic n", "simulated +- at analytic n", "simulated n"], fmt),
           prose(f"\nanalytic n: stratified share with the queries' design effect; simulated: {plan.replicates} "
                 f"replicates (seed {plan.seed}) resampling whole queries, then drawing the stratified sample; "
                 "'simulated +-' checks the analytic n; simulated n: the smallest n the simulation says reaches "
                 "the target (kappa: simulation only). Unreachable: even every pair leaves the queries' own "
                 "spread above the target (more queries are needed, not more pairs).\n", fmt)]
    out.append(f"recommended n: {n_text(plan.recommended)}")
    if plan.draw is not None:
        d = plan.draw
        got = ", ".join(f"grade {x['grade']}: {x['pairs']}" for x in d["drawn"])
        out.append(f"drew {d['n']} pairs (seed {d['seed']}; {got}) into {d['out']} (sha256 {d['sha256']}) and "
                   f"{Path(d['out']).name}.draw.json")
    return "\n".join(out)
