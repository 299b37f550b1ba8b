"""Text, markdown and JSON of ``replicate items --reading both`` (pure): the two readings side by side."""

from __future__ import annotations

from replicate.output import Format, FormatArg, pct, prose, table
from replicate.trials.readings import ReadingsResult
from replicate.trials.render import CLASS_HEADERS, LEGEND, class_row, input_lines


def render_readings(result: ReadingsResult, fmt: FormatArg) -> str:
    """The two readings' item classes one above the other per cell, the items that change class, the accuracies."""
    fmt = Format(fmt)
    md = fmt is Format.markdown
    s, lo = result.strict, result.loose
    null = f"; in brackets the 95th percentile of {s.n_null} permutation replications" if s.n_null else ""
    rows = []
    for cs, cl in zip(s.cells, lo.cells):
        for reading, c in (("strict", cs), ("loose", cl)):
            r = class_row(c)
            rows.append([*r[:2], reading, *r[2:]])
    headers = [*CLASS_HEADERS[:2], "reading", *CLASS_HEADERS[2:]]
    out = [_heading(f"Item classes under the strict and the loose reading (eps {s.eps}, BH q <= {s.alpha}, "
                    f"{s.ci} 95% interval{null}, seed {s.seed})", md), table(rows, headers, fmt)]
    out.append(prose(
        "Each reading classified by the same rules and seeds: strict reads the category, loose reads "
        "correct_loose (a trial without one is left out of the loose figures). " + LEGEND, fmt))
    mrows = []
    for m in result.moves:
        moved = sorted(((n, a, b) for (a, b), n in m.moves.items() if a != b), key=lambda x: (-x[0], x[1], x[2]))
        mrows.append([f"{m.source} -> {m.target}", "(all)" if m.benchmark is None else m.benchmark, m.n_items,
                      m.changed, pct(m.changed / m.n_items if m.n_items else None, 1),
                      ", ".join(f"{a} -> {b}: {n}" for n, a, b in moved) or "-"])
    out += ["", _heading("Items whose class differs between the readings (strict class -> loose class)", md),
            table(mrows, ["edge", "benchmark", "items", "changed", "share", "moves"], fmt)]
    acc = {(a.model, a.benchmark): a for a in lo.accuracy}
    arows = []
    for a in s.accuracy:
        b = acc.get((a.model, a.benchmark))
        arows.append([a.model, a.benchmark, pct(a.accuracy, 1), _ci(a),
                      "-" if b is None else b.n_items, "-" if b is None else pct(b.accuracy, 1),
                      "-" if b is None else _ci(b)])
    out += ["", _heading("Accuracy per model and benchmark under each reading (95% normal interval over items)", md),
            table(arows, ["model", "benchmark", "strict", "95% CI", "loose items", "loose", "95% CI"], fmt)]
    out.append(input_lines(s.provenance, fmt).rstrip("\n"))
    n_warn = s.diagnostics.get("count", 0)  # strict is analysed last: its count holds both readings' warnings
    if n_warn:
        out.append(f"\n{n_warn} warning(s) about the input (not the cells above); see --format json for details.")
    return "\n".join(out)


def _heading(title: str, md: bool) -> str:
    return f"## {title}\n" if md else f"{title}\n"


def _ci(a) -> str:
    return "-" if a.ci_low is None else f"[{pct(a.ci_low, 1)}, {pct(a.ci_high, 1)}]"
