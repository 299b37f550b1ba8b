"""The runs part: claims over judge runs as the note draws them: the per-parser claims table, edges, floors and
runs (pure rendering)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any
from urllib.parse import quote

from replicate.judge.outofscale import departure_lines
from replicate.judge.render.errors import interval_cell, with_interval
from replicate.output import Format, md_code, md_text, one_line, pct, table, table_blocks
from replicate.stats.paired import p_display
from replicate.verify.alternatives import note_line
from replicate.verify.matching import Verdict
from replicate.verify.part import relative
from replicate.verify.recompute import EdgeFigures, FloorFigures, edge_key, floor_of
from replicate.verify.table_cells import figure_cell, not_computable, printed_text, reasons, show
from replicate.verify.verification import ClaimResult, RunsVerification


def _result_cell(r: ClaimResult, parser: str, notes: dict[str, int]) -> str:
    """The value under one parser column and its verdict (``28.050 match``, ``(not asked)``)."""
    if parser not in r.computed:
        return "(not asked)"
    o = r.outcome(parser)
    if o.verdict is Verdict.not_computable:
        return not_computable(o.why, notes)
    return f"{show(o.printed, o.computed.value)} {o.verdict}{' (tie)' if o.tie else ''}"


def claims_table(v: RunsVerification, fmt: Format, *, figure: bool = True) -> tuple[str, dict[str, int]]:
    """The claims table and the numbered reasons it refers to.

    ``figure=False`` leaves out the metric-and-runs column (the note lists each
    claim in words right below its table, which keeps the table narrow).
    """
    notes: dict[str, int] = {}
    plain = Format(fmt) is Format.table
    esc = one_line if plain else md_text  # user text: kept on its line, and inert in markdown
    headers = ["id", "where", *(["figure"] if figure else []), "printed", *v.parsers, "verdict"]
    rows = []
    for r in v.results:
        c = r.claim
        rows.append([
            esc(c.id), esc(c.where or "-"),
            *([figure_cell(c.metric, c.described(esc), plain)] if figure else []),
            str(printed_text(c.printed)), *[str(_result_cell(r, p, notes)) for p in v.parsers],
            f"{r.verdict(r.primary).value} ({r.primary})",  # type: ignore[union-attr]
        ])
    if not plain:
        return table(rows, headers, fmt), notes
    # Plain text: blocks that each fit a 100-column terminal, like `replicate chain`:
    # what is claimed, then the verdict and the recomputed value under each parser.
    columns = [(h, [row[i] for row in rows]) for i, h in enumerate(headers)][1:]
    verdict = columns.pop()
    at = len(headers) - 2 - len(v.parsers)  # the verdict goes right after "printed"
    columns.insert(at, verdict)
    return table_blocks(headers[0], [row[0] for row in rows], columns), notes


def claim_texts(v: RunsVerification, notes: dict[str, int]) -> list[str]:
    """Each claim in words, then the reasons the table refers to."""
    out = []
    for r in v.results:
        c = r.claim
        where = f" ({md_text(c.where)})" if c.where else ""
        extra = []
        if c.parser:
            extra.append(f"pins `{c.parser}`")
        if c.unparsed:
            extra.append(f"unparsed policy `{c.unparsed}`")
        if c.text:
            extra.append(f"as printed: \"{md_text(c.text)}\"")
        tail = f"; {'; '.join(extra)}" if extra else ""
        out.append(f"- {md_code(c.id)}{where}: `{c.metric}` of {c.described(md_text)}, printed {printed_text(c.printed)}, "
                   f"matches {c.printed.show_interval()}{tail}")
        if r.alternatives is not None and r.alternatives.found:  # which definition the printed number used
            out.append(f"  - {note_line(c, r.alternatives.found)} (the verdict stays mismatch)")
    if notes:
        out += ["", "Not computable:", ""]
        out += reasons(notes)
    return out


def _position(v: RunsVerification, e: EdgeFigures, fl: FloorFigures | None) -> str:
    """Below / inside / above the floor: what ``floor --edge`` says of the edge (its paired test with
    intervals), with the n of the edge and of the floor's smallest repeat pair."""
    check = v.against_floor.get(edge_key(e))
    if fl is None or check is None or check.verdict is None:
        return "-"
    if not fl.floor.pairs:
        return check.verdict
    # no verdict without its n: the edge's compared items, and the smallest repeat pair's
    return f"{check.verdict} (n = {check.comparison.cells.n}; floor n = {min(p.cells.n for p in fl.floor.pairs)})"


