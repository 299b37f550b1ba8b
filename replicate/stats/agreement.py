"""Agreement between two label vectors, and among several coders (pure, vectorised over tables).

Every figure here is a function of the two-way table of the pairs of labels
(``table[i, j]``: items the first side labelled ``values[i]`` and the second
``values[j]``), so one code path serves a single pair of label vectors, many
pairs and every bootstrap replicate (tables of shape ``(..., V, V)``):

- **Cohen's kappa** ``1 - sum(w * O) / sum(w * E)``, ``O`` the observed shares,
  ``E`` the product of the two sides' marginal shares, ``w`` the disagreement
  weights: 0/1 (``none``), ``|i - j|`` (``linear``) or ``(i - j)^2``
  (``quadratic``), ``i, j`` the label **values** (a grade 10 is 7 above 3, as in
  interval alpha, MAE and Pearson's r: one numeric scale for every weighted
  figure; equal to ``sklearn.metrics.cohen_kappa_score``, which weighs
  positions in ``labels``, when ``labels`` lists every whole number of the
  range, so that positions and values differ by a constant);
- **Scott's pi** ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from the pooled marginals;
- **Krippendorff's alpha** ``1 - (n - 1) sum(o * d) / sum(n_c n_k d)`` over the
  coincidence matrix ``o`` (two coders: ``table + table.T``), ``n_c`` its
  marginals, ``d`` the level's distance (nominal, ordinal over the domain's
  marginals, interval, ratio), as the ``krippendorff`` package computes it;
  :func:`krippendorff_alpha` takes reliability data of any number of coders
  with missing values;
- **Kendall's tau-b** from concordant and discordant pairs of the table, and
  **Spearman's rho** as Pearson's r of the mid-ranks the marginals give.

A table may carry one trailing slot for a **missing** label (an unparsed
output): shape ``(..., V + 1, V + 1)`` (see :func:`figure_values`). Nominal
figures (unweighted kappa, Scott's pi, nominal alpha) can count it as a
category of its own (the unparsed policy ``wrong``: it equals no gold label);
the others need a place on the scale and use the parsed pairs only (as MAE and
Pearson's r do). Binarized at ``t``: a label ``>= t`` is 1, else 0.
Undefined figures (no pairs, a constant side) are NaN in arrays, None as floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replicate.stats.policy import Policy, check_policy

#: Canonical figure names (a verify metric reads ``agreement.<name>``).
FIGURES: tuple[str, ...] = ("cohen_kappa", "scott_pi", "krippendorff_alpha", "kendall_tau", "spearman")
WEIGHTS: tuple[str, ...] = ("none", "linear", "quadratic")
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True, slots=True)
class Figure:
    """One agreement figure with its settings: ``weights`` (kappa), ``level`` (alpha), ``binarize`` (any)."""

    name: str
    weights: str | None = None
    level: str | None = None
    binarize: int | None = None

    def __post_init__(self) -> None:
        if self.name not in FIGURES:
            raise ValueError(f"figure must be one of {', '.join(FIGURES)}; got {self.name!r}")
        if self.name == "cohen_kappa":
            object.__setattr__(self, "weights", self.weights or "none")
            if self.weights not in WEIGHTS:
                raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}; got {self.weights!r}")
        elif self.weights is not None:
            raise ValueError(f"weights apply to cohen_kappa only; got weights={self.weights!r} for {self.name}")
        if self.name == "krippendorff_alpha":
            object.__setattr__(self, "level", self.level or "nominal")
            if self.level not in LEVELS:
                raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {self.level!r}")
        elif self.level is not None:
            raise ValueError(f"level applies to krippendorff_alpha only; got level={self.level!r} for {self.name}")
        if self.binarize is not None and (isinstance(self.binarize, bool) or not isinstance(self.binarize, (int, np.integer))):
            raise ValueError(f"binarize must be an integer threshold or None; got {self.binarize!r}")

    @property
    def nominal(self) -> bool:
        """Whether only equality of labels matters (an unparsed output can then be a category of its own)."""
        return self.name == "scott_pi" or self.weights == "none" or self.level == "nominal"

    @property
    def column(self) -> str:
        """The figure's name with its weights or level (``cohen_kappa_linear``, ``krippendorff_alpha_ordinal``);
        plain ``cohen_kappa`` is unweighted."""
        setting = self.weights if self.weights not in (None, "none") else self.level
        return self.name if setting is None else f"{self.name}_{setting}"

    @classmethod
    def from_column(cls, column: str, binarize: int | None = None) -> Figure:
        """The figure a :attr:`column` names (its inverse)."""
        for name in FIGURES:
            if column == name:
                return cls(name, binarize=binarize)
            setting = column.removeprefix(name + "_")
            if setting != column:
                if name == "cohen_kappa" and setting in WEIGHTS:
                    return cls(name, weights=setting, binarize=binarize)
                if name == "krippendorff_alpha" and setting in LEVELS:
                    return cls(name, level=setting, binarize=binarize)
        raise ValueError(f"unknown agreement figure {column!r}; known: {', '.join(f.column for f in all_figures())}")

    def settings(self) -> dict:
        out: dict = {"figure": self.name}
        if self.weights is not None:
            out["weights"] = self.weights
        if self.level is not None:
            out["level"] = self.level
        out["binarize"] = self.binarize
        return out


def all_figures(binarize: int | None = None) -> tuple[Figure, ...]:
    """Every figure and setting: kappa (3 weights), Scott's pi, alpha (4 levels), tau-b, rho."""
    return (
        *(Figure("cohen_kappa", weights=w, binarize=binarize) for w in WEIGHTS),
        Figure("scott_pi", binarize=binarize),
        *(Figure("krippendorff_alpha", level=lv, binarize=binarize) for lv in LEVELS),
        Figure("kendall_tau", binarize=binarize),
        Figure("spearman", binarize=binarize),
    )


