"""The one metric table: every figure a claim can name, over judge runs or a trials table (pure).

A :class:`Metric` row says which **source** the figure is computed from
(``runs``: the claims file's ``[runs]``; ``trials``: a ``[trials]`` table),
which **scopes** it takes, the **kind** of its value (which fixes the units it
may be printed in), and, for trial figures, the **family** that decides how a
fresh collection is compared with it (:mod:`replicate.verify.replication`).

Every four-cell figure of the one table
(:data:`replicate.stats.fourcell.FIGURES`) is an ``edge`` metric of the same
name (:func:`figure_metric`), made when asked for: a figure registered there
can be claimed with no change here.

Scopes over runs: ``run`` (``run = "NAME"``), ``edge`` (``old`` and ``new``),
``floor`` (``runs = [...]``, repeats of one model). Scopes over trials:
``cell`` (``edge = "A:B"`` and ``benchmark``, or the pooled cell), ``model``
(``model`` and ``benchmark``), ``benchmark``. Trial metric names follow the
keys of ``replicate items`` / ``screen --format json``.

Kinds: ``count`` (compared exactly), ``rate`` (a fraction 0-1, printed as a
percent or a fraction), ``number`` (printed as a ratio, compared at printed
precision), ``share_count`` (a count of items, or the same as a share) and
``flag`` (printed ``pass`` or ``fail``).

Adding a metric
---------------

A metric is a row (:mod:`replicate.verify.metric_row`); a family of metrics is
one small module that builds rows, and this module imports every family by
name and puts its rows in the table (no row is added as a side effect of an
import). A metric of your own is added with :func:`register` (see
``docs/verify.md``, "Adding a metric"):

- ``fields``: the claim fields the metric takes beyond those of its source and
  scope (e.g. ``weights`` of a kappa), each a :class:`Field` with its check and
  default. The claims parser accepts exactly these for a claim naming it, checks
  each value, and hands the checked values to the claim as ``claim.options``.
- ``compute``: how the figure is computed. Built-in rows leave it None (their
  source's core, :mod:`~replicate.verify.recompute` or
  :mod:`~replicate.verify.trials_recompute`, computes them by name). A new
  family gives a function ``compute(core, claim, column)``: over runs it gets
  the :class:`~replicate.verify.recompute.Recomputer` (``core.labelled(name,
  parser)``: a run labelled under a parser) and the parser name, and returns a
  :class:`~replicate.verify.recompute.Computed`.
- ``pattern``: rows whose names share a prefix and whose rest is a key read at
  compute time (``items.null_p95.<key>``) are made by a :class:`Pattern`.
"""

from __future__ import annotations

from typing import Any

import replicate.verify.sources.agreement as agreement
import replicate.verify.sources.costs as costs
import replicate.verify.sources.rankings_metrics as rankings_metrics
from replicate.stats.fourcell import FIGURES
from replicate.verify.metric_row import (
    TRIAL_UNITS,
    UNITS,
    UNITS_OF_KIND,
    Family,
    Field,
    Kind,
    Metric,
    Pattern,
    Source,
    claim_unit,
)

__all__ = ["METRICS", "NULL_PREFIX", "PATTERNS", "TRIAL_UNITS", "UNITS", "UNITS_OF_KIND",
           "Family", "Field", "Kind", "Metric", "Pattern", "Source", "claim_unit", "figure_metric", "metric",
           "metric_names", "register"]

#: Every metric by name, both sources (names never collide: trial names carry their command's prefix).
METRICS: dict[str, Metric] = {}
PATTERNS: list[Pattern] = []


def register(*metrics: Metric | Pattern) -> None:
    """Add rows (or patterns) to the table; a name already taken is a programming error."""
    for m in metrics:
        if isinstance(m, Pattern):
            PATTERNS.append(m)
            continue
        if m.name in METRICS:
            raise ValueError(f"metric {m.name!r} is registered twice")
        METRICS[m.name] = m


def metric(name: str, source: Source | None = None) -> Metric | None:
    """The metric called ``name`` (of ``source``, when given), or None when there is none."""
    m = METRICS.get(name) or figure_metric(name) or next((x for p in PATTERNS if (x := p(name)) is not None), None)
    return m if m is not None and (source is None or m.source == source) else None


def metric_names(source: Source) -> list[str]:
    """Every name a claim over ``source`` may use (patterns shown with their usual keys)."""
    names = [n for n, m in METRICS.items() if m.source == source]
    if source == "runs":  # the four-cell figures after the cells they are made of
        at = max(i for i, n in enumerate(names) if n.startswith("cells.")) + 1
        names[at:at] = [f for f in FIGURES if f not in METRICS]
    return names + [p.prefix + k for p in PATTERNS if p.source == source for k in p.examples]


