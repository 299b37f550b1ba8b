"""Optional figures beside the note (matplotlib, the ``plots`` extra, imported lazily).

Each written as PNG and SVG next to the note: ``<note>-regression`` (observed
regression rate against the rate expected if the two versions' errors were
unrelated, one point per edge and parser) and ``<note>-cells`` (the four cells of
each edge as shares of its shared items), drawn by :mod:`replicate.judge.edge_plots`;
``<note>-items-shares``, the K-trial figure of ``replicate items --plots``.

Without matplotlib the note says how to get them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from replicate.judge.edge_plots import draw_cells, draw_regression
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
        points = {p: [(f"{e.old} -> {e.new}", x, y) for e, x, y in edges] for p, edges in regression_points(v).items()}
        cells = [(f"{e.old} -> {e.new}\n{e.parser}", e.cells) for e in v.runs.edges]
        drawn += [("Regression rate against the independent-errors rate, per edge",
                   lambda fig, _v: draw_regression(fig, points), (7.0, 4.8)),
                  ("Four cells per edge, as shares of shared items", lambda fig, _v: draw_cells(fig, cells),
                   (8.0, 0.6 * len(v.runs.edges) + 1.8))]
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
