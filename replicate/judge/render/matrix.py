"""Text and markdown rendering of all-pairs matrices (pure). JSON is ``Matrix.to_json()``."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from replicate.judge.matrix import Matrix
from replicate.judge.render import heading, names_legend, short_names
from replicate.judge.render.errors import (
    difficulty_table,
    edge_interval_table,
    how_resampled,
    mcnemar_table,
    with_interval,
)
from replicate.judge.render.figures import figure_text
from replicate.output import Format, FormatArg, num, pct, table
from replicate.stats.fourcell import FIGURES, figure_names


def title(figure: str) -> str:
    """A matrix's heading: the figure's label and its definition."""
    f = FIGURES[figure]
    return f"{f.label} ({f.definition})"


def _cell(figure: str, value: float) -> str:
    return "-" if math.isnan(value) else figure_text(figure, value)


def _square(m: Matrix, cell: Callable[[int, int], str], fmt: Format) -> str:
    """An n x n table: rows = old (numbered and named), columns = new by number (the baselines' ``#``)."""
    names = m.names
    short = short_names(names)
    rows = [[f"{i + 1} {short[old]}", *("·" if i == j else cell(i, j) for j in range(len(names)))] for i, old in enumerate(names)]
    return table(rows, ["old \\ new", *(str(j + 1) for j in range(len(names)))], fmt)


def figure_table(m: Matrix, figure: str, fmt: FormatArg) -> str:
    """One figure as a matrix: rows = old, columns = new (by run number); the diagonal is left blank."""
    if figure not in m.figures:
        raise ValueError(f"figure must be one of {', '.join(m.figures)}; got {figure!r}")
    values = m.figures[figure]
    return _square(m, lambda i, j: _cell(figure, float(values[i, j])), Format(fmt))


def baselines_table(m: Matrix, fmt: FormatArg) -> str:
    """One row per run, numbered: the numbers head the matrices' columns."""
    short = short_names(m.names)
    rows = [
        [k, short[b.name], b.items, b.dropped, b.unparsed, b.n,
         with_interval(pct(b.em, 1), None if b.interval is None else b.interval["em"], "em"),
         b.n_scored, num(b.mae), num(b.pearson_r)]
        for k, b in enumerate(m.baselines, 1)
    ]
    headers = ["#", "run", "items", "not shared", "unparsed", "n (EM)", "EM", "n (MAE, r)", "MAE", "Pearson r"]
    return table(rows, headers, Format(fmt), keep=2)


def matrix_text(m: Matrix, fmt: FormatArg) -> str:
    """Baselines, one matrix per figure, then the sanity flags."""
    fmt = Format(fmt)
    head = f"All pairs of {len(m.names)} runs ({len(m.names) * (len(m.names) - 1)} ordered pairs)"
    out = [heading(head, fmt)]
    out.append(
        f"parser: {m.parser}; unparsed policy: {m.unparsed_policy}; items shared by all runs: {m.aligned.n_items}; "
        f"label scale {m.scale[0]}-{m.scale[1]}\n"
    )
    out.append(heading("Baselines against gold", fmt, 3))
    out.append(baselines_table(m, fmt))
    out.append(
        "EM is over "
        + ("parsed items" if m.unparsed_policy == "intersect" else "all shared items (unparsed = wrong)")
        + "; MAE and Pearson r are over parsed items. Matrices below name the runs by number (#).\n"
    )
    legend = names_legend(short_names(m.names))
    if legend:
        out.append(legend + "\n")
    for fig in figure_names("matrix"):
        out.append(heading(title(fig) + "; rows = old, columns = new", fmt, 3))
        out.append(figure_table(m, fig, fmt))
    if m.errors is not None and m.settings is not None:
        out.extend(interval_sections(m, fmt))
    out.append(heading(f"Sanity flags ({len(m.flags)})", fmt, 3))
    out.append("\n".join(f"- {f}" for f in m.flags) + "\n" if m.flags else "none\n")
    return "\n".join(out)


def interval_sections(m: Matrix, fmt: Format) -> list[str]:
    """Every pair's bootstrap intervals (one row per ordered pair; the clustered McNemar test alone without
    replicates), then the difficulty-aware ratio."""
    assert m.errors is not None and m.settings is not None
    err = m.errors[0]
    number = {name: str(k) for k, name in enumerate(m.names, 1)}
    who = lambda e: [number[e.old.name], number[e.new.name]]  # noqa: E731
    if err.resampled:
        out = [heading("Intervals of every pair (rows: old -> new, runs by number)", fmt, 3)]
        out.append(edge_interval_table(m.comparisons(), fmt, who=who))
    else:
        out = [heading("Clustered McNemar test of every pair (rows: old -> new, runs by number)", fmt, 3)]
        out.append(mcnemar_table(m.comparisons(), fmt, who=who))
    ratio = m.difficulty_matrix()
    out.append(heading("regression / rate expected from errors independent given item difficulty", fmt, 3))
    if np.isnan(ratio).all():
        out.append("not available: it needs at least two runs besides each pair's own (4+ runs)\n")
    else:
        out.append(_square(m, lambda i, j: "-" if math.isnan(ratio[i, j]) else num(float(ratio[i, j]), 2), fmt))
        out.append(
            f"The baseline fits a Rasch model given each item's total right over the pair and the other "
            f"{err.difficulty_other_runs} runs (no item's difficulty is estimated). "
            "Near 1: as many regressions as errors independent given the item would give; the classic ratio "
            "above assumes every item equally hard and so reads below 1 for unrelated judges.\n"
        )
        out.append(difficulty_table(m.comparisons(), fmt, who=who))
    if err.resampled:
        iv = next(iter(err.interval.values()))
        out.append(f"Intervals (pairs and each run's EM): {how_resampled(iv)}.\n")
    else:
        out.append("No bootstrap intervals were computed (--replicates 0).\n")
    return out
