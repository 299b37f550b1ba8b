"""Claims over token costs in a trials table: ``costs.median_tokens`` and ``costs.edge_median_ratio``.

The claim fields (``kind``, ``per``) and an example: docs/verify-trials.md, "Metrics".

The figures are those of ``replicate costs`` (:func:`replicate.trials.costs.analyse_costs`, without
bootstrap replicates), read with :meth:`~replicate.trials.costs_result.CostsResult.median_tokens` and
:meth:`~replicate.trials.costs_result.CostsResult.edge_median_ratio`. A table whose trials report no
usage gives no cost figure: the claim is not computable, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from replicate.trials.usage import KINDS
from replicate.verify.matching import Computed
from replicate.verify.metric_row import Field, Metric, one_of

PER = ("trial", "item")


def _costs(core: Any, c: Any, name: str, edge: tuple[str, str] | None) -> Any:
    """``analyse_costs`` of table ``name`` under the claim's settings, once per (table, by, edge, settings)."""
    from replicate.trials.costs import analyse_costs

    s = c.settings
    key = ("costs", name, c.by, edge, s.eps, s.alpha, s.ci, s.seed)
    return core.cached(key, lambda: analyse_costs(
        core.tables[name], [edge] if edge else [], by=c.by, n_resamples=0, seed=s.seed,
        classification={"eps": s.eps, "alpha": s.alpha, "ci": s.ci}))


def _figure(core: Any, c: Any, name: str, edge: tuple[str, str] | None, read: Callable[[Any], Any], missing: str,
            absent: str) -> Computed:
    """A cost figure ``read`` from the table's costs; not computable without usage, when ``read`` finds no such
    model, benchmark or cell (``missing``) or no tokens to take a median of (``absent``)."""
    result = _costs(core, c, name, edge)
    if not result.usage_reported:
        from replicate.trials.costs_result import NO_USAGE

        return Computed(None, NO_USAGE)
    try:
        value = read(result)
    except KeyError:
        return Computed(None, missing)
    return Computed(value) if value is not None else Computed(None, absent)


def _median_tokens(core: Any, c: Any, name: str) -> Computed:
    kind = c.options["kind"]
    return _figure(core, c, name, None, lambda r: r.median_tokens(c.model, c.benchmark, kind, per=c.options["per"]),
                   f"{c.model} has no trials on {c.benchmark}",
                   f"no trial of {c.model} on {c.benchmark} reports {kind} tokens")


def _edge_median_ratio(core: Any, c: Any, name: str) -> Computed:
    src, tgt = core.edge_of(c, name)
    kind = c.options["kind"]
    return _figure(core, c, name, (src, tgt), lambda r: r.edge_median_ratio(f"{src}:{tgt}", c.benchmark, kind),
                   f"{src} -> {tgt} has no cell for {c.benchmark or 'all benchmarks pooled'}",
                   f"no item of {src} -> {tgt} has {kind} tokens on both sides (and a source above 0)")


KIND = Field("kind", one_of(KINDS), required=True, doc="prompt, completion, reasoning or total")
#: The family's rows (the table, :mod:`replicate.verify.metrics`, imports them).
METRICS = (
    Metric("costs.median_tokens", "trials", ("model",), "number",
           "median tokens of `kind` per trial (or per item: the mean over its trials) of a model on a benchmark",
           fields=(KIND, Field("per", one_of(PER), "trial", doc="trial (default) or item")),
           compute=_median_tokens),
    Metric("costs.edge_median_ratio", "trials", ("cell",), "number",
           "median over the edge's items of target / source tokens of `kind` (per item: mean over its trials)",
           fields=(KIND,), compute=_edge_median_ratio),
)
