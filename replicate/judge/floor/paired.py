"""The edge against its floor, paired by cluster: a t test of the edge's regression rate minus the repeat pairs' (pure).

The widened range (:data:`.checks.INTERVAL_RULE`) sets the edge's interval
against the floor's interval: it carries the error of both sides and ignores
that they are measured on the same items, so it rarely says "above" (measured
in ``bench/bench_calibration.py``). This test pairs them instead. Per cluster
g (``--cluster``; each item its own cluster under ``--cluster item``), with
``r_g`` a comparison's regressions and ``n_g`` its compared items in g, and
``R = sum r_g / sum n_g`` its regression rate, the linearised contribution of
g is ``z_g = (r_g - R n_g) / sum n_g`` (a ratio estimator's residual; the z_g
of one comparison sum to 0). For the edge e and the floor's ordered repeat
pairs k = 1..K::

    D   = R_e - mean_k R_k                       the edge's excess over the rerun baseline
    d_g = z_e,g - mean_k z_k,g                    the cluster's share of D's sampling error
    se  = sqrt(G / (G - 1) * sum_g d_g^2)         clusters independent (the repeat pairs' own
                                                  variability enters through mean_k z_k,g)
    interval = D -/+ t_{G-1} se,  p_above = P(T_{G-1} >= D / se)

``se`` is never below the same formula with every item its own cluster (the
item-level paired error), so clusters of equal composition cannot give zero
width (as :func:`replicate.stats.few_clusters.at_least` does for a proportion).
Fewer than :data:`~replicate.stats.few_clusters.MIN_CLUSTERS` clusters give
no test. The verdict (:data:`PAIRED_RULE`): ``above`` when the interval lies
above 0, ``below`` when under it, else ``inside`` (the rate lies in the
floor's range) or ``indistinguishable``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.judge.align import Aligned
from replicate.judge.model import KEY_SEP
from replicate.judge.pairs import Policy
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.bootstrap import Clusters, cluster_category_counts
from replicate.stats.few_clusters import MIN_CLUSTERS
from replicate.stats.student_t import t_quantile, t_sf

#: The ``method`` of :class:`PairedTest` in outputs.
PAIRED_METHOD = "cluster-paired-t"
PAIRED_RULE = (
    "paired by cluster: the edge's regression rate minus the mean regression rate of the repeat pairs, with a "
    "t interval over the clusters (G - 1 degrees of freedom; never narrower than with items as clusters); above: "
    "the interval lies above 0; below: under 0; inside: the rate lies in the floor's range; indistinguishable: "
    "the rate lies outside the range but the interval covers 0"
)


@dataclass(frozen=True, slots=True)
class PairedTest:
    """The edge's regression rate minus the floor's mean, its t interval over clusters and one-sided p-values."""

    difference: float
    se: float
    df: int
    low: float
    high: float
    p_above: float  # one-sided: P(T >= t) under "the edge regresses as much as reruns"
    p_below: float
    clusters: int
    cluster: str | None
    confidence_level: float

    @property
    def verdict(self) -> str | None:
        """``above`` / ``below`` when the interval excludes 0, else None (the range decides inside/indistinguishable)."""
        if self.low > 0:
            return "above"
        if self.high < 0:
            return "below"
        return None

    def to_json(self) -> dict:
        return {
            "difference": self.difference, "se": self.se, "df": self.df, "p_above": self.p_above,
            "p_below": self.p_below, "clusters": self.clusters, "cluster": self.cluster, "method": PAIRED_METHOD,
            "interval": {"difference": {
                "low": self.low, "high": self.high, "method": PAIRED_METHOD, "replicates": 0, "cluster": self.cluster,
                "clusters": self.clusters, "confidence_level": self.confidence_level,
            }},
        }


def _residuals(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per comparison its regression rate ``(P,)`` and residuals ``(G, P)`` from per-cluster counts ``(G, P, 5)``."""
    reg = counts[..., 1].astype(np.float64)
    n = counts.sum(axis=-1).astype(np.float64)
    total_n = n.sum(axis=0)
    rate = np.divide(reg.sum(axis=0), total_n, out=np.full(reg.shape[1], np.nan), where=total_n > 0)
    z = np.divide(reg - rate * n, total_n, out=np.zeros_like(reg), where=total_n > 0)
    return rate, z


def _difference(floor: Aligned, pairs: Sequence[tuple[int, int]], edge: Aligned, clusters: Clusters,
                policy: Policy) -> tuple[float, np.ndarray]:
    codes = np.split(clusters.codes, [floor.n_items])
    f_rate, f_z = _residuals(cluster_category_counts(floor.labels, floor.gold, list(pairs), codes[0], clusters.count,
                                                     policy=policy))
    e_rate, e_z = _residuals(cluster_category_counts(edge.labels, edge.gold, [(0, 1)], codes[1], clusters.count,
                                                     policy=policy))
    return float(e_rate[0] - f_rate.mean()), e_z[:, 0] - f_z.mean(axis=1)


def paired_test(
    floor: Aligned, pairs: Sequence[tuple[int, int]], edge: Aligned, settings: Uncertainty, *, policy: Policy
) -> PairedTest | None:
    """The edge (run 0 -> run 1 of ``edge``) against the mean of the floor's ``pairs``; None without a test.

    None when a side has no compared items or a regression rate is undefined, or the clusters (of the
    union of both sides' items) are fewer than :data:`MIN_CLUSTERS`.
    """
    if not pairs:
        return None
    keys = np.concatenate([np.asarray(floor.keys, dtype=object), np.asarray(edge.keys, dtype=object)])
    field = settings.cluster_field
    items = Clusters.from_values(keys, "item")
    clusters = items if field is None else Clusters.from_keys(
        keys, field=field, name=settings.key_fields[field], sep=KEY_SEP)
    if clusters.count < MIN_CLUSTERS:
        return None
    diff, d = _difference(floor, pairs, edge, clusters, policy)
    if math.isnan(diff):
        return None
    G = clusters.count
    var = G / (G - 1) * float(d @ d)
    if field is not None:  # never below the item-level paired error
        _, d_items = _difference(floor, pairs, edge, items, policy)
        var = max(var, items.count / (items.count - 1) * float(d_items @ d_items))
    se = math.sqrt(var)
    df = G - 1
    half = t_quantile(df, 0.5 + settings.confidence_level / 2) * se
    if se > 0:
        t = diff / se
        p_above, p_below = t_sf(t, df), t_sf(-t, df)
    else:  # no sampling error at all: every item alike on each side (e.g. no regressions anywhere)
        p_above, p_below = (0.0 if diff > 0 else 1.0), (0.0 if diff < 0 else 1.0)
    name = None if field is None else clusters.name
    return PairedTest(diff, se, df, diff - half, diff + half, p_above, p_below, G, name, settings.confidence_level)