# --- figures of tables (..., V, V) --------------------------------------------------------------


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _weights(kind: str, values: np.ndarray) -> np.ndarray:
    gap = values[:, None] - values[None, :]
    return {"none": (gap != 0).astype(np.float64), "linear": np.abs(gap), "quadratic": gap * gap}[kind]


def kappa_of_tables(
    tables: np.ndarray, weights: str = "none", values: Sequence[float] | np.ndarray | None = None
) -> np.ndarray:
    """Cohen's kappa of each table (rows: first side, columns: second), NaN where undefined.

    ``values``: the label value of each row (the ordered value domain); the weights are over these
    values (default ``0, 1, 2, ...``: positions)."""
    t = np.asarray(tables, dtype=np.float64)
    v = np.arange(t.shape[-1], dtype=np.float64) if values is None else np.asarray(values, dtype=np.float64)
    if len(v) != t.shape[-1]:
        raise ValueError(f"tables have {t.shape[-1]} rows for {len(v)} values")
    w = _weights(weights, v)
    n = t.sum(axis=(-2, -1))
    observed = (t * w).sum(axis=(-2, -1))
    expected = ((t.sum(axis=-1) @ w) * t.sum(axis=-2)).sum(axis=-1)
    return 1 - _div(observed * n, expected)


def scott_pi_of_tables(tables: np.ndarray) -> np.ndarray:
    """Scott's pi of each table: chance agreement from the two sides' pooled label shares."""
    t = np.asarray(tables, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    pooled = _div(t.sum(axis=-1) + t.sum(axis=-2), 2 * n[..., None])
    p_e = (pooled * pooled).sum(axis=-1)
    p_o = _div(np.trace(t, axis1=-2, axis2=-1), n)
    return _div(p_o - p_e, 1 - p_e)


def _distances(level: str, values: np.ndarray, n_v: np.ndarray) -> np.ndarray:
    """The level's distance between every two values, ``(..., V, V)`` (ordinal: from the marginals ``n_v``)."""
    v = np.asarray(values, dtype=np.float64)
    if level == "nominal":
        return (v[:, None] != v[None, :]).astype(np.float64)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        return _ratio(v[:, None] - v[None, :], v[:, None] + v[None, :]) ** 2
    # ordinal: (sum of n_g from value c to value k, both included, minus half of n_c + n_k) squared
    cum = np.concatenate([np.zeros(n_v.shape[:-1] + (1,)), np.cumsum(n_v, axis=-1)], axis=-1)
    idx = np.arange(n_v.shape[-1])
    lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
    between = cum[..., hi + 1] - cum[..., lo]
    return (between - (n_v[..., :, None] + n_v[..., None, :]) / 2) ** 2


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def alpha_of_coincidences(o: np.ndarray, level: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Krippendorff's alpha from coincidence matrices ``(..., V, V)`` over the ordered value domain ``values``."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    o = np.asarray(o, dtype=np.float64)
    n_v = o.sum(axis=-1)
    n = n_v.sum(axis=-1)
    d = _distances(level, np.asarray(values), n_v)
    observed = (o * d).sum(axis=(-2, -1))
    expected = ((n_v[..., None, :] @ d)[..., 0, :] * n_v).sum(axis=-1)
    return 1 - _div((n - 1) * observed, expected)


def alpha_of_tables(tables: np.ndarray, level: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Krippendorff's alpha of two coders' tables: each pair is a unit coded twice (coincidences ``t + t.T``)."""
    t = np.asarray(tables, dtype=np.float64)
    return alpha_of_coincidences(t + np.swapaxes(t, -1, -2), level, values)


def tau_b_of_tables(tables: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each table (ordered rows and columns), as ``scipy.stats.kendalltau``."""
    t = np.asarray(tables, dtype=np.float64)
    # S[i, j]: items in rows > i and columns > j (concordant with cell i, j); Z: rows > i, columns < j
    suffix = np.flip(np.cumsum(np.cumsum(np.flip(t, axis=(-2, -1)), axis=-2), axis=-1), axis=(-2, -1))
    S = np.zeros_like(t)
    S[..., :-1, :-1] = suffix[..., 1:, 1:]
    rows_below = np.flip(np.cumsum(np.flip(t, axis=-2), axis=-2), axis=-2)  # rows >= i
    left = np.cumsum(rows_below, axis=-1)  # rows >= i, columns <= j
    Z = np.zeros_like(t)
    Z[..., :-1, 1:] = left[..., 1:, :-1]
    score = (t * (S - Z)).sum(axis=(-2, -1))
    n = t.sum(axis=(-2, -1))
    pairs = n * (n - 1) / 2
    row, col = t.sum(axis=-1), t.sum(axis=-2)
    x_ties = (row * (row - 1) / 2).sum(axis=-1)
    y_ties = (col * (col - 1) / 2).sum(axis=-1)
    den = np.sqrt(pairs - x_ties) * np.sqrt(pairs - y_ties)
    return np.clip(_div(score, den), -1, 1)


def _midranks(margin: np.ndarray) -> np.ndarray:
    """Mid-rank of each value given how many items take it (ties share the mean rank), minus the mean rank."""
    before = np.cumsum(margin, axis=-1) - margin
    n = margin.sum(axis=-1, keepdims=True)
    return before + (margin + 1) / 2 - (n + 1) / 2


def spearman_of_tables(tables: np.ndarray) -> np.ndarray:
    """Spearman's rho of each table: Pearson's r of the two sides' mid-ranks."""
    t = np.asarray(tables, dtype=np.float64)
    row, col = t.sum(axis=-1), t.sum(axis=-2)
    rx, ry = _midranks(row), _midranks(col)
    cov = ((rx[..., None, :] @ t)[..., 0, :] * ry).sum(axis=-1)
    vx, vy = (row * rx * rx).sum(axis=-1), (col * ry * ry).sum(axis=-1)
    return np.clip(_div(cov, np.sqrt(vx) * np.sqrt(vy)), -1, 1)


def binarize_tables(tables: np.ndarray, values: Sequence[float] | np.ndarray, threshold: float) -> np.ndarray:
    """Tables over ``values`` (plus a trailing missing slot when ``tables`` has one more row) folded to 0/1
    (value >= threshold is 1), the missing slot kept last."""
    t = np.asarray(tables, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    extra = t.shape[-1] - len(v)
    if extra not in (0, 1):
        raise ValueError(f"tables have {t.shape[-1]} rows for {len(v)} values")
    high = v >= threshold
    groups = [np.flatnonzero(~high), np.flatnonzero(high)] + ([np.array([len(v)])] if extra else [])
    rows = np.stack([t[..., g, :].sum(axis=-2) for g in groups], axis=-2)
    return np.stack([rows[..., g].sum(axis=-1) for g in groups], axis=-1)


def reading(
    tables: np.ndarray, values: Sequence[float] | np.ndarray, binarize: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """The tables and value domain a figure reads: as given, or binarized at ``binarize`` (domain 0, 1)."""
    t = np.asarray(tables, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if t.shape[-1] != len(v) + 1 or t.shape[-2] != len(v) + 1:
        raise ValueError(f"tables must be (..., {len(v) + 1}, {len(v) + 1}) for {len(v)} values; got {t.shape}")
    if binarize is None:
        return t, v
    return binarize_tables(t, v, binarize), np.array([0.0, 1.0])


def figure_values(
    tables: np.ndarray, figure: Figure, values: Sequence[float] | np.ndarray, *, policy: Policy = "intersect"
) -> np.ndarray:
    """One figure of every table ``(..., V + 1, V + 1)`` (the last row and column: missing labels), NaN = undefined.

    ``values`` is the ordered value domain (V values). Under ``policy`` ``wrong`` a nominal figure keeps
    the missing slot as a category of its own; under ``intersect``, and for every other figure, only
    pairs with both labels count. (Many figures of one reading: :func:`reading` once, then
    :func:`read_figure` for each.)
    """
    t, v = reading(tables, values, figure.binarize)
    return read_figure(t, figure, v, policy=policy)


def read_figure(t: np.ndarray, figure: Figure, v: np.ndarray, *, policy: Policy = "intersect") -> np.ndarray:
    """:func:`figure_values` of tables already in the figure's reading (binarized when it asks for it)."""
    check_policy(policy)
    keep = len(v) + 1 if policy == "wrong" and figure.nominal else len(v)
    t = t[..., :keep, :keep]
    if keep > len(v):
        v = np.append(v, v[-1] + 1 if len(v) else 0)  # a value of its own (nominal figures read only equality)
    if figure.name == "cohen_kappa":
        return kappa_of_tables(t, figure.weights or "none", v)
    if figure.name == "scott_pi":
        return scott_pi_of_tables(t)
    if figure.name == "krippendorff_alpha":
        return alpha_of_tables(t, figure.level or "nominal", v)
    if figure.name == "kendall_tau":
        return tau_b_of_tables(t)
    return spearman_of_tables(t)


# --- label vectors ------------------------------------------------------------------------------


def domain_of(*label_vectors: np.ndarray, domain: Sequence[float] | None = None) -> np.ndarray:
    """The ordered value domain: ``domain`` (checked to hold every label), else the labels' distinct values."""
    seen = np.unique(np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in label_vectors]))
    seen = seen[~np.isnan(seen)]
    if domain is None:
        return seen
    d = np.asarray(domain, dtype=np.float64)
    if len(d) and np.any(np.diff(d) <= 0):
        raise ValueError(f"domain must be strictly increasing; got {list(domain)!r}")
    outside = np.setdiff1d(seen, d)
    if len(outside):
        raise ValueError(f"labels {outside.tolist()} lie outside the domain {d.tolist()}")
    return d


def codes_of(labels: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Each label's position in ``domain``; ``len(domain)`` (the missing slot) where the label is NaN."""
    x = np.asarray(labels, dtype=np.float64)
    missing = np.isnan(x)
    codes = np.searchsorted(domain, np.where(missing, domain[0] if len(domain) else 0, x))
    return np.where(missing, len(domain), codes).astype(np.int64)


def pair_table(codes_a: np.ndarray, codes_b: np.ndarray, size: int) -> np.ndarray:
    """The ``(size, size)`` table of two code vectors (codes ``0..size-1``)."""
    flat = np.asarray(codes_a, dtype=np.int64) * size + np.asarray(codes_b, dtype=np.int64)
    return np.bincount(flat, minlength=size * size).reshape(size, size)


def agreement(
    labels_a: Sequence[float] | np.ndarray,
    labels_b: Sequence[float] | np.ndarray,
    *,
    figure: str = "cohen_kappa",
    weights: str | None = None,
    level: str | None = None,
    binarize: int | None = None,
    domain: Sequence[float] | None = None,
    policy: Policy = "intersect",
) -> float | None:
    """One agreement figure between two label vectors (NaN = missing/unparsed); None when undefined.

    ``domain``: the ordered values labels can take (default: those seen); it fixes the ordinal distance
    (kappa's weights and the interval and ratio distances are over the values themselves). See :func:`figure_values` for ``policy``.
    """
    fig = Figure(figure, weights=weights, level=level, binarize=binarize)
    a, b = np.asarray(labels_a, dtype=np.float64), np.asarray(labels_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"labels_a and labels_b must be vectors of one length; got {a.shape} and {b.shape}")
    d = domain_of(a, b, domain=domain)
    table = pair_table(codes_of(a, d), codes_of(b, d), len(d) + 1)
    value = float(figure_values(table, fig, d, policy=policy))
    return None if np.isnan(value) else value


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[float]] | np.ndarray,
    *,
    level: str = "nominal",
    domain: Sequence[float] | None = None,
) -> float | None:
    """Krippendorff's alpha of reliability data (coders x units, NaN = missing): units coded once are left out."""
    data = np.atleast_2d(np.asarray(reliability_data, dtype=np.float64))
    d = domain_of(data, domain=domain)
    codes = codes_of(data, d)  # (coders, units); len(d) = missing
    counts = np.zeros((data.shape[1], len(d) + 1))
    np.add.at(counts, (np.broadcast_to(np.arange(data.shape[1]), codes.shape), codes), 1)
    counts = counts[:, : len(d)]
    m = counts.sum(axis=1)
    pairable = m >= 2
    c = counts[pairable]
    o = np.einsum("ui,uj->ij", c / (m[pairable, None] - 1), c) - np.diag((c / (m[pairable, None] - 1)).sum(axis=0))
    value = float(alpha_of_coincidences(o, level, d))
    return None if np.isnan(value) else value
