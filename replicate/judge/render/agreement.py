"""Text and markdown of agreement reports: a table of pairs x figures, then their intervals (pure)."""

from __future__ import annotations

from replicate.judge.agreement import AgreementReport, AgreementRow
from replicate.judge.render.errors import how_resampled
from replicate.output import Format, FormatArg, num, prose, table, table_blocks

#: Short column headers of the figures (JSON keeps the full names).
HEADERS = {
    "cohen_kappa": "kappa",
    "cohen_kappa_linear": "kappa lin",
    "cohen_kappa_quadratic": "kappa quad",
    "scott_pi": "pi",
    "krippendorff_alpha_nominal": "alpha nom",
    "krippendorff_alpha_ordinal": "alpha ord",
    "krippendorff_alpha_interval": "alpha int",
    "krippendorff_alpha_ratio": "alpha ratio",
    "kendall_tau": "tau-b",
    "spearman": "rho",
}

POLICY_WORDS = {
    "intersect": "intersect (an item unparsed on either side leaves the pair)",
    "wrong": "wrong (the nominal figures keep an unparsed output as a label that matches no other; "
    "the figures that need a scale use the items parsed on both sides)",
}


def _reading(row: AgreementRow) -> str:
    return "as read" if row.binarize is None else f">= {row.binarize}"


def _key(row: AgreementRow) -> str:
    return f"{row.left} vs {row.right}, {_reading(row)}"


def _interval(row: AgreementRow, column: str) -> str:
    iv = None if row.intervals is None else row.intervals.get(column)
    if iv is None or iv.low is None or iv.high is None or row.values[column] is None:
        return "-"
    return f"[{num(iv.low)}, {num(iv.high)}]"


def _grid(keys: list[str], columns: list[tuple[str, list[str]]], fmt: Format) -> str:
    if fmt is Format.markdown:
        rows = [[k, *(vals[i] for _, vals in columns)] for i, k in enumerate(keys)]
        return table(rows, ["pair, labels", *(h for h, _ in columns)], fmt)
    return table_blocks("pair, labels", keys, columns)


def agreement_text(report: AgreementReport, fmt: FormatArg) -> str:
    """The report as text or markdown: settings, the figures, their intervals, flags."""
    fmt = Format(fmt)
    rows = list(report.rows)
    head = "Agreement"
    meta = [
        f"parser: {' + '.join(report.parsers)}; reader: {' + '.join(report.readers)}",
        f"unparsed policy: {POLICY_WORDS[report.policy]}",
        f"value domain: {', '.join(map(str, report.domain))}"
        + (f"; binarized at {', '.join(map(str, report.thresholds))} (label >= t is 1)" if report.thresholds else ""),
    ]
    meta.append("unparsed outputs: " + ", ".join(f"{r['name']} {r['unparsed']} of {r['items']}" for r in report.runs))
    first = next((iv for r in rows if r.intervals for iv in r.intervals.values()), None)
    if first is not None:
        meta.append(f"intervals: {how_resampled(first)}")
    if fmt is Format.markdown:
        out = [f"## {head}", "", *(f"- {m}" for m in meta), ""]
    else:
        out = [head, "=" * len(head), prose("\n".join(meta), fmt), ""]
    out += agreement_tables(rows, report.columns, fmt)
    return "\n".join(out)


def agreement_tables(rows: list[AgreementRow], columns: tuple[str, ...] | list[str], fmt: Format) -> list[str]:
    """The figures of each row, their intervals (when resampled) and the rows' flags, as blocks of text."""
    keys = [_key(r) for r in rows]
    values = [("n", [str(r.parsed) for r in rows])]
    values += [(HEADERS[c], [num(r.values[c]) for r in rows]) for c in columns]
    out = [_grid(keys, values, fmt)]
    first = next((iv for r in rows if r.intervals for iv in r.intervals.values()), None)
    if first is not None:
        level = f"{100 * first.confidence_level:g}%"
        out.append(f"{level} intervals" + (":" if fmt is Format.table else "") + "\n")
        out.append(_grid(keys, [(HEADERS[c], [_interval(r, c) for r in rows]) for c in columns], fmt))
    notes = [f"Warning: {r.small}" for r in rows if r.small and r.binarize is None]
    absent = {why for r in rows for why in r.absent.values()}
    notes += [f"'-' in ordered figures: {why}" for why in sorted(absent)]
    if notes:
        out.append(prose("\n".join(notes) + "\n", fmt))
    return out


def edge_agreement_text(rows: tuple[AgreementRow, ...], fmt: FormatArg) -> str:
    """compare's agreement section: old and new against gold and each other (see 'replicate agreement')."""
    fmt = Format(fmt)
    head = "Agreement (kappa, pi, alpha, tau-b, rho; 'replicate agreement' binarizes and explains)"
    title = f"\n### {head}\n" if fmt is Format.markdown else f"\n{head}\n{'-' * len(head)}\n"
    columns = [c for c in HEADERS]
    return "\n".join([title, *agreement_tables(list(rows), columns, fmt)])
