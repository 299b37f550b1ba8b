"""The verification note: markdown that reads well on GitHub and as plain text (pure).

:func:`render_note` turns a :class:`~replicate.verify.result.Verification`
into the note; :func:`render_table` gives the short terminal view (summary and
claims table). Nothing here reads files or the clock: the date, paths and
figure links come in as values, so the same inputs always give the same bytes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path, PurePath, PurePosixPath

from replicate.judge.floor.checks import interval_verdict
from replicate.judge.render.errors import interval_cell, with_interval
from replicate.output import Format, pct, table, table_blocks
from replicate.provenance import FileProvenance
from replicate.stats.paired import p_display
from replicate.stats.ranges import Span
from replicate.verify.matching import Verdict
from replicate.verify.recompute import EdgeFigures, FloorFigures
from replicate.verify.result import ClaimResult, Verification
from replicate.verify.trials_note import figure_cell, reproduce_args, trial_sections, trial_table

PLOTS_HINT = "pip install 'replicate-audit[plots]'"


@dataclass(frozen=True)
class Figures:
    """Figures drawn beside the note (``files``: (title, png, svg) relative to the note) or why not."""

    files: tuple[tuple[str, str, str], ...] = ()
    reason: str | None = None


def _show(value: Fraction | int | float | None, places: int, unit: str) -> str:
    """A recomputed value in the printed scale, with three more decimals than printed."""
    if value is None:
        return "-"
    if unit == "count" or isinstance(value, int):
        return str(value)
    x = float(value * 100 if unit == "percent" else value)
    return f"{x:.{places + 3}f}"


def _result_cell(r: ClaimResult, parser: str, notes: dict[str, int]) -> str:
    verdict = r.verdict(parser)
    if verdict is None:
        return "(not asked)"
    c = r.computed[parser]
    if verdict is Verdict.not_computable:
        why = c.why or "undefined"
        ref = notes.setdefault(why, len(notes) + 1)
        return f"not computable [{ref}]"
    p = r.claim.printed
    tie = " (tie)" if r.matches[parser] is not None and r.matches[parser].tie else ""  # type: ignore[union-attr]
    return f"{_show(c.value, p.places, p.unit)} {verdict.value}{tie}"


def _printed(r: ClaimResult) -> str:
    p = r.claim.printed
    suffix = {"percent": "%", "fraction": "", "count": "", "ratio": ""}[p.unit]
    return f"{p.text.rstrip('%').rstrip()}{suffix}"


def claims_table(v: Verification, fmt: Format, *, figure: bool = True) -> tuple[str, dict[str, int]]:
    """The claims table and the numbered reasons it refers to.

    ``figure=False`` leaves out the metric-and-runs column (the note lists each
    claim in words right below its table, which keeps the table narrow).
    """
    notes: dict[str, int] = {}
    plain = Format(fmt) is Format.table
    headers = ["id", "where", *(["figure"] if figure else []), "printed", *v.parsers, "verdict"]
    rows = []
    for r in v.results:
        c = r.claim
        rows.append([
            str(c.id), str(c.where or "-"),
            *([figure_cell(c.metric, c.target, plain)] if figure else []),
            str(_printed(r)), *[str(_result_cell(r, p, notes)) for p in v.parsers],
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


def _summary(v: Verification) -> list[str]:
    if v.trials is not None and not v.results:
        return [f"**{v.summary_line()}.**", "", *_trial_summary(v)]
    lines = [f"**{v.summary_line()}.**" if v.results else "**No claims.**", ""]
    if v.trials is not None:
        lines += _trial_summary(v) + [""]
    gate = v.parsers[0] if v.explicit_parsers or v.decided else "each claim's first parser"
    if v.failed:
        ids = ", ".join(r.claim.id for r in v.failed)
        lines.append(f"Check failed: {len(v.failed)} claim(s) mismatch under {gate}: {ids}.")
    else:
        lines.append(f"Check passed: no claim mismatches under {gate}.")
    if v.decided:
        lines += ["", f"Every run carries labels or correctness verdicts its reader decided ({v.parsers[0]}), "
                  "so no parser reads them and each claim is recomputed once."]
    elif not v.explicit_parsers:
        lines += ["", "No parser was given, so each claim was recomputed under the parser it names, "
                  "else under every registered umbrela parser with the released readings first and the "
                  "project's own corrected readings last; a claim's first parser gates the result."]
    return lines


def _trial_summary(v: Verification) -> list[str]:
    assert v.trials is not None
    bad = [r for r in v.trials.failed]
    if not bad:
        return ["Trial claims: none mismatches and none fails to replicate."]
    ids = ", ".join(r.claim.id for r in bad)
    return [f"Check failed: {len(bad)} trial claim(s) mismatch or do not replicate: {ids}."]


def _released_files(v: Verification) -> list[FileProvenance]:
    """Every released file read: the runs' files, then the released trials tables (not fresh collections)."""
    files = [f.provenance for fs in v.run_files.values() for f in fs]
    if v.trials is not None:
        files += [t.file for t in v.trials.tables if t.role == "released" and t.file is not None]
    return files


