"""Figures of upgrade edges (matplotlib, drawn onto a figure the caller makes and writes; pure drawing).

- :func:`draw_regression`: each edge's observed regression rate against the rate expected if the two
  versions' errors were unrelated, one marker per group (a parser). The diagonal is "unrelated judges";
  points far below it are a new version that repeats its predecessor's mistakes.
- :func:`draw_cells`: the four cells of each edge as shares of its shared items.

The verification note draws them beside itself (:mod:`replicate.verify.plots`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from replicate.stats.fourcell import FourCell

_COLOURS = {"both": "#4c956c", "only_old": "#d1495b", "only_new": "#2e86ab", "neither": "#9e9e9e"}


def draw_regression(fig, points: Mapping[str, Sequence[tuple[str, float, float]]]) -> None:
    """Per group, each edge (its label) at its independent-errors rate (x) and observed regression rate (y), in
    percent, with the diagonal."""
    ax = fig.add_subplot(1, 1, 1)
    xs, ys = [], []
    markers = "osD^v<>"
    for k, (group, edges) in enumerate(points.items()):
        x, y = [xi for _, xi, _ in edges], [yi for _, _, yi in edges]
        ax.scatter(x, y, marker=markers[k % len(markers)], label=group, zorder=3)
        for label, xi, yi in edges:
            ax.annotate(label, (xi, yi), fontsize=7, xytext=(4, 4), textcoords="offset points")
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


def draw_cells(fig, edges: Sequence[tuple[str, FourCell]]) -> None:
    """Each edge (its label) as one bar of its four cells, in percent of its shared items."""
    ax = fig.add_subplot(1, 1, 1)
    left = [0.0] * len(edges)
    for cell, colour in _COLOURS.items():
        widths = [100 * getattr(c, cell) / c.n if c.n else 0 for _, c in edges]
        ax.barh(range(len(edges)), widths, left=left, color=colour, label=cell)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(edges)), [label for label, _ in edges], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of shared items")
    ax.legend(ncol=4, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