def figure_metric(name: str) -> Metric | None:
    """The edge metric of the four-cell figure ``name`` (:data:`replicate.stats.fourcell.FIGURES`), else None:
    a ratio printed as a number, a rate or a difference as a percent or a fraction."""
    f = FIGURES.get(name)
    if f is None:
        return None
    return Metric(name, "runs", ("edge",), "number" if f.kind == "ratio" else "rate", f.definition)


# -- over judge runs ---------------------------------------------------------------------------
def _r(name: str, scopes: tuple[str, ...], kind: Kind, meaning: str, extra: tuple[str, ...] = ()) -> Metric:
    return Metric(name, "runs", scopes, kind, meaning, extra_units=extra)


RUN_METRICS = (
    _r("n", ("run", "edge"), "count", "items the figure is computed over (a run's parsed items; an edge's shared items)"),
    _r("em", ("run",), "rate", "exact match: share of the run's items whose label equals gold"),
    _r("mae", ("run",), "number", "mean absolute difference between label and gold over parsed items"),
    _r("pearson", ("run",), "number", "Pearson correlation of label and gold over parsed items"),
    _r("unparsed", ("run",), "rate", "share of the run's items the parser left unparsed", ("count",)),
    _r("cells.both", ("edge",), "count", "items both versions got right"),
    _r("cells.only_old", ("edge",), "count", "items only the old version got right (regressions)"),
    _r("cells.only_new", ("edge",), "count", "items only the new version got right"),
    _r("cells.neither", ("edge",), "count", "items both versions got wrong"),
    _r("floor.regression_min", ("floor",), "rate", "smallest regression rate between two repeats"),
    _r("floor.regression_max", ("floor",), "rate", "largest regression rate between two repeats"),
    _r("floor.change_min", ("floor",), "rate", "smallest change rate between two repeats"),
    _r("floor.change_max", ("floor",), "rate", "largest change rate between two repeats"),
)


# -- over trials tables ------------------------------------------------------------------------
def _t(name: str, scope: str, kind: Kind, family: Family, meaning: str, **kw: Any) -> Metric:
    return Metric(name, "trials", (scope,), kind, meaning, family=family, **kw)


TRIAL_METRICS = (
    _t("items.n", "cell", "count", "design", "items in the cell (non-error trials on both sides)"),
    _t("items.improved", "cell", "share_count", "share", "items reliably improved (significant and >= eps)"),
    _t("items.regressed", "cell", "share_count", "share", "items reliably regressed (significant and <= -eps)"),
    _t("items.changed", "cell", "share_count", "share", "items improved or regressed"),
    _t("items.equivalent", "cell", "share_count", "share", "items practically equivalent (interval inside (-eps, eps))"),
    _t("items.inconclusive", "cell", "share_count", "share", "items in no other class"),
    _t("items.p_plus", "cell", "rate", "share", "P+: share of the cell's items reliably improved"),
    _t("items.p_minus", "cell", "rate", "share", "P-: share of the cell's items reliably regressed"),
    _t("items.p_chg", "cell", "rate", "share", "Pchg = P+ + P-"),
    _t("items.delta", "cell", "rate", "mean", "mean over items of p(target) - p(source)"),
    _t("items.delta_r", "cell", "rate", "mean", "R(target) - R(source), R = mean loose - mean strict rate",
       needs_loose=True),
    _t("accuracy", "model", "rate", "mean", "mean over the benchmark's items of p(model, item), strict reading"),
    _t("accuracy.loose", "model", "rate", "mean", "the same under the loose reading, over items that have one",
       needs_loose=True),
    _t("screen.share", "benchmark", "rate", "share", "share of items where some model's accuracy lies in [low, high]"),
    _t("screen.informative_items", "benchmark", "share_count", "share",
       "items where some model's accuracy lies in [low, high]"),
    _t("screen.n_items", "benchmark", "count", "design", "items screened (some model has a non-error trial)"),
    _t("screen.passes", "benchmark", "flag", "flag", "whether the share reaches the threshold (pass or fail)"),
)

#: ``items.null_p95.<key>``: any key of the cell's ``null_p95`` object (read by key, so keys the
#: engine adds later are claimable without a change here).
NULL_PREFIX = "items.null_p95."

NULL_P95 = Pattern(
    NULL_PREFIX, "trials",
    lambda name, key: _t(name, "cell", "rate", "share", f"95th percentile of the permutation null's {key}",
                         needs_null=True),
    examples=("p_plus", "p_minus", "p_chg"),
)


#: The families in modules of their own, each by name.
FAMILIES = (agreement.METRICS, costs.METRICS, rankings_metrics.METRICS)

register(*RUN_METRICS, *TRIAL_METRICS, NULL_P95, *(m for family in FAMILIES for m in family))
