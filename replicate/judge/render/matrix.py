"""Text and markdown rendering of all-pairs matrices (pure). JSON is ``Matrix.to_json()``."""

from __future__ import annotations

import math

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
    out.append(heading(f"Sanity flags ({len(m.flags)})", fmt, 3))
    out.append("\n".join(f"- {f}" for f in m.flags) + "\n" if m.flags else "none\n")
    return "\n".join(out)
