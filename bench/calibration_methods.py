"""Candidate interval methods on the same cluster-bootstrap replicates (``bench_calibration.py --methods``).

For each release the edge old -> new is bootstrapped once
(:func:`replicate.stats.bootstrap.bootstrap_pairs`, clusters resampled whole),
and each method turns the replicates into an interval:

- ``percentile``: the 2.5th and 97.5th percentiles;
- ``t-percentile``: the percentile interval's two arms (point to each end)
  stretched by ``c = sqrt(G / (G - 1)) * t_{G-1} / z`` (the bootstrap's
  variance is short by (G - 1) / G, and G clusters give G - 1 degrees of freedom);
- ``bca``: bias-corrected and accelerated percentiles (acceleration from the
  leave-one-cluster-out jackknife);
- ``t-bca``: the BCa interval's arms stretched by the same ``c``;
- ``t-logit``: for a proportion strictly inside (0, 1), the t-percentile
  interval built on the logit scale (replicates and point transformed, arms
  stretched there, bounds transformed back); other figures as ``t-percentile``;
- ``t-basic``: the reflected ("basic") percentile interval ``2 point - high``,
  ``2 point - low``, arms stretched by ``c``;
- ``t-log``: for a positive figure, the t-percentile interval built on the log
  scale (arms stretched there, bounds exponentiated); other figures as ``t-percentile``;
- ``log-t``: for a positive figure, ``point * exp(-+ c' sd)``, sd the replicates'
  standard deviation of the log figure and ``c' = sqrt(G / (G - 1)) t_{G-1}`` (the
  difficulty-aware ratio's interval); other figures as ``t-percentile``;
- ``t-shifted``: the t-percentile interval moved down by the bootstrap's estimate of the bias (the
  replicates' mean minus the point);
- ``jack-log-t``: for a positive figure, ``point * exp(-+ t_{G-1} se)``, se the
  leave-one-cluster-out jackknife's standard error of the log figure (no bootstrap);
  other figures as ``t-percentile``.

No method here applies the Wilson floor the tool adds to a proportion's interval.
"""

from __future__ import annotations

import math

import numpy as np
from calibration_designs import Design, release, truth_counts
from scipy import stats

from replicate.judge.align import align
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.bootstrap import bootstrap_pairs, figures_from_counts, interval_figures, percentile_bounds
from replicate.stats.fourcell import FIGURES as DECLARED

FIGURES = interval_figures()  # every edge figure of the one table (replicate.stats.fourcell)

METHODS = ("percentile", "t-percentile", "bca", "t-bca", "t-logit", "t-basic", "t-log", "log-t", "jack-log-t",
           "t-shifted")
#: Figures that lie in [0, 1], the rates of the one table (``t-logit`` transforms them).
PROPORTIONS = tuple(f for f in FIGURES if DECLARED[f].kind == "rate")
SEED = 777


