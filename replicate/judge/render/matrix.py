"""Text and markdown rendering of all-pairs matrices (pure). JSON is ``Matrix.to_json()``."""

from __future__ import annotations

import math

import numpy as np

from replicate.judge.matrix import FIGURES, Matrix
from replicate.judge.render import heading
from replicate.output import Format, FormatArg, num, pct, table

TITLES = {
    "regression_rate": "regression rate (only_old / n)",
    "regression_share_of_old_correct": "regression share of old-correct (only_old / (both + only_old))",
    "independence_ratio": "independence ratio (regression / EM_old x (1 - EM_new))",
    "label_agreement": "label agreement (labels equal / n)",
}


def _cell(figure: str, value: float) -> str:
    if math.isnan(value):
        return "-"
    return num(value, 2) if figure == "independence_ratio" else pct(value, 1)


def figure_table(m: Matrix, figure: str, fmt: FormatArg) -> str:
    """One figure as a matrix: rows = old, columns = new; the diagonal is left blank."""
    fmt = Format(fmt)
    if figure not in m.figures:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}; got {figure!r}")
    values = m.figures[figure]
    names = m.names
    rows = [
        [f"{old}"] + ["·" if i == j else _cell(figure, float(values[i, j])) for j in range(len(names))]
        for i, old in enumerate(names)
    ]
    return table(rows, ["old \\ new", *names], fmt)


def baselines_table(m: Matrix, fmt: FormatArg) -> str:
    rows = [
        [b.name, b.items, b.dropped, b.unparsed, b.n, pct(b.em, 1), b.n_scored, num(b.mae), num(b.pearson_r)]
        for b in m.baselines
    ]
    return table(rows, ["run", "items", "not shared", "unparsed", "n (EM)", "EM", "n (MAE, r)", "MAE", "Pearson r"], Format(fmt))


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
        + "; MAE and Pearson r are over parsed items.\n"
    )
    for fig in FIGURES:
        out.append(heading(TITLES[fig] + "; rows = old, columns = new", fmt, 3))
        out.append(figure_table(m, fig, fmt))
    if m.errors is not None and m.settings is not None:
        out.extend(interval_sections(m, fmt))
    out.append(heading(f"Sanity flags ({len(m.flags)})", fmt, 3))
    out.append("\n".join(f"- {f}" for f in m.flags) + "\n" if m.flags else "none\n")
    return "\n".join(out)


INTERVAL_FIGURES = ("regression_rate", "independence_ratio")


def interval_table(m: Matrix, figure: str, fmt: Format) -> str:
    """A figure's bootstrap interval for every ordered pair, ``low-high``."""
    lo, hi = m.error_matrix(figure, "low"), m.error_matrix(figure, "high")
    names = m.names

    def cell(i: int, j: int) -> str:
        if i == j:
            return "·"
        a, b = float(lo[i, j]), float(hi[i, j])
        if math.isnan(a) or math.isnan(b):
            return "-"
        if figure == "independence_ratio":
            return f"{a:.2f}-{b:.2f}"
        return f"{100 * a:.1f}-{100 * b:.1f}%"

    rows = [[old, *(cell(i, j) for j in range(len(names)))] for i, old in enumerate(names)]
    return table(rows, ["old \\ new", *names], fmt)


def interval_sections(m: Matrix, fmt: Format) -> list[str]:
    """The bootstrap intervals of the regression rate and the independence ratio, and the difficulty-aware ratio."""
    assert m.errors is not None and m.settings is not None
    err = m.errors[0]
    by = f"{err.clusters} {err.cluster} clusters resampled whole" if err.cluster else f"{err.clusters} items resampled one by one"
    level = f"{100 * m.settings.confidence_level:g}%"
    out = []
    for fig in INTERVAL_FIGURES:
        out.append(heading(f"{TITLES[fig]}: {level} bootstrap interval ({by})", fmt, 3))
        out.append(interval_table(m, fig, fmt))
    ratio = m.difficulty_matrix()
    out.append(heading("regression / rate expected from errors independent given item difficulty", fmt, 3))
    if np.isnan(ratio).all():
        out.append("not available: it needs at least two runs besides each pair's own (4+ runs)\n")
    else:
        names = m.names
        rows = [
            [old, *("·" if i == j else _cell("independence_ratio", float(ratio[i, j])) for j in range(len(names)))]
            for i, old in enumerate(names)
        ]
        out.append(table(rows, ["old \\ new", *names], fmt))
        out.append(
            f"Item difficulty is estimated from the other {err.difficulty_other_runs} runs (leave-pair-out). "
            "Near 1: as many regressions as errors independent given the item would give; the classic ratio "
            "above assumes every item equally hard and so reads below 1 for unrelated judges.\n"
        )
    out.append(
        f"Intervals: {m.settings.replicates} replicates, seed {m.settings.seed}, percentile method; "
        "every figure's interval is in the JSON output.\n"
    )
    return out