def _f(x: Fraction | float | None) -> float | None:
    return None if x is None else float(x)


def edges(v: RunsVerification) -> list[str]:
    """Two tables per edge and parser: the four cells, then the rates (one wide table reads badly as text)."""
    if not v.edges:
        return []
    cells_rows, rate_rows, error_rows, mcnemar_rows = [], [], [], []
    for e in v.edges:
        fl = floor_of(v.floors, e)
        lo, hi = (fl.value("floor.regression_min"), fl.value("floor.regression_max")) if fl else (None, None)
        ratio = e.value("independence_ratio")
        edge, parser = f"{md_text(e.old)} -> {md_text(e.new)}", f"`{e.parser}`"
        cells_rows.append([edge, parser, e.cells.n, e.cells.both, e.cells.only_old, e.cells.only_new, e.cells.neither])
        rate_rows.append([
            edge, parser, pct(_f(e.value("regression_rate"))),
            pct(_f(e.value("regression_share_of_old_correct"))), pct(_f(e.value("independent_regression_rate"))),
            "-" if ratio is None else f"{float(ratio):.3f}", pct(_f(e.value("backward_rate"))),
            pct(_f(e.value("change_rate"))),
            f"{pct(_f(lo))}-{pct(_f(hi))}" if fl else "-", _position(v, e, fl),
        ])
        if e.error is not None and not e.error.resampled:  # --replicates 0: the test that needs no replicates
            mcnemar_rows.append([edge, parser, e.cells.n, p_display(e.error.mcnemar_p), e.error.cluster or "item"])
        elif e.error is not None:
            iv = e.error.interval
            error_rows.append([
                edge, parser, e.cells.n, *(interval_cell(iv[f], f) for block in _ERROR_BLOCKS for _, f in block),
                p_display(e.error.mcnemar_p), e.error.cluster or "item",
            ])
    policies = sorted({e.policy for e in v.edges})
    cell_headers = ["edge", "parser", "N", "both", "only_old", "only_new", "neither"]
    rate_headers = ["edge", "parser", "regressed", "of old-correct", "independent", "ratio", "backward", "change",
                    "floor of new", "vs floor"]
    return [
        "## Edges", "",
        "Every edge a claim names, under each parser it was recomputed with "
        f"(unparsed policy: {', '.join(policies)}). N is the pairs compared: shared by both versions and, "
        "under intersect, parsed on both sides (so it can be fewer than the shared pairs); \"both\" were right "
        "under both, \"only_old\" only under the old version (a regression), \"only_new\" only under the new "
        "one, \"neither\" under none.",
        "", table(cells_rows, cell_headers, Format.markdown).rstrip("\n"), "",
        "\"regressed\" is only_old as a share of all N pairs, \"of old-correct\" as a share of the old "
        "version's correct labels (both + only_old). \"independent\" is the regression rate expected if the "
        "two versions' errors were unrelated and every item equally hard, and \"ratio\" is regressed / "
        "independent (items differ in difficulty, so unrelated judges already score below 1; a ratio below 1 "
        "alone does not show shared mistakes). \"floor of new\" is the "
        "regression range between repeats of the new version, where a claim names its repeats, and \"vs "
        "floor\" says where the edge lies against it, as `replicate floor --edge` does, with the n of the edge and of "
        "the floor's smallest repeat pair (bounds count as inside; with intervals, a paired test by query cluster "
        "of the edge's regression rate minus the repeat pairs' mean: \"above\" when its t interval lies above "
        "0, \"below\" under 0, else inside or \"indistinguishable\"; \"insufficient_data\" on too few items "
        "or clusters).",
        "", table(rate_rows, rate_headers, Format.markdown).rstrip("\n"), "",
    ] + _error_part(v, error_rows) + _mcnemar_part(mcnemar_rows)