def stretch(point: np.ndarray, low: np.ndarray, high: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    c = math.sqrt(G / (G - 1)) * stats.t.ppf(0.975, G - 1) / stats.norm.ppf(0.975)
    return point - c * (point - low), point + c * (high - point)


def _logit(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 1e-9, 1 - 1e-9)
    return np.log(x / (1 - x))


def t_logit(values: np.ndarray, point: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    """The t-percentile interval on the logit scale for proportions inside (0, 1); as t-percentile otherwise."""
    lo, hi, _ = percentile_bounds(values, 0.95)
    lo, hi = stretch(point, lo, hi, G)
    for k, f in enumerate(FIGURES):
        if f in PROPORTIONS and 0 < point[k] < 1:
            v = _logit(values[:, k][~np.isnan(values[:, k])])
            p = _logit(np.array([point[k]]))
            a, b = stretch(p, np.quantile(v, [0.025]), np.quantile(v, [0.975]), G)
            lo[k], hi[k] = 1 / (1 + np.exp(-a[0])), 1 / (1 + np.exp(-b[0]))
    return lo, hi


def on_log(values: np.ndarray, point: np.ndarray, G: int, *, spread: bool) -> tuple[np.ndarray, np.ndarray]:
    """``t-log`` (``spread`` False: stretched log-scale percentiles) or ``log-t`` (``spread``: t times the log
    replicates' sd) for positive figures; as t-percentile otherwise."""
    lo, hi, _ = percentile_bounds(values, 0.95)
    lo, hi = stretch(point, lo, hi, G)
    q = math.sqrt(G / (G - 1)) * stats.t.ppf(0.975, G - 1)
    for k in range(values.shape[1]):
        v = values[:, k][~np.isnan(values[:, k])]
        if not point[k] > 0 or not len(v) or (v <= 0).any():
            continue
        lv, lp = np.log(v), math.log(point[k])
        if spread:
            half = q * float(np.std(lv, ddof=1))
            a, b = lp - half, lp + half
        else:
            a, b = (x[0] for x in stretch(np.array([lp]), np.quantile(lv, [0.025]), np.quantile(lv, [0.975]), G))
        lo[k], hi[k] = math.exp(a), math.exp(b)
    return lo, hi


def jack_log_t(values: np.ndarray, point: np.ndarray, jack: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi, _ = percentile_bounds(values, 0.95)
    lo, hi = stretch(point, lo, hi, G)
    q = stats.t.ppf(0.975, G - 1)
    for k in range(values.shape[1]):
        j = jack[:, k]
        if not point[k] > 0 or np.isnan(j).any() or (j <= 0).any():
            continue
        lj = np.log(j)
        se = math.sqrt((G - 1) / G * float(((lj - lj.mean()) ** 2).sum()))
        lo[k], hi[k] = point[k] * math.exp(-q * se), point[k] * math.exp(q * se)
    return lo, hi


def bca(values: np.ndarray, point: np.ndarray, jack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BCa bounds per column of ``values`` (replicates x figures), jackknife ``jack`` (G x figures)."""
    lows, highs = [], []
    for k in range(values.shape[1]):
        v = values[:, k][~np.isnan(values[:, k])]
        j = jack[:, k][~np.isnan(jack[:, k])]
        if not len(v) or math.isnan(point[k]):
            lows.append(np.nan)
            highs.append(np.nan)
            continue
        prop = (np.mean(v < point[k]) + 0.5 * np.mean(v == point[k]))
        z0 = stats.norm.ppf(min(max(prop, 1e-6), 1 - 1e-6))
        d = j.mean() - j
        den = 6 * (d @ d) ** 1.5
        a = (d**3).sum() / den if den > 0 else 0.0
        qs = []
        for za in (stats.norm.ppf(0.025), stats.norm.ppf(0.975)):
            qs.append(stats.norm.cdf(z0 + (z0 + za) / (1 - a * (z0 + za))))
        lows.append(np.quantile(v, qs[0]))
        highs.append(np.quantile(v, qs[1]))
    return np.array(lows), np.array(highs)


def compare_methods(chosen: list[Design], releases: int, replicates: int) -> int:
    for design in chosen:
        if design.clusters < 2:
            continue
        truth = figures_from_counts(truth_counts(design)["edge"])
        cover = {m: np.zeros(len(FIGURES)) for m in METHODS}
        for r in range(releases):
            rng = np.random.default_rng([SEED, design.clusters, int(10 * design.cluster_sd), int(design.difficulty_sd), r])
            runs = release(rng, design).runs
            aligned = align([runs["old"], runs["new"]])
            clusters = Uncertainty().clusters(aligned.keys)
            boot = bootstrap_pairs(aligned.labels, aligned.gold, [(0, 1)], clusters=clusters, n_resamples=replicates, seed=r)
            assert boot.totals is not None and boot.per_cluster is not None
            point = np.array([figures_from_counts(boot.totals[0])[f] for f in FIGURES], dtype=float)
            values = np.stack([boot.values(f)[:, 0] for f in FIGURES], axis=1)
            jack_counts = boot.totals[0][None, :] - boot.per_cluster[:, 0, :]
            jack = np.stack([figures_from_counts(jack_counts)[f] for f in FIGURES], axis=1)
            lo, hi, _ = percentile_bounds(values, 0.95)
            blo, bhi = bca(values, point, jack)
            G = clusters.count
            ivs = {"percentile": (lo, hi), "t-percentile": stretch(point, lo, hi, G), "bca": (blo, bhi),
                   "t-bca": stretch(point, blo, bhi, G), "t-logit": t_logit(values, point, G),
                   "t-basic": stretch(point, 2 * point - hi, 2 * point - lo, G),
                   "t-log": on_log(values, point, G, spread=False), "log-t": on_log(values, point, G, spread=True),
                   "jack-log-t": jack_log_t(values, point, jack, G),
                   "t-shifted": tuple(x - (np.nanmean(values, axis=0) - point) for x in stretch(point, lo, hi, G))}
            t = np.array([float(truth[f]) for f in FIGURES])
            for m, (a, b) in ivs.items():
                cover[m] += (a <= t) & (t <= b)
        print(f"\n{design.name} ({releases} releases; Monte Carlo s.e. at 95%: {math.sqrt(0.95 * 0.05 / releases):.1%})")
        print(f"  {'figure':34s}" + "".join(f"{m:>14s}" for m in METHODS))
        for k, f in enumerate(FIGURES):
            print(f"  {f:34s}" + "".join(f"{cover[m][k] / releases:14.1%}" for m in METHODS))
    return 0
