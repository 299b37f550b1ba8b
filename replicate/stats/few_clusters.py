"""Bootstrap intervals over few clusters: a documented minimum, a t-stretch, an item-level floor (pure).

The percentile cluster bootstrap runs short over few clusters: G clusters
resampled with replacement have a variance (G - 1) / G of the true one, and
the figure's sampling distribution has G - 1 degrees of freedom, not the
normal's. Measured (``bench/bench_calibration.py --methods``, 400 simulated
releases a design, Monte Carlo s.e. 1.1 points) nominal 95% percentile
intervals covered 76-88% of releases at 5 clusters, 85-94% at 10 and 90-95% at
20; the same replicates with each arm of the interval (point to bound)
stretched by :func:`stretch_factor` covered 90-96% at 5 clusters and 92-97% at
10 (per design and figure; the table is in bench/README.md). BCa intervals did
no better than the percentile ones (77-86% at 5 clusters), and stretched BCa no
better than the stretched percentile, at the cost of a jackknife. So:

- :data:`MIN_CLUSTERS`: below it a cluster bootstrap gives no interval
  (``None`` bounds and :func:`too_few_clusters` as the reason): with one
  cluster every replicate is the sample itself (zero width);
- :func:`stretch`: the percentile interval's arms times
  ``sqrt(G / (G - 1)) * t_{G-1} / z`` (:data:`T_METHOD`), never narrower than
  the percentile interval;
- :func:`at_least`: an interval of a proportion is never narrower than the
  Wilson score interval of its count over its denominator (the item-level
  interval: what the same figure would carry were the items independent), so a
  count of 0 gets a non-degenerate upper bound and a cluster bootstrap over
  clusters of equal composition no zero width.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from replicate.stats.student_t import t_quantile

#: Fewer clusters than this give a cluster bootstrap no interval (see :func:`too_few_clusters`).
MIN_CLUSTERS = 5
#: The cluster bootstrap whose percentile arms are stretched for G clusters (:func:`stretch`).
T_METHOD = "cluster-bootstrap-t-percentile"
#: The item-level interval an interval of a proportion is never narrower than (:func:`at_least`).
WILSON = "wilson-score"


def too_few_clusters(cluster: str | None, clusters: int) -> str | None:
    """Why a cluster bootstrap over ``clusters`` clusters gives no interval (None: it gives one, or items)."""
    if cluster is None or clusters >= MIN_CLUSTERS:
        return None
    return (f"too few {cluster} clusters for an interval: {clusters}, fewer than {MIN_CLUSTERS} (resampling "
            f"{'one cluster shows no sampling error' if clusters == 1 else 'so few clusters runs far short of 95%'}); "
            "use --cluster item to resample items one by one, which assumes them independent")


def stretch_factor(clusters: int, confidence_level: float) -> float:
    """``sqrt(G / (G - 1)) * t_{G-1}(q) / z(q)`` at ``q = (1 + confidence_level) / 2``; 1 for G < 2."""
    if clusters < 2:
        return 1.0
    q = 0.5 + confidence_level / 2
    return math.sqrt(clusters / (clusters - 1)) * t_quantile(clusters - 1, q) / NormalDist().inv_cdf(q)


def stretch(
    point: np.ndarray, low: np.ndarray, high: np.ndarray, clusters: int, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each arm (point to bound) times :func:`stretch_factor`; never inside the percentile bounds. NaN stays NaN."""
    c = stretch_factor(clusters, confidence_level)
    with np.errstate(invalid="ignore"):
        lo = np.fmin(low, point - c * (point - low))
        hi = np.fmax(high, point + c * (high - point))
    return lo, hi


def at_least(
    low: np.ndarray, high: np.ndarray, hits: np.ndarray, n: np.ndarray, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds widened to the Wilson interval of ``hits / n`` where ``n > 0`` (NaN bounds, undefined, stay NaN)."""
    from replicate.stats.intervals import wilson, z_value

    hits, n = np.asarray(hits, np.float64), np.asarray(n, np.float64)
    ok = n > 0
    wl, wh = wilson(np.where(ok, hits, 0), np.where(ok, n, 1), z_value(confidence_level))
    keep = ~ok | np.isnan(low)
    return np.where(keep, low, np.fmin(low, wl)), np.where(keep, high, np.fmax(high, wh))


def clip(low: np.ndarray, high: np.ndarray, lowest: float, highest: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds kept within the figure's range (a stretched arm of a rate near 0 must not go below 0)."""
    return np.clip(low, lowest, highest), np.clip(high, lowest, highest)
