"""Paired tests of two versions' accuracies: McNemar's exact test and its relatives (pure, vectorised).

- :func:`mcnemar_exact_p`: the exact two-sided McNemar p-value (a float; what
  ``FourCell.mcnemar_p`` reports);
- :func:`mcnemar_exact_log10_p`: the exact two-sided McNemar p-value as its
  base-10 logarithm, so a p-value below the float range (a large edge) is
  reported as what it is (e.g. ``-412.7``) instead of ``0.0``;
- :func:`mcnemar_clustered`: Durkalski et al.'s (2003) cluster-robust McNemar
  test. The exact test assumes every item is an independent draw; with items
  clustered by query it is too liberal. The clustered statistic
  ``(sum_c (b_c - c_c))**2 / sum_c (b_c - c_c)**2`` uses each cluster's
  difference of discordant counts (``b_c`` = only_old, ``c_c`` = only_new in
  cluster c) and is referred to chi-square with one degree of freedom. With
  one item per cluster it is the classic (asymptotic) McNemar statistic
  ``(b - c)**2 / (b + c)``.
"""

from __future__ import annotations

import math

import numpy as np

CLUSTERED_MCNEMAR = "durkalski-2003"
LOG10_2 = math.log10(2.0)


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of ``b`` of ``b + c`` at 1/2 (1 when b + c = 0).

    ``b`` and ``c`` are the discordant counts (for an edge: only_old and
    only_new). Below the float range it is 0.0; :func:`mcnemar_exact_log10_p`
    gives the same p-value as a logarithm.
    """
    m = b + c
    if m == 0:
        return 1.0
    from scipy.special import bdtr

    return float(min(1.0, 2.0 * bdtr(min(b, c), m, 0.5)))


def mcnemar_exact_log10_p(b: int, c: int) -> float:
    """log10 of the two-sided exact McNemar p-value on discordant counts (b, c); 0.0 means p = 1.

    ``p = min(1, 2 * P[X <= min(b, c)])`` with ``X ~ Binomial(b + c, 1/2)``,
    summed in log space so it never underflows.
    """
    from scipy.special import gammaln, logsumexp

    if b < 0 or c < 0:
        raise ValueError(f"b and c must be non-negative counts; got {b!r}, {c!r}")
    m = int(b) + int(c)
    if m == 0:
        return 0.0
    p = mcnemar_exact_p(int(b), int(c))
    if p > 1e-290:  # the float p-value is accurate: its logarithm is enough
        return min(0.0, math.log10(p))
    k = np.arange(min(b, c) + 1, dtype=np.float64)
    log_pmf = gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1) - m * math.log(2.0)
    log10_p = float(logsumexp(log_pmf)) / math.log(10.0) + LOG10_2
    return min(0.0, log10_p)


#: Below this a p-value is printed as a bound (``<1e-16``): the float may have underflowed to 0.0.
P_FLOOR = 1e-16


def p_display(p: float | None) -> str:
    """A float p-value for reading: ``<1e-16`` below :data:`P_FLOOR` (never a bare 0), 3 significant digits below 0.001, else 4 decimals.

    ``-`` for None (no items: no test).
    """
    if p is None:
        return "-"
    if p < P_FLOOR:
        return f"<{P_FLOOR:.0e}"
    return f"{p:.3g}" if p < 0.001 else f"{p:.4f}"


def chi2_sf_1_log10(stat: float) -> float:
    """log10 of :func:`chi2_sf_1` for one statistic, accurate far below the float range (0.0 means p = 1).

    The chi-square(1) tail is ``2 * Phi(-sqrt(x))``; ``log_ndtr`` keeps its logarithm where ``erfc`` underflows.
    """
    from scipy.special import log_ndtr

    if stat <= 0:
        return 0.0
    return min(0.0, LOG10_2 + float(log_ndtr(-math.sqrt(stat))) / math.log(10.0))


def p_text(log10_p: float, *, floor: float = 1e-16) -> str:
    """A p-value for reading: 4 decimals, 3 significant digits below 0.001, and ``10^x`` below ``floor``."""
    if log10_p < math.log10(floor):
        return f"10^{log10_p:.1f}"
    p = 10.0**log10_p
    return f"{p:.3g}" if p < 0.001 else f"{p:.4f}"


def mcnemar_clustered(only_old: np.ndarray, only_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Durkalski's clustered McNemar test on per-cluster discordant counts.

    ``only_old`` and ``only_new`` have shape ``(G, ...)`` (clusters first; any
    trailing shape, e.g. one column per edge). Returns (statistic, p) of the
    trailing shape; p is 1 and the statistic 0 where no cluster has a
    discordant difference.
    """
    d = np.asarray(only_old, dtype=np.float64) - np.asarray(only_new, dtype=np.float64)
    num = d.sum(axis=0) ** 2
    den = (d * d).sum(axis=0)
    stat = np.zeros(np.shape(num))
    np.divide(num, den, out=stat, where=den > 0)
    return stat, chi2_sf_1(stat)


def chi2_sf_1(stat: np.ndarray) -> np.ndarray:
    """Upper tail of chi-square with one degree of freedom: ``erfc(sqrt(x / 2))`` (no scipy.stats import)."""
    x = np.asarray(stat, dtype=np.float64)
    return np.array([math.erfc(math.sqrt(v / 2)) for v in x.ravel().tolist()]).reshape(x.shape)
