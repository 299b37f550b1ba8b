"""Power of the item-level test at K trials: how likely an item that truly moves p -> q is flagged.

The rule is the engine's, decided the same way: Fisher's exact test (two-sided, the
p-value tables of :mod:`replicate.stats.fisher`), Benjamini-Hochberg across the
cell's ``n_items`` items exactly as ``scipy.stats.false_discovery_control``
computes it (``p * (m / i)``, a running minimum from the top, ``q <= alpha``), and
the practical threshold ``d >= eps`` in integers (:func:`~replicate.stats.classify.diff_at_least`).

The item of interest has ``a ~ Binomial(k, p)`` correct on the source and
``b ~ Binomial(k_target, q)`` on the target; its chance is summed *exactly* over
all ``(k + 1)(k_target + 1)`` outcomes. BH makes the decision depend on the other
items, so an assumption about them is needed; one of:

- ``others``: the other items' p-values, fixed (exact; ``replicate items`` uses a
  cell's observed p-values);
- ``moving``: a share of the other ``n_items - 1`` items moves the same way
  (``p -> q``), the rest stay at ``base_rate`` (default ``p``) on both sides. Their
  p-values are drawn ``n_resamples`` times (seeded); for each draw the item's
  chance is again exact, and the result is their mean (with its Monte Carlo
  standard error). With ``n_items == 1`` there is no context and the result is exact.

Two exact bounds hold whatever the other items do: at least the chance that
``m * p_item <= alpha`` (no other item significant: BH's threshold is alpha / m)
and at most the chance that ``p_item <= alpha`` (every other item significant).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

import numpy as np

from replicate.stats.classify import diff_at_least, parse_eps
from replicate.stats.fisher import fisher_table

DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 1000
EXACT = "exact"
SIMULATED = "exact over the item; other items simulated"


@lru_cache(maxsize=64)
def _table(n1: int, n2: int) -> np.ndarray:
    return fisher_table(n1, n2)


@dataclass(frozen=True)
class FlagPower:
    """The chance that an item moving ``p -> q`` is flagged improved / regressed.

    ``power`` is the chance of being flagged in the direction of the move (either
    direction when ``p == q``: then it is the item's false-flag rate).
    ``bounds`` are exact and hold for any other items (see the module docstring).
    """

    p: float
    q: float
    k_source: int
    k_target: int
    n_items: int
    alpha: float
    eps: Fraction
    improved: float
    regressed: float
    bounds: tuple[float, float]
    context: str  # the assumption about the other items, in words
    method: str  # EXACT or SIMULATED
    moving_items: int | None = None  # how many other items move (``moving`` context)
    base_rate: float | None = None
    n_resamples: int | None = None
    seed: int | None = None
    mc_se: float | None = None  # Monte Carlo standard error of the in-direction power

    @property
    def power(self) -> float:
        if self.q > self.p:
            return self.improved
        if self.q < self.p:
            return self.regressed
        return self.improved + self.regressed

    @property
    def wrong_direction(self) -> float:
        if self.q > self.p:
            return self.regressed
        if self.q < self.p:
            return self.improved
        return 0.0

    def to_json(self) -> dict:
        return {
            "p": self.p,
            "q": self.q,
            "k_source": self.k_source,
            "k_target": self.k_target,
            "n_items": self.n_items,
            "alpha": self.alpha,
            "eps": float(self.eps),
            "power": self.power,
            "improved": self.improved,
            "regressed": self.regressed,
            "wrong_direction": self.wrong_direction,
            "bounds": {"low": self.bounds[0], "high": self.bounds[1]},
            "context": self.context,
            "method": self.method,
            "moving_items": self.moving_items,
            "base_rate": self.base_rate,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "mc_se": self.mc_se,
        }


def _check(p: float, q: float, k: int, k_target: int, n_items: int, alpha: float) -> None:
    for name, v in (("p", p), ("q", q)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {v}")
    for name, kv in (("k", k), ("k_target", k_target)):
        if int(kv) != kv or kv < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {kv}")
    if int(n_items) != n_items or n_items < 1:
        raise ValueError(f"n_items must be an integer >= 1, got {n_items}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")


@dataclass(frozen=True)
class _Item:
    """The item of interest: its distinct candidate p-values and the chance of each, per direction."""

    values: np.ndarray  # sorted distinct p-values that can be flagged (p <= alpha and |d| >= eps)
    w_up: np.ndarray  # chance of an outcome with this p-value and d >= eps
    w_down: np.ndarray  # ... and d <= -eps


def _item(p: float, q: float, k1: int, k2: int, eps: Fraction, alpha: float) -> _Item:
    from scipy.stats import binom

    P = _table(k1, k2)
    w = np.outer(binom.pmf(np.arange(k1 + 1), k1, p), binom.pmf(np.arange(k2 + 1), k2, q))
    a, b = np.meshgrid(np.arange(k1 + 1), np.arange(k2 + 1), indexing="ij")
    up, down = diff_at_least(a, np.full_like(a, k1), b, np.full_like(b, k2), eps)
    keep = (up | down) & (P <= alpha) & (w > 0)
    values, inv = np.unique(P[keep], return_inverse=True)
    w_up = np.bincount(inv, weights=(w * up)[keep], minlength=values.size)
    w_down = np.bincount(inv, weights=(w * down)[keep], minlength=values.size)
    return _Item(values, w_up, w_down)


def bh_flagged(values: np.ndarray, others: np.ndarray, alpha: float) -> np.ndarray:
    """Whether an item with p-value ``values[u]`` gets BH ``q <= alpha`` beside the other items.

    ``others`` has shape ``(R, n_others)`` (R contexts); the result ``(R, len(values))``.
    Decided as ``scipy.stats.false_discovery_control`` decides it for the item within
    ``m = n_others + 1`` p-values: its q is the minimum of ``p_(j) * (m / j)`` over the
    sorted positions ``j`` from its own (after every other p-value <= it) to ``m``.
    """
    values = np.asarray(values, dtype=np.float64)
    o = np.sort(np.asarray(others, dtype=np.float64), axis=-1)
    r, n_o = o.shape
    m = n_o + 1
    # Other item at 0-based sorted index c sits at full position c + 2 once the item is below it.
    adj = o * (m / np.arange(2, m + 1, dtype=np.float64))
    suffix = np.full((r, n_o + 1), np.inf)
    if n_o:
        suffix[:, :n_o] = np.minimum.accumulate(adj[:, ::-1], axis=1)[:, ::-1]
    # c[r, u] = #{others <= values[u]} per context, via integer codes (exact comparisons).
    vocab = np.unique(np.concatenate([values, o.ravel()]))
    ocode = np.searchsorted(vocab, o)
    vcode = np.searchsorted(vocab, values)
    span = vocab.size + 1
    rows = np.arange(r, dtype=np.int64)[:, None] * span
    flat = (ocode + rows).ravel()
    c = np.searchsorted(flat, (vcode[None, :] + rows).ravel(), side="right").reshape(r, -1)
    c = c - np.arange(r, dtype=np.int64)[:, None] * n_o
    own = values[None, :] * (m / (c + 1.0))
    q = np.minimum(own, np.take_along_axis(suffix, c, axis=1))
    return q <= alpha


def _weigh(item: _Item, others: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    if item.values.size == 0:
        z = np.zeros(others.shape[0])
        return z, z
    f = bh_flagged(item.values, others, alpha).astype(np.float64)
    return f @ item.w_up, f @ item.w_down


def _bound(item: _Item, m: int, alpha: float, *, low: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_weigh` beside ``m - 1`` other p-values all 1 (``low``) or all 0, in closed form.

    All 1: the item is first in order, its q is ``p * (m / 1)`` (the others' ``1 * (m / j)``
    exceed alpha). All 0: it is last, its q is ``p * (m / m)``.
    """
    q = item.values * (m / 1.0) if low else item.values * (m / float(m))
    f = (q <= alpha).astype(np.float64)
    return np.array([f @ item.w_up]), np.array([f @ item.w_down])


def flag_power(
    p: float,
    q: float,
    *,
    k: int,
    n_items: int,
    k_target: int | None = None,
    alpha: float = 0.05,
    eps: str | float | Fraction = "0.2",
    others: Sequence[float] | np.ndarray | None = None,
    moving: float = 0.0,
    base_rate: float | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> FlagPower:
    """The chance that an item moving ``p -> q`` at ``k`` (source) and ``k_target`` trials is flagged.

    See the module docstring for the rule and the assumptions (``others`` or ``moving``).
    With ``others`` given, ``n_items`` must be ``len(others) + 1``.
    """
    k2 = k if k_target is None else k_target
    _check(p, q, k, k2, n_items, alpha)
    eps_f = parse_eps(eps)
    item = _item(p, q, int(k), int(k2), eps_f, alpha)
    m = int(n_items)
    lo_up, lo_down = _bound(item, m, alpha, low=True)
    hi_up, hi_down = _bound(item, m, alpha, low=False)
    direction = (lo_up, hi_up) if q > p else (lo_down, hi_down) if q < p else (lo_up + lo_down, hi_up + hi_down)
    bounds = (float(direction[0][0]), float(direction[1][0]))
    base_result = FlagPower(p=float(p), q=float(q), k_source=int(k), k_target=int(k2), n_items=m,
                            alpha=float(alpha), eps=eps_f, improved=0.0, regressed=0.0, bounds=bounds,
                            context="", method=EXACT)
    if others is not None:
        o = np.asarray(others, dtype=np.float64).reshape(1, -1)
        if o.shape[1] != m - 1:
            raise ValueError(f"others must hold n_items - 1 = {m - 1} p-values, got {o.shape[1]}")
        up, down = _weigh(item, o, alpha)
        return replace(base_result, improved=float(up[0]), regressed=float(down[0]),
                       context=f"the other {m - 1} item(s)' p-values as given")
    if not 0 <= moving <= 1:
        raise ValueError(f"moving must lie in [0, 1], got {moving}")
    base = float(p if base_rate is None else base_rate)
    if not 0 <= base <= 1:
        raise ValueError(f"base_rate must lie in [0, 1], got {base_rate}")
    n_mov = int(Fraction(moving).limit_denominator(10**9) * (m - 1) + Fraction(1, 2))
    n_mov = min(n_mov, m - 1)
    context = (f"{n_mov} of the other {m - 1} item(s) move {p:g} -> {q:g}, "
               f"the rest stay at {base:g}")
    if m == 1:
        return replace(base_result, improved=float(lo_up[0]), regressed=float(lo_down[0]),
                       context="no other item", moving_items=0, base_rate=base)
    if int(n_resamples) != n_resamples or n_resamples < 2:
        raise ValueError(f"n_resamples must be an integer >= 2, got {n_resamples}")
    if int(seed) != seed or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed}")
    rng = np.random.default_rng(int(seed))
    table = _table(int(k), int(k2))
    r = int(n_resamples)

    def draw(n: int, ps: float, pt: float) -> np.ndarray:
        a = rng.binomial(int(k), ps, size=(r, n))
        b = rng.binomial(int(k2), pt, size=(r, n))
        return table[a, b]

    o = np.concatenate([draw(n_mov, p, q), draw(m - 1 - n_mov, base, base)], axis=1)
    up, down = _weigh(item, o, alpha)
    in_dir = up if q > p else down if q < p else up + down
    return replace(
        base_result, improved=float(up.mean()), regressed=float(down.mean()), method=SIMULATED,
        context=context, moving_items=n_mov, base_rate=base, n_resamples=r, seed=int(seed),
        mc_se=float(in_dir.std(ddof=1) / np.sqrt(r)),
    )


def direction_share(p: float, q: float, *, k: int, k_target: int | None = None,
                    eps: str | float | Fraction = "0.2") -> float:
    """The chance that the observed ``d`` reaches ``eps`` in the direction of the move (either
    direction when ``p == q``): a cap on the power whatever the test, computed without Fisher."""
    from scipy.stats import binom

    k2 = k if k_target is None else k_target
    eps_f = parse_eps(eps)
    w = np.outer(binom.pmf(np.arange(k + 1), k, p), binom.pmf(np.arange(k2 + 1), k2, q))
    a, b = np.meshgrid(np.arange(k + 1), np.arange(k2 + 1), indexing="ij")
    up, down = diff_at_least(a, np.full_like(a, k), b, np.full_like(b, k2), eps_f)
    sel = up if q > p else down if q < p else up | down
    return float(w[sel].sum())


@dataclass(frozen=True)
class KNeeded:
    """The smallest K (both sides) in ``[k_min, k_max]`` whose power reaches ``target``.

    ``k`` is None when no K up to ``k_max`` does; ``at_k`` is the power there. Power is not
    monotone in K (the tests are discrete), so every K from ``k_min`` up is examined.
    """

    p: float
    q: float
    target: float
    k: int | None
    at_k: FlagPower | None
    k_min: int
    k_max: int
    cap: float  # the chance that d reaches eps at k_max, an upper limit of the power there

    def to_json(self) -> dict:
        return {
            "p": self.p,
            "q": self.q,
            "target": self.target,
            "k": self.k,
            "power_at_k": None if self.at_k is None else self.at_k.power,
            "mc_se_at_k": None if self.at_k is None else self.at_k.mc_se,
            "k_min": self.k_min,
            "k_max": self.k_max,
            "cap_at_k_max": self.cap,
        }


def k_for_power(
    p: float,
    q: float,
    *,
    power: float = 0.8,
    n_items: int,
    alpha: float = 0.05,
    eps: str | float | Fraction = "0.2",
    moving: float = 0.0,
    base_rate: float | None = None,
    k_min: int = 1,
    k_max: int = 200,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> KNeeded:
    """The K per side needed to flag an item moving ``p -> q`` with at least chance ``power``.

    Each K uses the same seed (common random numbers). A K is skipped without the Fisher
    tables when even the chance of ``d`` reaching eps, or the exact upper bound, falls short.
    """
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")
    if int(k_min) != k_min or k_min < 1:
        raise ValueError(f"k_min must be a whole number of at least 1, got {k_min}")
    if int(k_max) != k_max or k_max < k_min:
        raise ValueError(f"k_max must be a whole number of at least {k_min} (the smallest K examined), got {k_max}")
    eps_f = parse_eps(eps)
    for k in range(int(k_min), int(k_max) + 1):
        if direction_share(p, q, k=k, eps=eps_f) < power:
            continue
        item = _item(p, q, k, k, eps_f, alpha)
        hi_up, hi_down = _bound(item, int(n_items), alpha, low=False)
        if (hi_up if q > p else hi_down if q < p else hi_up + hi_down)[0] < power:
            continue
        res = flag_power(p, q, k=k, n_items=n_items, alpha=alpha, eps=eps, moving=moving,
                         base_rate=base_rate, n_resamples=n_resamples, seed=seed)
        if res.power >= power:
            return KNeeded(float(p), float(q), float(power), k, res, int(k_min), int(k_max),
                           direction_share(p, q, k=int(k_max), eps=eps))
    return KNeeded(float(p), float(q), float(power), None, None, int(k_min), int(k_max),
                   direction_share(p, q, k=int(k_max), eps=eps))
