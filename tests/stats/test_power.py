"""flag_power and k_for_power: against brute force with scipy, a plain simulation loop, and hand-checked corners."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from scipy.stats import binom, false_discovery_control, fisher_exact

from replicate.stats.power import (
    EXACT,
    SIMULATED,
    bh_flagged,
    direction_share,
    flag_power,
    k_for_power,
)

EPS = Fraction(1, 5)


@cache
def fisher_p(a: int, n1: int, b: int, n2: int) -> float:
    return float(fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue)


def brute_force(p, q, k1, k2, others, alpha=0.05, eps=EPS):
    """Sum over every (a, b) of the item: scipy's Fisher p, scipy's BH with the other p-values, Fraction d."""
    up = down = 0.0
    for a in range(k1 + 1):
        for b in range(k2 + 1):
            w = binom.pmf(a, k1, p) * binom.pmf(b, k2, q)
            pv = fisher_p(a, k1, b, k2)
            qv = false_discovery_control(np.array([pv, *others]))[0] if len(others) else pv
            d = Fraction(b, k2) - Fraction(a, k1)
            if qv <= alpha and d >= eps:
                up += w
            if qv <= alpha and d <= -eps:
                down += w
    return up, down


def test_bh_flagged_matches_scipy_on_random_contexts_with_ties():
    rng = np.random.default_rng(3)
    pool = np.array([0.001, 0.004, 0.01, 0.0125, 0.02, 0.025, 0.03, 0.05, 0.2, 1.0])
    for _ in range(300):
        others = rng.choice(pool, size=(1, int(rng.integers(0, 15))))
        values = np.unique(rng.choice(pool, size=6))
        got = bh_flagged(values, others, 0.05)[0]
        for u, x in enumerate(values):
            q = false_discovery_control(np.concatenate([[x], others[0]]))[0]
            assert got[u] == (q <= 0.05), (x, others)


def test_one_item_is_exact_and_equals_brute_force():
    res = flag_power(0.3, 0.8, k=9, k_target=7, n_items=1)
    up, down = brute_force(0.3, 0.8, 9, 7, [])
    assert res.method == EXACT and res.n_resamples is None
    assert res.improved == pytest.approx(up, rel=1e-12) and res.regressed == pytest.approx(down, abs=1e-15)
    assert res.bounds[0] == pytest.approx(up, rel=1e-12) == res.bounds[1]
    assert res.power == res.improved and res.wrong_direction == res.regressed


def test_fixed_other_p_values_are_exact_and_equal_brute_force():
    others = [0.0001, 0.003, 0.02, 0.04, 0.5, 1.0, 1.0]
    res = flag_power(0.7, 0.2, k=8, n_items=8, others=others)
    up, down = brute_force(0.7, 0.2, 8, 8, others)
    assert res.method == EXACT
    assert res.regressed == pytest.approx(down, rel=1e-12) and res.improved == pytest.approx(up, abs=1e-15)
    assert res.power == res.regressed
    lo, hi = res.bounds
    assert lo <= res.power <= hi
    assert lo == pytest.approx(brute_force(0.7, 0.2, 8, 8, [1.0] * 7)[1], rel=1e-12)
    assert hi == pytest.approx(brute_force(0.7, 0.2, 8, 8, [0.0] * 7)[1], rel=1e-12)


def test_simulated_context_agrees_with_a_plain_simulation_loop():
    """Whole cells drawn one at a time: scipy's Fisher per item, scipy's BH, Fraction thresholds."""
    p, q, k, n, moving, base = 0.2, 0.9, 8, 6, 0.4, 0.5
    res = flag_power(p, q, k=k, n_items=n, moving=moving, base_rate=base, n_resamples=4000, seed=7)
    assert res.method == SIMULATED and res.moving_items == 2 and res.seed == 7
    assert res.bounds[0] < res.power < res.bounds[1]  # BH's context matters here
    rng = np.random.default_rng(2024)
    sims = 6000
    rates = [(p, q), (p, q), (p, q), (base, base), (base, base), (base, base)]
    cells = [[(int(rng.binomial(k, s)), int(rng.binomial(k, t))) for s, t in rates] for _ in range(sims)]
    # BH within each cell: scipy's, one call over the rows (axis=1 treats each row on its own)
    qs = false_discovery_control([[fisher_p(a, k, b, k) for a, b in cell] for cell in cells], axis=1)
    hits = sum(bool(q0 <= 0.05 and Fraction(b, k) - Fraction(a, k) >= EPS) for q0, ((a, b), *_) in zip(qs[:, 0], cells))
    freq = hits / sims
    se = np.sqrt(freq * (1 - freq) / sims + res.mc_se**2)
    assert abs(freq - res.power) < 4.5 * se, (freq, res.power, se)


def test_hand_checked_corners():
    # 0/5 -> 5/5: Fisher p = 2 / C(10, 5) = 2/252 ~ 0.0079, always; d = 1 >= eps.
    assert fisher_p(0, 5, 5, 5) == pytest.approx(2 / 252)
    one = flag_power(0.0, 1.0, k=5, n_items=1)
    assert one.power == 1.0 and one.wrong_direction == 0.0
    # With 10 items and no other significant: BH needs 10 * 0.0079 <= 0.05: never.
    ten = flag_power(0.0, 1.0, k=5, n_items=10, others=[1.0] * 9)
    assert ten.power == 0.0 and ten.bounds == (0.0, 1.0)
    # With 6 items: 6 * 2/252 = 0.0476 <= 0.05: always, whatever the others.
    assert flag_power(0.0, 1.0, k=5, n_items=6, moving=0.0, n_resamples=10).bounds == (1.0, 1.0)
    # Nothing moves and nothing varies: never flagged.
    assert flag_power(0.0, 0.0, k=20, n_items=1).power == 0.0
    # A move exactly eps: at best the chance that d reaches eps, about one half for large K.
    cap = direction_share(0.4, 0.6, k=200)
    assert 0.5 < cap < 0.56
    assert flag_power(0.4, 0.6, k=200, n_items=1).power <= cap


def test_power_grows_with_the_share_of_moving_items():
    few = flag_power(0.3, 0.8, k=20, n_items=50, moving=0.0, n_resamples=300, seed=1)
    many = flag_power(0.3, 0.8, k=20, n_items=50, moving=0.8, n_resamples=300, seed=1)
    assert few.bounds == many.bounds
    assert few.bounds[0] <= few.power < many.power <= many.bounds[1]


def test_k_for_power_is_the_smallest_k_reaching_the_target():
    kw = {"n_items": 20, "moving": 0.2, "n_resamples": 300, "seed": 3}
    need = k_for_power(0.2, 0.8, power=0.9, k_max=40, **kw)
    assert need.k is not None and need.at_k.power >= 0.9
    for k in range(1, need.k):
        assert flag_power(0.2, 0.8, k=k, **kw).power < 0.9
    never = k_for_power(0.4, 0.6, power=0.8, n_items=20, k_max=60)
    assert never.k is None and never.at_k is None and never.cap < 0.8


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"p": 1.2, "q": 0.5, "k": 5, "n_items": 1}, "p must lie in"),
        ({"p": 0.2, "q": 0.5, "k": 0, "n_items": 1}, "k must be an integer"),
        ({"p": 0.2, "q": 0.5, "k": 5, "n_items": 0}, "n_items must be"),
        ({"p": 0.2, "q": 0.5, "k": 5, "n_items": 3, "others": [0.1]}, "others must hold n_items - 1 = 2"),
        ({"p": 0.2, "q": 0.5, "k": 5, "n_items": 3, "moving": 2.0}, "moving must lie"),
        ({"p": 0.2, "q": 0.5, "k": 5, "n_items": 3, "alpha": 0.0}, "alpha must lie"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, match):
    p, q = kwargs.pop("p"), kwargs.pop("q")
    with pytest.raises(ValueError, match=match):
        flag_power(p, q, **kwargs)


@pytest.mark.parametrize("k_min,k_max,message", [(1, 0, "k_max must be a whole number of at least 1"),
                                                 (5, 3, "k_max must be a whole number of at least 5"),
                                                 (0, 3, "k_min must be a whole number of at least 1")])
def test_k_bounds_are_named_one_at_a_time(k_min, k_max, message):
    with pytest.raises(ValueError, match=message):
        k_for_power(0.4, 0.6, power=0.8, n_items=10, k_min=k_min, k_max=k_max)
