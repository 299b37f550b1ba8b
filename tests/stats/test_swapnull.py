"""The swap null of a paired class share (replicate.stats.swapnull) against a plain loop, and its error rate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from replicate.stats.classify import EQUIVALENT, IMPROVED, INCONCLUSIVE, REGRESSED
from replicate.stats.swapnull import Side, swap_null_p


def _side(rng, n, extra=0):
    m = n + extra
    p = rng.random(m) ** 3
    up = rng.random(m) < 0.4
    down = ~up & (rng.random(m) < 0.3)
    inside = rng.random(m) < 0.3
    return Side(p, up, down, inside, n)


def _classes_loop(p, up, down, inside, alpha):
    q = false_discovery_control(p, method="bh")
    out = []
    for i in range(len(p)):
        if q[i] <= alpha and up[i]:
            out.append(IMPROVED)
        elif q[i] <= alpha and down[i]:
            out.append(REGRESSED)
        elif inside[i]:
            out.append(EQUIVALENT)
        else:
            out.append(INCONCLUSIVE)
    return np.array(out)


def _plain(rel, fr, classes, alpha, n_resamples, seed):
    """The same null written as a loop, one replicate at a time, with scipy's BH."""
    n = rel.shared
    swap = np.random.default_rng(seed).random((n_resamples, n)) < 0.5

    def share(side_arrays):
        cls = _classes_loop(*side_arrays, alpha)
        return np.isin(cls[:n], list(classes)).mean()

    def arrays(s):
        return (s.p, s.up, s.down, s.inside)

    observed = share(arrays(fr)) - share(arrays(rel))
    null = []
    for row in swap:
        mixed = []
        for me, other in ((fr, rel), (rel, fr)):
            mixed.append(tuple(np.concatenate([np.where(row, b[:n], a[:n]), a[n:]])
                               for a, b in zip(arrays(me), arrays(other))))
        null.append(share(mixed[0]) - share(mixed[1]))
    null = np.array(null)
    return observed, (int((np.abs(null) >= abs(observed) - 1e-12).sum()) + 1) / (n_resamples + 1)


@pytest.mark.parametrize("extra", [(0, 0), (3, 0), (0, 5)])
@pytest.mark.parametrize("classes", [{IMPROVED}, {IMPROVED, REGRESSED}, {EQUIVALENT}])
def test_equals_a_plain_loop(extra, classes):
    rng = np.random.default_rng(42)
    rel, fr = _side(rng, 60, extra[0]), _side(rng, 60, extra[1])
    got = swap_null_p(rel, fr, classes, alpha=0.05, n_resamples=300, seed=9)
    want = _plain(rel, fr, classes, 0.05, 300, 9)
    assert got == pytest.approx(want, abs=1e-12)


def test_identical_sides_give_p_one():
    rng = np.random.default_rng(1)
    s = _side(rng, 40)
    diff, p = swap_null_p(s, s, {IMPROVED}, alpha=0.05, n_resamples=200, seed=0)
    assert diff == 0 and p == 1.0


def test_rejects_at_about_its_level_under_the_same_truth():
    # the same items asked twice (K = 20 trials a side per model): each side's classes come from its own
    # Fisher tests and BH, so the items' classes are tied within a side; the test must reject in about
    # 5% of releases, not more. Seeded; 200 releases.
    from scipy.stats import fisher_exact

    rng = np.random.default_rng(20261204)
    n, k, releases, rejections = 50, 20, 200, 0
    for _ in range(releases):
        ps = rng.uniform(0.1, 0.9, n)
        pt = np.clip(ps + np.where(rng.random(n) < 0.3, 0.45, 0.0), 0, 1)
        sides = []
        for _side_index in range(2):
            a, b = rng.binomial(k, ps), rng.binomial(k, pt)
            p = np.array([fisher_exact([[x, k - x], [y, k - y]]).pvalue for x, y in zip(a, b)])
            d = (b - a) / k
            sides.append(Side(p, d >= 0.2, d <= -0.2, np.zeros(n, bool), n))
        _, pv = swap_null_p(sides[0], sides[1], {IMPROVED}, alpha=0.05, n_resamples=199,
                            seed=int(rng.integers(1 << 30)))
        rejections += pv < 0.05
    assert rejections / releases <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / releases)


def test_bad_arguments_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="same, non-zero number of shared items"):
        swap_null_p(_side(rng, 5), _side(rng, 6), {IMPROVED}, alpha=0.05)
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        swap_null_p(_side(rng, 5), _side(rng, 5), {IMPROVED}, alpha=0.05, n_resamples=0)
