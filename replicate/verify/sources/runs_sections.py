"""The runs part's detail sections of the note: edges, rerun floors, runs, figures and sources (pure rendering)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any
from urllib.parse import quote

from replicate.judge.floor import PAIR_FIGURES, EdgeCheck, Floor
from replicate.judge.model import RunFile
from replicate.judge.render.errors import interval_cell, with_interval
from replicate.judge.render.figures import figure_text
from replicate.judge.run_figures import RunFigures
from replicate.output import Format, md_code, md_text, pct, table
from replicate.stats.fourcell import FIGURES, Figure, figure_names
from replicate.stats.paired import p_display
from replicate.verify.part import relative
from replicate.verify.recompute import EdgeFigures, edge_key, floor_of, floor_value


def _position(against: Mapping[tuple, EdgeCheck], e: EdgeFigures, fl: Floor | None) -> str:
    """Below / inside / above the floor: what ``floor --edge`` says of the edge (its paired test with
    intervals), with the n of the edge and of the floor's smallest repeat pair."""
    check = against.get(edge_key(e))
    if fl is None or check is None or check.verdict is None:
        return "-"
    if not fl.pairs:
        return check.verdict
    # no verdict without its n: the edge's compared items, and the smallest repeat pair's
    return f"{check.verdict} (n = {check.comparison.cells.n}; floor n = {min(p.cells.n for p in fl.pairs)})"


def _f(x: Fraction | float | None) -> float | None:
    return None if x is None else float(x)


def edges(figures: Sequence[EdgeFigures], floor_figures: Sequence[Floor],
          against: Mapping[tuple, EdgeCheck]) -> list[str]:
    """``## Edges``: two tables per edge and parser, the four cells, then the rates (one wide table reads badly as
    text); ``against``: per edge (:func:`edge_key`), ``floor --edge``'s check against its floor."""
    if not figures:
        return []
    cells_rows, rate_rows, error_rows, mcnemar_rows = [], [], [], []
    points, blocks = _note_columns()
    for e in figures:
        fl = floor_of(floor_figures, e)
        lo, hi = (floor_value(fl, "floor.regression_min"), floor_value(fl, "floor.regression_max")) if fl else (None, None)
        edge, parser = f"{md_text(e.old)} -> {md_text(e.new)}", f"`{e.parser}`"
        cells_rows.append([edge, parser, e.cells.n, e.cells.both, e.cells.only_old, e.cells.only_new, e.cells.neither])
        rate_rows.append([
            edge, parser, *(figure_text(f.name, _f(e.value(f.name)), pct_digits=2, num_digits=3) for f in points),
            f"{pct(_f(lo))}-{pct(_f(hi))}" if fl else "-", _position(against, e, fl),
        ])
        if e.error is not None and not e.error.resampled:  # --replicates 0: the test that needs no replicates
            mcnemar_rows.append([edge, parser, e.cells.n, p_display(e.error.mcnemar_p), e.error.cluster or "item"])
        elif e.error is not None:
            iv = e.error.interval
            error_rows.append([
                edge, parser, e.cells.n, *(interval_cell(iv[f.name], f.name) for block in blocks for f in block),
                p_display(e.error.mcnemar_p), e.error.cluster or "item",
            ])
    policies = sorted({e.policy for e in figures})
    cell_headers = ["edge", "parser", "N", "both", "only_old", "only_new", "neither"]
    rate_headers = ["edge", "parser", *(f.heading for f in points), "floor of new", "vs floor"]
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
    ] + _error_part(figures, error_rows, blocks) + _mcnemar_part(mcnemar_rows)


def _mcnemar_part(rows: list[list[object]]) -> list[str]:
    """Without intervals (``--replicates 0``), each edge's clustered McNemar test and what it assumes."""
    if not rows:
        return []
    return [
        "No bootstrap intervals were computed (--replicates 0). McNemar's exact p treats every item as "
        "independent; the clustered test (Durkalski) does not. A large p is absence of evidence, not equal accuracy.",
        "", table(rows, ["edge", "parser", "N", "McNemar p (clustered)", "cluster"], Format.markdown).rstrip("\n"), "",
    ]


def _note_columns() -> tuple[list[Figure], tuple[list[Figure], list[Figure]]]:
    """The edge figures of the note's table of rates, in their order, and its two interval tables, in table
    order: the accuracies first, then the regression figures (:class:`~replicate.stats.fourcell.NoteColumn`)."""
    edge = [FIGURES[name] for name in figure_names("edge")]
    shown = [f for f in edge if f.note.point is not None]
    points = sorted(shown, key=lambda f: f.note.point)  # type: ignore[arg-type, return-value]  # stable: table order
    return points, ([f for f in edge if f.note.block == "accuracy"], [f for f in edge if f.note.block == "regression"])


