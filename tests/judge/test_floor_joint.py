"""The floor baseline's and the far-beyond inputs' intervals: one shared bootstrap, checked against a plain loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replicate.judge.floor import floor
from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import Uncertainty


def toy_runs(seed: int, queries: int = 7, per_query: int = 6, n_runs: int = 5, lack: dict[int, int] | None = None):
    """Judges over clustered items (labels 0-2, gold 0, -1 unparsed now and then); run r lacks its first lack[r] items."""
    rng = np.random.default_rng(seed)
    n = queries * per_query
    keys = np.array([f"q{i // per_query}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    gold = np.zeros(n, np.int16)
    hard = rng.normal(0, 1, queries)[np.arange(n) // per_query] + rng.normal(0, 1, n)
    out = []
    for r in range(n_runs):
        right = rng.normal(0.3, 1, n) > hard
        labels = np.where(right, 0, rng.integers(1, 3, n)).astype(np.int8)
        labels[rng.random(n) < 0.05] = -1
        sl = slice((lack or {}).get(r, 0), n)
        out.append(LabelledRun(f"r{r}", keys[sl], gold[sl], labels[sl], "toy@1"))
    return out


def percentile(values: list[float], q: float) -> float:
    """numpy's default (linear) percentile, written out."""
    v = sorted(values)
    h = (len(v) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def bounds(values: list[float | None], point: float | None = None, clusters: int = 0) -> tuple[float, float]:
    """Percentile bounds; with the point, each arm stretched by sqrt(G / (G - 1)) t_{G-1} / z (scipy's quantiles)."""
    kept = [v for v in values if v is not None]
    alpha = 1 - 0.95
    lo, hi = percentile(kept, alpha / 2), percentile(kept, 1 - alpha / 2)
    if point is None:
        return lo, hi
    c = math.sqrt(clusters / (clusters - 1)) * stats.t.ppf(0.975, clusters - 1) / stats.norm.ppf(0.975)
    return max(0.0, min(lo, point - c * (point - lo))), max(hi, point + c * (hi - point))


def items_of(run: LabelledRun) -> dict[str, tuple[int, int]]:
    return {k: (int(lab), int(g)) for k, lab, g in zip(run.keys.tolist(), run.labels.tolist(), run.gold.tolist())}


def pair_rates(old: dict, new: dict, drawn: list[str]) -> tuple[float | None, float | None]:
    """(regression rate, change rate) of old -> new over the items they share in the drawn queries (intersect)."""
    by_query: dict[str, list[str]] = {}
    for k in old:
        if k in new:
            by_query.setdefault(k.split(KEY_SEP)[0], []).append(k)
    n = regressed = changed = 0
    for q in drawn:
        for k in by_query.get(q, []):
            (a, g), (b, _) = old[k], new[k]
            if a < 0 or b < 0:
                continue
            n += 1
            regressed += a == g and b != g
            changed += a != b
    return (None, None) if n == 0 else (regressed / n, changed / n)


def loop_intervals(repeats, edge, main, replicates: int, seed: int) -> dict[str, tuple[float, float]]:
    """Every replicate by hand: draw query ids (the same draws for all parts), recount, recombine."""
    items = [items_of(r) for r in repeats]
    shared = set.intersection(*(set(i) for i in items))
    floor_items = [{k: v for k, v in i.items() if k in shared} for i in items]
    old, new = items_of(edge[0]), items_of(edge[1])
    main_items = items_of(main)

    def queries(*parts):  # the query ids of the items each part compares (those both of its runs have)
        return sorted({k.split(KEY_SEP)[0] for a, b in parts for k in a if k in b})

    pairs = [(i, j) for i in range(len(repeats)) for j in range(len(repeats)) if i != j]
    out: dict[str, list[float | None]] = {k: [] for k in ("mean", "ratio", "closest", "largest")}
    point: dict[str, float | None] = {}
    size: dict[str, int] = {}

    def combine(part: str, drawn: list[str]) -> dict[str, float | None]:
        rates = [pair_rates(floor_items[i], floor_items[j], drawn) for i, j in pairs]
        if part == "edge":
            regs = [r for r, _ in rates]
            edge_rate = pair_rates(old, new, drawn)[0]
            mean = None if None in regs else sum(regs) / len(regs)
            return {"mean": mean, "ratio": None if not mean or edge_rate is None else edge_rate / mean}
        changes = [c for _, c in rates]
        against = [pair_rates(main_items, i, drawn)[1] for i in items]
        return {"largest": None if None in changes else max(changes), "closest": None if None in against else min(against)}

    for part, ids in (("edge", queries((floor_items[0], floor_items[0]), (old, new))),
                      ("main", queries((floor_items[0], floor_items[0]), *((main_items, i) for i in items)))):
        rng = np.random.default_rng(seed)
        for _ in range(replicates):
            for k, v in combine(part, [ids[c] for c in rng.integers(len(ids), size=len(ids))]).items():
                out[k].append(v)
        for k, v in combine(part, ids).items():
            point[k], size[k] = v, len(ids)
    return {k: bounds(v, point[k], size[k]) for k, v in out.items()}


@pytest.mark.parametrize("lack", [None, {0: 6, 4: 12}])
def test_joint_intervals_equal_a_plain_loop_over_the_same_draws(lack):
    runs = toy_runs(3, lack=lack)
    repeats, edge, main = runs[:3], (runs[3], runs[4]), runs[4]
    st = Uncertainty(replicates=200, seed=5)
    fl = floor(repeats, edge=edge, main=main, uncertainty=st)
    ref = loop_intervals(repeats, edge, main, 200, 5)
    e, m = fl.edge, fl.main
    assert e is not None and e.baseline_interval is not None and m is not None and m.intervals is not None
    got = {
        "mean": e.baseline_interval["expected_regression_rate"], "ratio": e.baseline_interval["ratio"],
        "closest": m.intervals["closest_change_rate"], "largest": m.intervals["largest_repeat_change_rate"],
    }
    for k, iv in got.items():
        assert (iv.low, iv.high) == pytest.approx(ref[k], rel=1e-12, abs=1e-15), k
        assert iv.replicates == 200 and iv.cluster == "query_id" and iv.seed == 5
    # the point figures lie inside their intervals, and the JSON carries them where the rule reads them
    assert e.baseline_interval["ratio"].contains(e.floor_ratio)
    js = fl.to_json()
    assert js["main"]["closest"]["interval"]["rate"] == m.intervals["closest_change_rate"].to_json()
    assert set(js["main"]["far_beyond_rule"]["interval"]) == {"closest_change_rate", "largest_repeat_change_rate"}
    differ = "their item sets differ" in js["edge"]["floor_baseline"]["resampling"]
    assert differ == (lack is not None)
    flagged = any(f["code"] == "items_differ_from_floor" for f in js["edge"]["sample_flags"])
    assert flagged == (lack is not None)


def test_item_bootstrap_draws_every_part_with_the_same_items():
    """Without a cluster key the union's items are drawn; equal parts give equal replicates (ratio of a pair to itself)."""
    runs = toy_runs(8, queries=10, per_query=8)
    repeats = runs[:2]
    st = Uncertainty(replicates=300, seed=1, cluster="item")
    fl = floor(repeats, edge=(runs[0], runs[1]), uncertainty=st)
    e = fl.edge
    assert e is not None and e.baseline_interval is not None
    iv = e.baseline_interval["expected_regression_rate"]
    assert iv.cluster is None and iv.method == "item-bootstrap-percentile" and iv.assumes == "independent items"
    assert iv.clusters == 80
    # edge r0 -> r1 is one of the floor's two pairs; mean = (edge + reverse) / 2, so the ratio moves with the draws
    assert e.baseline_interval["ratio"].low < e.floor_ratio < e.baseline_interval["ratio"].high


def test_no_intervals_without_settings():
    runs = toy_runs(2)
    fl = floor(runs[:3], edge=(runs[3], runs[0]), main=runs[4])
    js = fl.to_json()
    assert "interval" not in js["edge"]["floor_baseline"] and "interval" not in js["main"]["far_beyond_rule"]
    assert "interval" not in js["main"]["closest"]


@pytest.mark.parametrize("lack", [None, {0: 6}])
def test_floor_range_ends_equal_a_plain_loop_and_widen_past_the_one_pair_rule(lack):
    """The widened floor: the interval of the min and of the max over repeat pairs, each taken again per replicate."""
    repeats = toy_runs(11, queries=12, lack=lack)[:3]
    st = Uncertainty(replicates=300, seed=2)
    fl = floor(repeats, uncertainty=st)
    items = [items_of(r) for r in repeats]
    shared = set.intersection(*(set(i) for i in items))
    floor_items = [{k: v for k, v in i.items() if k in shared} for i in items]
    ids = sorted({k.split(KEY_SEP)[0] for k in shared})
    pairs = [(i, j) for i in range(3) for j in range(3) if i != j]
    rng = np.random.default_rng(2)
    lows: list[float | None] = []
    highs: list[float | None] = []
    for _ in range(300):
        drawn = [ids[c] for c in rng.integers(len(ids), size=len(ids))]
        regs = [pair_rates(floor_items[i], floor_items[j], drawn)[0] for i, j in pairs]
        lows.append(None if None in regs else min(regs))
        highs.append(None if None in regs else max(regs))
    observed = [pair_rates(floor_items[i], floor_items[j], ids)[0] for i, j in pairs]
    assert fl.range_interval is not None
    assert (fl.range_interval["min"].low, fl.range_interval["min"].high) == pytest.approx(
        bounds(lows, min(observed), len(ids)), rel=1e-12, abs=1e-15)
    assert (fl.range_interval["max"].low, fl.range_interval["max"].high) == pytest.approx(
        bounds(highs, max(observed), len(ids)), rel=1e-12, abs=1e-15)
    widened = fl.regression_span_with_error
    assert widened is not None
    assert (widened.low, widened.high) == (fl.range_interval["min"].low, fl.range_interval["max"].high)
    # the one-pair rule took the interval high of the pair at the max: the max over pairs, taken again in
    # each replicate, is at least that pair's rate in every replicate, so its interval reaches further here
    at_max = [p.interval["regression_rate"].high for p in fl.pairs if p.regression == fl.regression_span.hi]
    at_min = [p.interval["regression_rate"].low for p in fl.pairs if p.regression == fl.regression_span.lo]
    assert widened.high > max(at_max) and widened.low < min(at_min)
    js = fl.to_json()
    assert set(js["regression_rate"]["interval"]) == {"min", "max"}
    assert js["regression_rate_with_error"] == {"low": widened.low, "high": widened.high,
                                               "method": js["regression_rate_with_error"]["method"]}
    assert "taken again in each bootstrap replicate" in js["regression_rate_with_error"]["method"]
