"""Optional figures beside the note (matplotlib, the ``plots`` extra, imported lazily).

Two figures, each written as PNG and SVG next to the note:

- ``<note>-regression``: observed regression rate against the rate expected if
  the two versions' errors were unrelated, one point per edge and parser. The
  diagonal is "unrelated judges"; points far below it are a new version that
  repeats its predecessor's mistakes.
- ``<note>-cells``: the four cells of each edge as shares of its shared items.

Without matplotlib the note says how to get them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from replicate.outfile import Outputs
from replicate.stats.fourcell import INDEPENDENT_REGRESSION_RATE, REGRESSION_RATE
from replicate.trials.plotfiles import PLOTS_HINT
from replicate.verify.note import Figures
from replicate.verify.recompute import EdgeFigures
from replicate.verify.verification import Verification

NO_MATPLOTLIB = (
    f"Figures were not drawn: matplotlib is not installed. Install the plots extra (`{PLOTS_HINT}`) "
    "and write the note again with `--out` to get them beside it."
)
NOT_ASKED = "Figures were not drawn (`--no-plots`). Write the note without `--no-plots` to get them."
NO_EDGES = "No claim names an edge, so there is nothing to plot."

_COLOURS = {"both": "#4c956c", "only_old": "#d1495b", "only_new": "#2e86ab", "neither": "#9e9e9e"}


def figure_paths(out: str | Path, *, judge: bool = True, trials: bool = False) -> list[Path]:
    """The figure files beside the note ``out``: its stem with ``-regression`` and ``-cells`` (judge edges) and
    ``-items-shares`` (trial cells), PNG and SVG."""
    stem = Path(out).with_suffix("")
    suffixes = (("regression", "cells") if judge else ()) + (("items-shares",) if trials else ())
    return [Path(f"{stem}-{suffix}.{ext}") for suffix in suffixes for ext in ("png", "svg")]


def figures_for(v: Verification, out: str | Path, *, draw: bool = True, outputs: Outputs | None = None) -> Figures:
    """Draw the figures beside ``out`` (the note's path) or say why they were not drawn.

    Written through ``outputs`` (default: 'replicate verify''s, without force): an existing figure file is
    replaced only when it is that command's earlier output; every name is checked before any is drawn.
    The judge edges give two figures; the trial cells the claims name give the K-trial figure of
    ``replicate items --plots`` (P+ and P- beside delta).
    """
    if not draw:
        return Figures(reason=NOT_ASKED)
    trials = v.part("trials")
    trial_cells = trials.cells if trials is not None else ()
    judge = bool(v.runs is not None and v.runs.edges)
    if not judge and not trial_cells:
        return Figures(reason=NO_EDGES)
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return Figures(reason=NO_MATPLOTLIB)
    outputs = outputs if outputs is not None else Outputs("verify", "out")
    paths = figure_paths(out, judge=judge, trials=bool(trial_cells))
    outputs.check(*paths)
    drawn: list[tuple[str, Callable[[Any, Verification], None], tuple[float, float]]] = []
    if judge:
        drawn += [("Regression rate against the independent-errors rate, per edge", _regression, (7.0, 4.8)),
                  ("Four cells per edge, as shares of shared items", _cells, (8.0, 0.6 * len(v.runs.edges) + 1.8))]
    if trial_cells:
        from replicate.trials.items_plots import draw_shares

        drawn.append(("Items reliably improved (P+) and regressed (P-) beside the mean change, per edge and benchmark",
                      lambda fig, _v: draw_shares(fig, trial_cells), (max(6.0, 1.2 * len(trial_cells) + 2), 4.5)))
    files = []
    for k, (title, draw_fn, size) in enumerate(drawn):
        png, svg = paths[2 * k], paths[2 * k + 1]
        fig = Figure(figsize=size)
        draw_fn(fig, v)
        fig.tight_layout()
        outputs.write_figure(fig, png, svg)
        files.append((title, png.name, svg.name))
    return Figures(files=tuple(files))


def regression_points(v: Verification) -> dict[str, list[tuple[EdgeFigures, float, float]]]:
    """Per parser, each edge with its independent-errors and observed regression rates in percent.

    An edge with no comparable pair (n = 0) has neither rate and is left out rather than drawn at 0.
    """
    points: dict[str, list[tuple[EdgeFigures, float, float]]] = {}
    for e in v.runs.edges:
        x, y = e.value(INDEPENDENT_REGRESSION_RATE.name), e.value(REGRESSION_RATE.name)
        row = points.setdefault(e.parser, [])
        if x is not None and y is not None:
            row.append((e, 100 * float(x), 100 * float(y)))
    return points


def _regression(fig, v: Verification) -> None:
    ax = fig.add_subplot(1, 1, 1)
    xs, ys = [], []
    markers = "osD^v<>"
    for k, (parser, points) in enumerate(regression_points(v).items()):
        edges = [e for e, _, _ in points]
        x = [xi for _, xi, _ in points]
        y = [yi for _, _, yi in points]
        ax.scatter(x, y, marker=markers[k % len(markers)], label=parser, zorder=3)
        for e, xi, yi in zip(edges, x, y):
            ax.annotate(f"{e.old} -> {e.new}", (xi, yi), fontsize=7, xytext=(4, 4), textcoords="offset points")
        xs += x
        ys += y
    top = max(xs + ys + [1.0]) * 1.1
    ax.plot([0, top], [0, top], linestyle="--", color="grey", linewidth=1, label="unrelated judges (y = x)")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("independent-errors rate, EM_old x (1 - EM_new) (% of pairs)")
    ax.set_ylabel("observed regression rate (% of pairs)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def _cells(fig, v: Verification) -> None:
    ax = fig.add_subplot(1, 1, 1)
    labels = [f"{e.old} -> {e.new}\n{e.parser}" for e in v.runs.edges]
    left = [0.0] * len(v.runs.edges)
    for cell, colour in _COLOURS.items():
        widths = [100 * getattr(e.cells, cell) / e.cells.n if e.cells.n else 0 for e in v.runs.edges]
        ax.barh(range(len(v.runs.edges)), widths, left=left, color=colour, label=cell)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(v.runs.edges)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of shared items")
    ax.legend(ncol=4, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
