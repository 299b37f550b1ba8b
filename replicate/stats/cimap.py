"""One map of every interval of every figure, by method, with the default named (pure).

The JSON of an edge (``compare``, ``chain``, the pairs of ``matrix``, ``verify``'s
edges) and of a table of counts (``cells``) gives each figure's intervals as

.. code-block:: json

    "ci": {"regression_rate": {"default": "cluster-bootstrap-t-percentile",
                               "cluster-bootstrap-t-percentile": {"low": 0.09, "high": 0.19, ...},
                               "wilson-score": {"low": 0.11, "high": 0.18, ...}}}

Each entry under a method's name is :meth:`Interval.to_json` (bounds, level,
clusters, replicates, seed, what it assumes, why it is null). ``default`` names
the interval every reading and verdict of the tool uses, and the one text and
markdown show:

- with bootstrap intervals (the default settings), the bootstrap's: the
  cluster bootstrap with stretched arms (:data:`~replicate.stats.few_clusters.T_METHOD`)
  when items are clustered, the item bootstrap without a cluster key; a
  proportion's bootstrap interval is never narrower than its Wilson interval
  (:func:`~replicate.stats.few_clusters.at_least`), so the default is the wider;
- without (``--replicates 0``, ``uncertainty=None``), the Wilson score
  interval of each proportion, which assumes independent items; the other
  figures then have no interval and no entry.

The Wilson interval of a proportion is also listed when it is not the
default: the item-level interval, what the figure would carry were the items
independent (under clustering it runs narrow).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from replicate.stats.bootstrap import INDEPENDENT_ITEMS, Interval
from replicate.stats.few_clusters import WILSON
from replicate.stats.fourcell import FIGURES, Cells, FourCell, proportions
from replicate.stats.intervals import wilson, z_value

#: The key of the default method in each figure's entry.
DEFAULT_KEY = "default"


def wilson_intervals(cells: FourCell, confidence_level: float = 0.95) -> dict[str, Interval]:
    """The Wilson score interval of each proportion of the four cells (null bounds when its denominator is 0)."""
    return wilson_interval_maps(cells.arrays(), confidence_level)[0]


def wilson_interval_maps(cells: Cells, confidence_level: float = 0.95) -> list[dict[str, Interval]]:
    """:func:`wilson_intervals` of many tables at once (``cells`` holds 1-D integer arrays, one entry a table):
    one Wilson computation per proportion over every table, the same bounds as table by table."""
    n_all = (np.asarray(cells.both) + cells.only_old + cells.only_new + cells.neither).tolist()
    z = z_value(confidence_level)
    columns: dict[str, list[tuple[float | None, float | None]]] = {}
    for fig in proportions():
        k, n = (np.asarray(a, dtype=np.int64) for a in FIGURES[fig].ratio(cells))
        defined = n > 0
        lo, hi = wilson(k[defined], n[defined], z)
        bounds = iter(zip(lo.tolist(), hi.tolist()))
        columns[fig] = [next(bounds) if ok else (None, None) for ok in defined.tolist()]
    return [
        {fig: Interval(*col[t], WILSON, None, None, n, confidence_level, None, 0, INDEPENDENT_ITEMS)
         for fig, col in columns.items()}
        for t, n in enumerate(n_all)
    ]


def ci_map(default: Mapping[str, Interval], *others: Mapping[str, Interval]) -> dict[str, dict]:
    """figure -> ``{"default": method, method: interval, ...}``: ``default``'s interval of each figure, then
    those of ``others`` under their own method names (a method already listed for a figure is not repeated)."""
    out: dict[str, dict] = {}
    for group in (default, *others):
        for figure, iv in group.items():
            entry = out.setdefault(figure, {DEFAULT_KEY: iv.method})
            entry.setdefault(iv.method, iv.to_json())
    return out


def edge_ci(
    cells: FourCell, bootstrap: Mapping[str, Interval] | None, confidence_level: float = 0.95,
    wilson: Mapping[str, Interval] | None = None,
) -> dict[str, dict]:
    """The ``ci`` map of an edge: its bootstrap intervals as the default when it has them, else Wilson's
    (``wilson``: the edge's Wilson intervals when already computed, :func:`wilson_interval_maps`)."""
    if wilson is None:
        wilson = wilson_intervals(cells, confidence_level)
    return ci_map(wilson) if bootstrap is None else ci_map(bootstrap, wilson)


def default_interval(ci: Mapping[str, Mapping], figure: str) -> dict | None:
    """The default interval (JSON) of ``figure`` in a ``ci`` map; None when the figure has none."""
    entry = ci.get(figure)
    return None if entry is None else entry[entry[DEFAULT_KEY]]