def _releases(v: Verification) -> list[tuple[str, str, str]]:
    """(source, commit, licence status in words) of each fetched release the files come from."""
    seen: dict[tuple[str, str], str] = {}
    for f in _released_files(v):
        rel = f.release
        if rel is not None:
            seen.setdefault((rel.source, rel.commit), rel.licence_words)
    return [(s, c, words) for (s, c), words in seen.items()]


def _rel(path: str, root: str) -> str:
    try:
        return PurePath(path).relative_to(PurePath(root)).as_posix()
    except ValueError:
        return PurePath(path).as_posix()


def _header(v: Verification) -> list[str]:
    study = v.claims_file.study
    title = study.title or "(untitled study)"
    rows = [["Study", str(title)], ["Reference", str(study.reference or "-")],
            ["Claims file", f"`{str(PurePath(v.claims_file.path).as_posix())}`"]]
    releases = _releases(v)
    if releases:
        for source, commit, licence in releases:
            rows.append(["Data", f"{str(source)} at commit `{commit}`, fetched into `{str(v.root)}`"])
            rows.append(["Licence", str(licence)])
    else:
        rows.append(["Data", f"local files under `{str(v.root)}` (not from a fetched release; hashes below)"])
        if study.release:
            at = f" at `{study.commit}`" if study.commit else ""
            rows.append(["Release named", f"{str(study.release)}{at} (not verified: no fetch manifest)"])
    if v.results or v.trials is None:
        rows.append(["Parsers", ", ".join(f"`{p}`" for p in v.parsers)])
    rows.append(["Tool", f"replicate {v.tool_version}"])
    rows.append(["Date", v.date])
    return [f"# Verification note: {title}", "", table(rows, ["", ""], Format.markdown).rstrip("\n")]


def _floor_of(v: Verification, e: EdgeFigures) -> FloorFigures | None:
    for f in v.floors:
        if e.new in f.runs and f.parser == e.parser and f.policy == e.policy:
            return f
    return None


def _position(
    rate: Fraction | int | None, lo: Fraction | None, hi: Fraction | None, e: EdgeFigures | None = None,
    fl: FloorFigures | None = None,
) -> str:
    """Below / inside / above the floor; with intervals, 'above' only when the edge's clears the floor's widened range."""
    if rate is None or lo is None or hi is None:
        return "-"
    iv = None if e is None or e.error is None else e.error.interval.get("regression_rate")
    bounds = None if fl is None else fl.floor.regression_span_with_error
    verdict = interval_verdict(Fraction(rate), Span(lo, hi), iv, bounds)
    if e is None or fl is None or not fl.floor.pairs:
        return verdict
    # no verdict without its n: the edge's compared items, and the smallest repeat pair's
    return f"{verdict} (n = {e.cells.n}; floor n = {min(p.cells.n for p in fl.floor.pairs)})"


def _f(x: Fraction | float | None) -> float | None:
    return None if x is None else float(x)


