"""Optional figure of ``replicate items --plots DIR`` (matplotlib, the ``plots`` extra, imported lazily).

``items-shares.png``/``.svg``: the study's Figure 1. Per edge and benchmark (one
group each), the share of items reliably improved (P+, drawn upwards) and
reliably regressed (P-, drawn downwards) beside the mean accuracy change Δ,
all in percent of the cell's items, each with its 95% interval (the shares'
Wilson intervals, Δ's paired normal interval, as the report prints them). A
mean near zero over large P+ and P- is churn the mean hides. Drawn as the
verification note's figures are (PNG and SVG, no timestamps); without
matplotlib nothing is drawn and the reason is returned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from replicate.outfile import Outputs
from replicate.trials.plotfiles import NO_MATPLOTLIB, figure_maker, save_figure
from replicate.trials.results import CellResult, ItemsResult

STEM = "items-shares"
_COLOURS = {"p_plus": "#2e86ab", "p_minus": "#d1495b", "delta": "#333333"}


def _pp(x: float | None) -> float:
    return 0.0 if x is None else 100 * float(x)


def _err(cell: CellResult, key: str, value: float, sign: float = 1.0) -> tuple[float, float]:
    """The interval of ``key`` as (below, above) distances from ``value`` in the drawn direction."""
    iv = (cell.intervals or {}).get(key)
    if iv is None or iv.low is None or iv.high is None:
        return 0.0, 0.0
    lo, hi = sorted((sign * 100 * iv.low, sign * 100 * iv.high))
    return max(0.0, value - lo), max(0.0, hi - value)


def draw_shares(fig, cells: Sequence[CellResult], title: str = "") -> None:
    """P+ up, P- down and Δ beside them, per cell, on one axis of ``fig``."""
    ax = fig.add_subplot(1, 1, 1)
    xs = list(range(len(cells)))
    width = 0.27
    for offset, key, sign, label in ((-width, "p_plus", 1.0, "improved P+ (% of items)"),
                                     (0.0, "p_minus", -1.0, "regressed P- (% of items, drawn down)")):
        values = [sign * _pp(getattr(c.shares, key)) for c in cells]
        errs = [_err(c, key, v, sign) for c, v in zip(cells, values)]
        ax.bar([x + offset for x in xs], values, width, color=_COLOURS[key], label=label,
               yerr=list(zip(*errs)) if errs else None, capsize=2, error_kw={"linewidth": 0.8})
    deltas = [_pp(c.delta) for c in cells]
    derr = [_err(c, "delta", d) for c, d in zip(cells, deltas)]
    ax.bar([x + width for x in xs], deltas, width, color="white", edgecolor=_COLOURS["delta"], hatch="//",
           label="delta: mean accuracy change (pp)", yerr=list(zip(*derr)) if derr else None, capsize=2,
           error_kw={"linewidth": 0.8})
    ax.axhline(0, color="black", linewidth=0.8)
    names = [f"{c.source} -> {c.target}" + ("" if c.benchmark is None else f"\n{c.benchmark}") for c in cells]
    ax.set_xticks(xs, names, fontsize=7)
    ax.set_ylabel("percent (error bars: 95% intervals)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)


def draw_items_plots(result: ItemsResult, out: str | Path, *, force: bool = False) -> tuple[list[str], str | None]:
    """Draw the figure into directory ``out`` (created if needed): the files written, or why none were.

    A figure file there is replaced only when it is an earlier 'replicate items --plots' output or with ``force``.
    """
    outputs = Outputs("items", "plots", force=force)
    out = Path(out)
    outputs.check_folder(out, [f"{STEM}.png", f"{STEM}.svg"])
    if not result.cells:
        return [], "no edge: nothing to plot (give --edge)"
    Figure = figure_maker(out)
    if Figure is None:
        return [], NO_MATPLOTLIB
    fig = Figure(figsize=(max(6.0, 1.2 * len(result.cells) + 2), 4.5))
    reading = "" if result.reading == "strict" else f", {result.reading} reading"
    draw_shares(fig, result.cells, f"Items reliably improved and regressed beside the mean change (eps {result.eps}{reading})")
    return save_figure(fig, out, STEM, outputs), None