def _mcnemar_part(rows: list[list[object]]) -> list[str]:
    """Without intervals (``--replicates 0``), each edge's clustered McNemar test and what it assumes."""
    if not rows:
        return []
    return [
        "No bootstrap intervals were computed (--replicates 0). McNemar's exact p treats every item as "
        "independent; the clustered test (Durkalski) does not. A large p is absence of evidence, not equal accuracy.",
        "", table(rows, ["edge", "parser", "N", "McNemar p (clustered)", "cluster"], Format.markdown).rstrip("\n"), "",
    ]


#: The note's interval tables, (header, figure): the accuracies first, then the regression figures.
_ERROR_BLOCKS = (
    (("EM old 95%", "em_old"), ("EM new 95%", "em_new"), ("EM old - new 95%", "accuracy_difference"),
     ("backward 95%", "backward_rate")),
    (("regressed 95%", "regression_rate"), ("of old-correct 95%", "regression_share_of_old_correct"),
     ("change 95%", "change_rate"), ("independent 95%", "independent_regression_rate"),
     ("ratio 95%", "independence_ratio")),
)


def _error_part(v: RunsVerification, rows: list[list[object]]) -> list[str]:
    """The bootstrap intervals of each edge (when computed) and what they assume: two tables, like the edges'."""
    if not rows:
        return []
    err = next(e for e in v.edges if e.error is not None and e.error.resampled)
    assert err.error is not None and err.settings is not None
    iv = err.error.interval["regression_rate"]
    first, second = _ERROR_BLOCKS
    k = 3 + len(first)
    accuracy = [r[:k] for r in rows]
    regression = [r[:3] + r[k:] for r in rows]
    return [
        f"Sampling error: {iv.method} intervals ({iv.replicates} replicates, seed {iv.seed}); items of one "
        "cluster are resampled together, since judged passages of one query are alike. McNemar's exact p "
        "treats every item as independent; the clustered test (Durkalski) does not. A large p is absence of "
        "evidence, not equal accuracy: read the interval of the EM difference.",
        "", table(accuracy, ["edge", "parser", "N", *(h for h, _ in first)], Format.markdown).rstrip("\n"), "",
        table(
            regression, ["edge", "parser", "N", *(h for h, _ in second), "McNemar p (clustered)", "cluster"],
            Format.markdown,
        ).rstrip("\n"), "",
    ]


def _ends(fl) -> str:
    """The intervals of the floor's range ends, which the widened range is read from."""
    ends = fl.range_interval
    return "" if ends is None else f" (min {interval_cell(ends['min'], 'min')}, max {interval_cell(ends['max'], 'max')})"