def _error_part(figures: Sequence[EdgeFigures], rows: list[list[object]],
                blocks: tuple[list[Figure], list[Figure]]) -> list[str]:
    """The bootstrap intervals of each edge (when computed) and what they assume: two tables, like the edges'."""
    if not rows:
        return []
    err = next(e for e in figures if e.error is not None and e.error.resampled)
    assert err.error is not None and err.settings is not None
    first, second = blocks
    iv = err.error.interval[second[0].name]
    k = 3 + len(first)
    accuracy = [r[:k] for r in rows]
    regression = [r[:3] + r[k:] for r in rows]
    return [
        f"Sampling error: {iv.method} intervals ({iv.replicates} replicates, seed {iv.seed}); items of one "
        "cluster are resampled together, since judged passages of one query are alike. McNemar's exact p "
        "treats every item as independent; the clustered test (Durkalski) does not. A large p is absence of "
        "evidence, not equal accuracy: read the interval of the EM difference.",
        "", table(accuracy, ["edge", "parser", "N", *(f"{f.heading} 95%" for f in first)], Format.markdown).rstrip("\n"),
        "", table(
            regression, ["edge", "parser", "N", *(f"{f.heading} 95%" for f in second), "McNemar p (clustered)", "cluster"],
            Format.markdown,
        ).rstrip("\n"), "",
    ]


def _ends(fl) -> str:
    """The intervals of the floor's range ends, which the widened range is read from."""
    ends = fl.range_interval
    return "" if ends is None else f" (min {interval_cell(ends['min'], 'min')}, max {interval_cell(ends['max'], 'max')})"


def floors(figures: Sequence[Floor]) -> list[str]:
    """``## Rerun floors``: each floor a claim names, with its ordered pairs' intervals where computed."""
    if not figures:
        return []
    rows = []
    with_error = any(f.regression_span_with_error is not None for f in figures)
    for f in figures:
        bounds = f.regression_span_with_error
        rows.append([
            ", ".join(map(md_text, f.names)), f"`{f.parser}`", f.shared_items, len(f.pairs),
            f"{pct(_f(floor_value(f, 'floor.regression_min')))}-{pct(_f(floor_value(f, 'floor.regression_max')))}",
            *([] if not with_error else ["-" if bounds is None else f"{pct(bounds.low)}-{pct(bounds.high)}" + _ends(f)]),
            f"{pct(_f(floor_value(f, 'floor.change_min')))}-{pct(_f(floor_value(f, 'floor.change_max')))}",
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
        [", ".join(map(md_text, f.names)), f"`{f.parser}`", md_text(p.old), md_text(p.new),
         *(with_interval(pct(p.cells.value(k)), p.interval[k], k) for k in PAIR_FIGURES)]
        for f in figures for p in f.pairs if p.interval is not None
    ]
    pairs = [] if not pair_rows else [
        "Each ordered pair of repeats, with its 95% bootstrap intervals:", "",
        table(pair_rows, ["repeats", "parser", "old", "new", "regression", "change"], Format.markdown).rstrip("\n"), "",
    ]
    return ["## Rerun floors", "", "Churn between repeats of one model: what an upgrade must exceed "
            "before it says anything about the new version.", "",
            table(rows, headers, Format.markdown).rstrip("\n"), "", *explain, *pairs]


def runs(figures: Sequence[RunFigures], run_files: Mapping[str, Sequence[RunFile]],
         failures: Mapping[str, int | None]) -> list[str]:
    """``## Runs``: each run's files, reader, items and unparsed outputs per parser (``failures``: its extraction
    failures, a column only where a reader tells them apart), and its EM's interval where computed."""
    parsers = list(dict.fromkeys(f.parser for f in figures))  # the claims table's order
    by = {(f.name, f.parser): f for f in figures}

    def cells(name: str, show: Callable[[RunFigures], str]) -> list[str]:  # the run under each parser
        return ["-" if (f := by.get((name, p))) is None else show(f) for p in parsers]

    rows = []
    for name, files in run_files.items():
        items = next((f.items for f in figures if f.name == name), sum(x.records for x in files))
        unparsed = cells(name, lambda f: f"{f.unparsed} ({pct(_f(f.unparsed_rate))})")
        rewritten = sum(x.rewritten for x in files)
        reader = " + ".join(dict.fromkeys(f"`{x.reader}`" for x in files))
        failed = [] if not failures else ["-" if failures[name] is None else failures[name]]
        rows.append([md_text(name), len(files), reader, items, *unparsed, *failed, rewritten])
    headers = ["run", "files", "reader", "items", *[f"unparsed: {p}" for p in parsers],
               *(["extraction failures"] if failures else []), "rewritten"]
    out = ["## Runs", "", table(rows, headers, Format.markdown).rstrip("\n"), ""]
    if any(f.interval is not None for f in figures):
        em_rows = [[md_text(name), *cells(name, lambda f: with_interval(
            pct(_f(f.em)), None if f.interval is None else f.interval["em"], "em"))] for name in run_files]
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


def sources_section(sources: Sequence[dict[str, Any]], root: str) -> list[str]:
    """``## Sources``: every run file read (``sources``: each with the runs that use it), with its sha256 and how
    it stands against its fetch manifest."""
    rows = []
    for s in sources:
        rel = s.get("release")
        where = md_code(rel['repo_path'] if rel else relative(s['path'], root))
        check = "-" if rel is None else ("matches manifest" if s.get("matches_manifest") else "DIFFERS from manifest")
        rows.append([where, ", ".join(map(md_text, s["runs"])), s["size"], f"`{s['sha256']}`", check])
    headers = ["file", "runs", "bytes", "sha256", "manifest"]
    return ["## Sources", "", f"Paths are relative to {md_code(root)}.", "",
            table(rows, headers, Format.markdown).rstrip("\n"), ""]