def _edges(v: Verification) -> list[str]:
    """Two tables per edge and parser: the four cells, then the rates (one wide table reads badly as text)."""
    if not v.edges:
        return []
    cells_rows, rate_rows, error_rows, mcnemar_rows = [], [], [], []
    for e in v.edges:
        fl = _floor_of(v, e)
        lo, hi = (fl.value("floor.regression_min"), fl.value("floor.regression_max")) if fl else (None, None)
        ratio = e.value("independence_ratio")
        edge, parser = str(f"{e.old} -> {e.new}"), f"`{e.parser}`"
        cells_rows.append([edge, parser, e.cells.n, e.cells.both, e.cells.only_old, e.cells.only_new, e.cells.neither])
        rate_rows.append([
            edge, parser, pct(_f(e.value("regression_rate"))),
            pct(_f(e.value("regression_share_of_old_correct"))), pct(_f(e.value("independent_regression_rate"))),
            "-" if ratio is None else f"{float(ratio):.3f}", pct(_f(e.value("backward_rate"))),
            pct(_f(e.value("change_rate"))),
            f"{pct(_f(lo))}-{pct(_f(hi))}" if fl else "-", _position(e.value("regression_rate"), lo, hi, e, fl),
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
        "floor\" says where the edge lies against it, with the n of the edge and of the floor's smallest repeat pair (bounds count as inside; with intervals, \"above\" only "
        "when the regression rate's whole interval clears the range widened by the floor's own sampling error, "
        "\"indistinguishable\" when the rate lies outside the range but its interval reaches the widened range).",
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


def _error_part(v: Verification, rows: list[list[object]]) -> list[str]:
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


def _floors(v: Verification) -> list[str]:
    if not v.floors:
        return []
    rows = []
    with_error = any(f.floor.regression_span_with_error is not None for f in v.floors)
    for f in v.floors:
        bounds = f.floor.regression_span_with_error
        rows.append([
            str(", ".join(f.runs)), f"`{f.parser}`", f.shared_items, len(f.pairs),
            f"{pct(_f(f.value('floor.regression_min')))}-{pct(_f(f.value('floor.regression_max')))}",
            *([] if not with_error else ["-" if bounds is None else f"{pct(bounds.low)}-{pct(bounds.high)}" + _ends(f.floor)]),
            f"{pct(_f(f.value('floor.change_min')))}-{pct(_f(f.value('floor.change_max')))}",
        ])
    headers = ["repeats", "parser", "shared items", "ordered pairs", "regression min-max",
               *(["regression 95% (with sampling error)"] if with_error else []), "change min-max"]
    explain = [] if not with_error else [
        "\"regression 95% (with sampling error)\" widens the floor's range by its own sampling error: from the "
        "interval low of the smallest repeat-pair regression rate to the interval high of the largest, each taken "
        "again in every bootstrap replicate. An edge is \"above\" its floor only when its interval clears this.", "",
    ]
    pair_rows = [
        [str(", ".join(f.runs)), f"`{f.parser}`", p.old, p.new,
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


def _runs(v: Verification) -> list[str]:
    parsers = list(dict.fromkeys(f.parser for f in v.run_figures))  # the claims table's order
    by = {(f.name, f.parser): f for f in v.run_figures}
    rows = []
    for name, files in v.run_files.items():
        items = next((f.items for f in v.run_figures if f.name == name), sum(x.records for x in files))
        cells = []
        for p in parsers:
            f = by.get((name, p))
            cells.append("-" if f is None else f"{f.unparsed} ({pct(_f(f.unparsed_rate))})")
        rewritten = sum(x.rewritten for x in files)
        reader = " + ".join(dict.fromkeys(f"`{x.reader}`" for x in files))
        rows.append([str(name), len(files), reader, items, *cells, rewritten])
    headers = ["run", "files", "reader", "items", *[f"unparsed: {p}" for p in parsers], "rewritten"]
    out = ["## Runs", "", table(rows, headers, Format.markdown).rstrip("\n"), ""]
    if any(f.interval is not None for f in v.run_figures):
        em_rows = []
        for name in v.run_files:
            cells = []
            for p in parsers:
                f = by.get((name, p))
                iv = None if f is None or f.interval is None else f.interval["em"]
                cells.append("-" if f is None else with_interval(pct(_f(f.em)), iv, "em"))
            em_rows.append([str(name), *cells])
        out += [
            "EM of each run under each parser, with its 95% bootstrap interval (the edges' clusters and seed).", "",
            table(em_rows, ["run", *[f"EM: {p}" for p in parsers]], Format.markdown).rstrip("\n"), "",
        ]
    return out


def _flags(v: Verification) -> list[str]:
    out = ["## Flags", ""]
    if not v.flags:
        return out + ["Nothing flagged.", ""]
    return out + [f"- {f.kind.replace('_', ' ')}: {f.message}" for f in v.flags] + [""]


def _figures(fig: Figures | None) -> list[str]:
    out = ["## Figures", ""]
    if fig is None or (not fig.files and fig.reason is None):
        return out + ["Figures are drawn beside the note when it is written with `--out`.", ""]
    if fig.reason is not None:
        return out + [fig.reason, ""]
    for title, png, svg in fig.files:
        out += [f"![{title}]({png})", "", f"{title} ([PNG]({png}), [SVG]({svg}))", ""]
    return out


def _sources(v: Verification) -> list[str]:
    rows = []
    for s in v.sources():
        rel = s.get("release")
        where = f"`{str(rel['repo_path'] if rel else _rel(s['path'], v.root))}`"
        check = "-" if rel is None else ("matches manifest" if s.get("matches_manifest") else "DIFFERS from manifest")
        rows.append([where, str(", ".join(s["runs"])), s["size"], f"`{s['sha256']}`", check])
    headers = ["file", "runs", "bytes", "sha256", "manifest"]
    return ["## Sources", "", f"Paths are relative to `{v.root}`.", "",
            table(rows, headers, Format.markdown).rstrip("\n"), ""]


def _glob(path: PurePosixPath) -> str:
    return f"{path.parent}/**" if str(path.parent) != "." else str(path)


def minimal_globs(globs: list[str]) -> list[str]:
    """``globs`` without those another one covers (``a/b/**`` under ``a/**``), first-seen order kept."""
    dirs = [g[: -len("/**")] for g in globs if g.endswith("/**")]

    def covered(g: str) -> bool:
        body = g[: -len("/**")] if g.endswith("/**") else g
        return any(body != d and body.startswith(d + "/") for d in dirs)

    return [g for g in dict.fromkeys(globs) if not covered(g)]


def _dest(manifest: str, root: str) -> str:
    """Where a release was fetched to, written relative to the --root the user gave."""
    fetched = Path(manifest).parent
    try:
        inside = fetched.relative_to(Path(root).resolve())
    except ValueError:
        return fetched.as_posix()
    return root if str(inside) == "." else (PurePath(root) / inside).as_posix()


def _fetch_plan(v: Verification) -> list[tuple[str, str, str, list[str]]]:
    """(source, commit, destination, include globs) for each fetched release the files come from."""
    plan: dict[tuple[str, str, str], dict[str, None]] = {}
    for f in _released_files(v):
        rel = f.release
        if rel is not None:
            key = (rel.source, rel.commit, _dest(rel.manifest, v.root))
            plan.setdefault(key, {}).setdefault(_glob(PurePosixPath(rel.repo_path)), None)
    return [(s, c, d, minimal_globs(list(g))) for (s, c, d), g in plan.items()]


def reproduce_commands(v: Verification, *, out: str | None) -> list[str]:
    """The shell commands that repeat this check: fetch each release its files came from, then verify.

    Only fetched files (with a fetch manifest) give a fetch command, into the
    directory they were fetched to: local files not from a fetch are read where
    they are (a [study] release named without a fetch is not fetched over them).
    """
    q = shlex.quote
    cmds = []
    plan = _fetch_plan(v)
    for source, commit, dest, globs in plan:
        inc = " ".join(f"--include {q(g)}" for g in globs)
        cmds.append(f"replicate fetch {q(source)} --rev {q(commit)} {inc} --dest {q(dest)}")
        cmds.append(f"replicate fetch --check {q(dest)}")
    verify = f"replicate verify {q(PurePath(v.claims_file.path).as_posix())} --root {q(v.root)}"
    if v.explicit_parsers and not v.decided:
        verify += "".join(f" --parser {q(p)}" for p in v.parsers)
    if v.trials is not None:
        verify += reproduce_args(v.trials)
    if out is not None:
        verify += f" --out {q(out)}"
    cmds.append(verify)
    return cmds


def _claim_texts(v: Verification, notes: dict[str, int]) -> list[str]:
    out = []
    for r in v.results:
        c = r.claim
        where = f" ({c.where})" if c.where else ""
        extra = []
        if c.parser:
            extra.append(f"pins `{c.parser}`")
        if c.unparsed:
            extra.append(f"unparsed policy `{c.unparsed}`")
        if c.text:
            extra.append(f"as printed: \"{c.text}\"")
        tail = f"; {'; '.join(extra)}" if extra else ""
        out.append(f"- `{c.id}`{where}: `{c.metric}` of {c.target}, printed {_printed(r)}, "
                   f"matches {c.printed.show_interval()}{tail}")
    if notes:
        out += ["", "Not computable:", ""]
        out += [f"[{i}] {why}" for why, i in notes.items()]
    return out


def render_note(v: Verification, *, out: str | None = None, figures: Figures | None = None) -> str:
    """The whole note as markdown text (ends with one newline)."""
    claims, notes = claims_table(v, Format.markdown, figure=False)
    parts: list[str] = [*_header(v), "", "## Summary", "", *_summary(v), ""]
    judge = bool(v.results) or v.trials is None
    if judge:
        parts += [
            "## Claims", "",
            "Each recomputed value is shown in the printed unit with three more decimals than printed, "
            "then its verdict: a printed value matches when the recomputed one rounds to it "
            "(\"28.0\" covers 27.95 <= x <= 28.05; a value exactly on a boundary matches either neighbour "
            "and is flagged as a tie); counts must be equal.", "",
            claims.rstrip("\n"), "", *_claim_texts(v, notes), "",
        ]
    if v.trials is not None:
        parts += trial_sections(v.trials)
    if judge:
        parts += _edges(v) + _floors(v) + _runs(v)
    parts += _flags(v)
    if judge:
        parts += _figures(figures) + _sources(v)
    parts += ["## Reproduce", "", "```sh", *reproduce_commands(v, out=out), "```", ""]
    return wrap_prose("\n".join(parts)).rstrip("\n") + "\n"


#: Prose lines of the note are wrapped at this width so the note reads as plain text too.
WIDTH = 100


#: A word that would open a new markdown block (list item, heading, quote, rule, table) at a line's start.
_BLOCK_START = re.compile(r"[-+*>]|#{1,6}|\d{1,9}[.)]|=+|-+|\|.*|```.*")


def _wrap_line(line: str, width: int) -> list[str]:
    """Greedy wrap at spaces; never starts a continuation line with a word markdown would read as a block."""
    indent = "  " if line.startswith("- ") else ""
    lines: list[list[str]] = [[]]
    used = 0
    for word in line.rstrip().split(" "):
        if lines[-1] and used + 1 + len(word) > width:
            lines.append([])
            used = len(indent)
        lines[-1].append(word)
        used += len(word) + (1 if len(lines[-1]) > 1 else 0)
    for k in range(1, len(lines)):  # pull a word down so that no line opens a block
        while _BLOCK_START.fullmatch(lines[k][0]) and len(lines[k - 1]) > 1:
            lines[k].insert(0, lines[k - 1].pop())
    return [(indent if k else "") + " ".join(words) for k, words in enumerate(lines)]


def wrap_prose(text: str, width: int = WIDTH) -> str:
    """Wrap paragraphs and list items longer than ``width``; tables, headings and code blocks stay as they are.

    Lines break only at spaces (file names, parser names and inline code stay
    whole) and never so that a continuation line would start a markdown block,
    so the rendered note is unchanged: markdown joins the lines again.
    """
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or len(line) <= width or line.startswith(("|", "#", "    ")) or "](" in line:
            out.append(line)
        else:
            out.extend(_wrap_line(line, width))
    return "\n".join(out)


def render_table(v: Verification, fmt: Format = Format.table) -> str:
    """The terminal view: the claims table, reasons for anything not computable, the summary line."""
    lines = []
    if v.results or v.trials is None:
        claims, notes = claims_table(v, fmt)
        lines.append(claims.rstrip("\n"))
        if notes:
            lines += [""] + [f"[{i}] {why}" for why, i in notes.items()]
    if v.trials is not None:
        if lines:
            lines.append("")
        lines.append(trial_table(v.trials, fmt).rstrip("\n"))
    lines += ["", v.summary_line()]
    return "\n".join(lines) + "\n"