def floors(v: RunsVerification) -> list[str]:
    if not v.floors:
        return []
    rows = []
    with_error = any(f.floor.regression_span_with_error is not None for f in v.floors)
    for f in v.floors:
        bounds = f.floor.regression_span_with_error
        rows.append([
            ", ".join(map(md_text, f.runs)), f"`{f.parser}`", f.shared_items, len(f.pairs),
            f"{pct(_f(f.value('floor.regression_min')))}-{pct(_f(f.value('floor.regression_max')))}",
            *([] if not with_error else ["-" if bounds is None else f"{pct(bounds.low)}-{pct(bounds.high)}" + _ends(f.floor)]),
            f"{pct(_f(f.value('floor.change_min')))}-{pct(_f(f.value('floor.change_max')))}",
        ])
    headers = ["repeats", "parser", "shared items", "ordered pairs", "regression min-max",
               *(["regression 95% (with sampling error)"] if with_error else []), "change min-max"]
    explain = [] if not with_error else [
        "\"regression 95% (with sampling error)\" widens the floor's range by its own sampling error: from the "
        "interval low of the smallest repeat-pair regression rate to the interval high of the largest, each taken "
        "again in every bootstrap replicate (the floor command's older rule set an edge's interval against it; the "
        "verdict now comes from the paired test, which is calibrated: docs/concepts.md).", "",
    ]
    pair_rows = [
        [", ".join(map(md_text, f.runs)), f"`{f.parser}`", md_text(p.old), md_text(p.new),
         *(with_interval(pct(getattr(p, k)), p.interval[k], k) for k in ("regression_rate", "change_rate"))]
        for f in v.floors for p in f.floor.pairs if p.interval is not None
    ]
    pairs = [] if not pair_rows else [
        "Each ordered pair of repeats, with its 95% bootstrap intervals:", "",
        table(pair_rows, ["repeats", "parser", "old", "new", "regression", "change"], Format.markdown).rstrip("\n"), "",
    ]
    return ["## Rerun floors", "", "Churn between repeats of one model: what an upgrade must exceed "
            "before it says anything about the new version.", "",
            table(rows, headers, Format.markdown).rstrip("\n"), "", *explain, *pairs]


def runs(v: RunsVerification) -> list[str]:
    parsers = list(dict.fromkeys(f.parser for f in v.run_figures))  # the claims table's order
    by = {(f.name, f.parser): f for f in v.run_figures}
    rows = []
    failures = v.extraction_failures()  # the column only where a reader tells them apart
    for name, files in v.run_files.items():
        items = next((f.items for f in v.run_figures if f.name == name), sum(x.records for x in files))
        cells = []
        for p in parsers:
            f = by.get((name, p))
            cells.append("-" if f is None else f"{f.unparsed} ({pct(_f(f.unparsed_rate))})")
        rewritten = sum(x.rewritten for x in files)
        reader = " + ".join(dict.fromkeys(f"`{x.reader}`" for x in files))
        failed = [] if not failures else ["-" if failures[name] is None else failures[name]]
        rows.append([md_text(name), len(files), reader, items, *cells, *failed, rewritten])
    headers = ["run", "files", "reader", "items", *[f"unparsed: {p}" for p in parsers],
               *(["extraction failures"] if failures else []), "rewritten"]
    out = ["## Runs", "", table(rows, headers, Format.markdown).rstrip("\n"), ""]
    if any(f.interval is not None for f in v.run_figures):
        em_rows = []
        for name in v.run_files:
            cells = []
            for p in parsers:
                f = by.get((name, p))
                iv = None if f is None or f.interval is None else f.interval["em"]
                cells.append("-" if f is None else with_interval(pct(_f(f.em)), iv, "em"))
            em_rows.append([md_text(name), *cells])
        out += [
            "EM of each run under each parser, with its 95% bootstrap interval (the edges' clusters and seed).", "",
            table(em_rows, ["run", *[f"EM: {p}" for p in parsers]], Format.markdown).rstrip("\n"), "",
        ]
    return out


#: The file suffix of the K-trial figure (shown by the trials part; every other figure is the runs part's).
TRIAL_FIGURE = "-items-shares.png"


def figures_section(fig: Any, *, part: str = "runs") -> list[str]:
    """``## Figures``: the figures drawn beside the note (:class:`replicate.verify.note.Figures`) that are the
    ``part``'s (``runs`` or ``trials``), or why not."""
    out = ["## Figures", ""]
    if fig is None or (not fig.files and fig.reason is None):
        return out + ["Figures are drawn beside the note when it is written with `--out`.", ""]
    if fig.reason is not None:
        return out + [fig.reason, ""]
    files = [f for f in fig.files if f[1].endswith(TRIAL_FIGURE) == (part == "trials")]
    if not files:
        return out + ["No claim names an edge, so there is nothing to plot.", ""]
    for title, png_name, svg_name in files:
        png, svg = quote(png_name), quote(svg_name)  # file names from --out: a link destination, percent-encoded
        out += [f"![{md_text(title)}]({png})", "", f"{md_text(title)} ([PNG]({png}), [SVG]({svg}))", ""]
    return out


