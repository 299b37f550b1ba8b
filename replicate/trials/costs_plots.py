"""Optional figures of ``replicate costs --plots DIR`` (matplotlib, the ``plots`` extra, imported lazily).

Drawn as the verification note's figures are (PNG and SVG, no timestamps):

- ``costs-ecdf-<kind>``: per model (and benchmark), the ECDF of tokens per item
  (the item's mean over its trials that report usage);
- ``costs-edge-<n>-<kind>``: per edge cell, source against target tokens per
  item, one point per item coloured by its class (improved, regressed,
  equivalent, inconclusive), with the diagonal "costs the same".

``kind`` is ``total`` (and ``cost`` with prices). Without matplotlib nothing is
drawn and the reason is returned.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replicate.outfile import Outputs
from replicate.stats.classify import CLASSES
from replicate.trials.costs_result import CostsResult
from replicate.trials.plotfiles import NO_MATPLOTLIB, figure_maker, save_figure

PLOT_KINDS = ("total", "cost")
_CLASS_COLOURS = {"improved": "#2e86ab", "regressed": "#d1495b", "equivalent": "#4c956c", "inconclusive": "#9e9e9e"}


def _ecdf(fig, result: CostsResult, kind: str) -> None:
    ax = fig.add_subplot(1, 1, 1)
    for m in result.models:
        v = m.item_values.get(kind)
        if v is None:
            continue
        v = np.sort(v[~np.isnan(v)])
        if v.size:
            label = m.model if m.benchmark is None else f"{m.model} ({m.benchmark})"
            ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", label=label)
    ax.set_xlabel(f"{kind} per item" + (" (money)" if kind == "cost" else " (tokens, mean over its trials)"))
    ax.set_ylabel("share of items at or below")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def _scatter(fig, edge, kind: str) -> None:
    ax = fig.add_subplot(1, 1, 1)
    s, t = edge.item_pairs[kind]
    ok = ~np.isnan(s) & ~np.isnan(t)
    for k, cls in enumerate(CLASSES):
        sel = ok & (edge.classes == k)
        if sel.any():
            ax.scatter(s[sel], t[sel], s=12, color=_CLASS_COLOURS[cls], label=f"{cls} ({int(sel.sum())})", zorder=3)
    top = float(max(np.nanmax(s[ok]), np.nanmax(t[ok]))) * 1.05 if ok.any() else 1.0
    ax.plot([0, top], [0, top], linestyle="--", color="grey", linewidth=1, label="costs the same (y = x)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    where = "" if edge.benchmark is None else f", {edge.benchmark}"
    ax.set_title(f"{edge.source} -> {edge.target}{where}", fontsize=9)
    ax.set_xlabel(f"{edge.source}: {kind} per item")
    ax.set_ylabel(f"{edge.target}: {kind} per item")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def plot_names(result: CostsResult) -> list[str]:
    """The stems of the figures :func:`draw_cost_plots` draws, in order."""
    kinds = [k for k in PLOT_KINDS if k in result.kinds]
    return [s for kind in kinds for s in (f"costs-ecdf-{kind}", *(f"costs-edge-{n}-{kind}"
                                                                  for n in range(1, len(result.edges) + 1)))]


def draw_cost_plots(result: CostsResult, out: str | Path, *, force: bool = False) -> tuple[list[str], str | None]:
    """Draw the figures into directory ``out`` (created if needed): the files written, or why none were.

    A figure file there is replaced only when it is an earlier 'replicate costs --plots' output or with
    ``force`` (every name is checked before the first is written); a folder that cannot be made is
    :class:`~replicate.errors.UsageError`.
    """
    outputs = Outputs("costs", "plots", force=force)
    out = Path(out)
    outputs.check_folder(out, [f"{stem}{ext}" for stem in plot_names(result) for ext in (".png", ".svg")])
    if not result.usage_reported:
        return [], "no usage reported: nothing to plot"
    Figure = figure_maker(out)
    if Figure is None:
        return [], NO_MATPLOTLIB
    files: list[str] = []
    for kind in (k for k in PLOT_KINDS if k in result.kinds):
        fig = Figure(figsize=(7, 4.5))
        _ecdf(fig, result, kind)
        files += save_figure(fig, out, f"costs-ecdf-{kind}", outputs)
        for n, edge in enumerate(result.edges, 1):
            fig = Figure(figsize=(5.5, 5))
            _scatter(fig, edge, kind)
            files += save_figure(fig, out, f"costs-edge-{n}-{kind}", outputs)
    return files, None