def sources_section(v: RunsVerification, root: str) -> list[str]:
    """``## Sources``: every run file read, with its sha256 and how it stands against its fetch manifest."""
    rows = []
    for s in v.sources():
        rel = s.get("release")
        where = md_code(rel['repo_path'] if rel else relative(s['path'], root))
        check = "-" if rel is None else ("matches manifest" if s.get("matches_manifest") else "DIFFERS from manifest")
        rows.append([where, ", ".join(map(md_text, s["runs"])), s["size"], f"`{s['sha256']}`", check])
    headers = ["file", "runs", "bytes", "sha256", "manifest"]
    return ["## Sources", "", f"Paths are relative to {md_code(root)}.", "",
            table(rows, headers, Format.markdown).rstrip("\n"), ""]


CLAIMS_INTRO = (
    "Each recomputed value is shown in the printed unit with three more decimals than printed, then its verdict: "
    "a printed value matches when the recomputed one rounds to it (\"28.0\" covers 27.95 <= x <= 28.05; a value "
    "exactly on a boundary matches either neighbour and is flagged as a tie); counts must be equal.")


class Runs(RunsVerification):
    """The runs part: :class:`~replicate.verify.verification.RunsVerification` as the note draws it."""

    def header_rows(self) -> list[list[str]]:
        rows = [["Parsers", ", ".join(f"`{p}`" for p in self.parsers)]]
        scale = self._out_of_scale()
        return rows + ([["Out-of-scale labels", scale]] if scale else [])

    def _out_of_scale(self) -> str:
        """The header's words for labels outside their run's scale: the policy when it is not ``keep``, and each
        run with such labels (empty when the policy is ``keep`` and no label lies outside)."""
        changed = [o for o in self.scale_outcomes if o.count]
        if self.out_of_scale == "keep" and not changed:
            return ""
        policy = self.out_of_scale
        head = "kept as read" if policy == "keep" else f"{policy} ({md_code('--out-of-scale ' + policy)})"
        return "; ".join([head, *(md_text(o.words()) for o in changed)]) if changed else f"{head}; no label lay outside"

    def table_head(self) -> list[str]:
        return departure_lines(self.out_of_scale, self.scale_outcomes)

    def summary_note(self) -> list[str]:
        one = len(self.parsers) == 1
        gate = self.parsers[0] if self.explicit_parsers or self.decided or one else "each claim's first parser"
        if self.failed:
            ids = ", ".join(md_text(r.claim.id) for r in self.failed)
            lines = [f"Check failed: {len(self.failed)} claim(s) mismatch under {gate}: {ids}."]
        else:
            lines = [f"Check passed: no claim mismatches under {gate}."]
        if self.decided:
            lines += ["", f"Every run carries labels or correctness verdicts its reader decided ({self.parsers[0]}), "
                      "so no parser reads them and each claim is recomputed once."]
        elif not self.explicit_parsers and one:
            lines += ["", f"No parser was given, so every claim was recomputed under {self.parsers[0]}, the claims "
                      "file's parser; no other registered parser of its family gives the same labels."]
        elif not self.explicit_parsers:
            lines += ["", "No parser was given, so each claim was recomputed under the parser it names, "
                      "else under the study's parser and every registered parser of its family giving the same "
                      "labels (every umbrela parser when the study names none), with the released readings first "
                      "and the project's own corrected readings last; a claim's first parser gates the result."]
        return lines

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        if stage == "claims":
            claims, notes = claims_table(self, Format.markdown, figure=False)
            return ["## Claims", "", CLAIMS_INTRO, "", claims.rstrip("\n"), "", *claim_texts(self, notes), ""]
        if stage == "details":
            return edges(self) + floors(self) + runs(self)
        return figures_section(figures) + sources_section(self, root)

    def table(self, fmt: Any) -> list[str]:
        claims, notes = claims_table(self, fmt)
        return [claims.rstrip("\n"), *([""] + reasons(notes) if notes else [])]
