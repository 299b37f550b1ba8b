"""Rerun floors, all-pairs matrices and parser audits: `floor`, `matrix`, `parsers audit`.

Thin commands: options -> run selection -> one library call -> render.
numpy-heavy modules load inside the commands.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from replicate.cli.base import FormatOpt, StrictOpt, app, fit_terminal
from replicate.cli.judge_options import (
    ClusterOpt,
    CorrectFieldOpt,
    DifficultyIntervalsOpt,
    EpochOpt,
    FilterOpt,
    GoldFieldOpt,
    GoldOpt,
    GoldReaderOpt,
    JobsOpt,
    KeyFieldOpt,
    MinItemsOpt,
    OutOfScale,
    OutOfScaleOpt,
    OutputFieldOpt,
    ParserOpt,
    ReaderOpt,
    ReplicatesOpt,
    RunsFileOpt,
    ScoreMapOpt,
    ScorerOpt,
    SeedOpt,
    UnparsedOpt,
    check_run_values,
    edge_of,
    emit_runs,
    later_imports,
    load,
    need_parser,
    policy_of,
    reader_options,
    resolve_runs,
    uncertainty_of,
)
from replicate.cli.parsers_cmds import parsers_app
from replicate.errors import BadInput, Message, UsageError
from replicate.output import Format

RunArgs = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="RUN...",
        help="Runs: files or run directories (a HELM run; each one run, named after it), '-' for standard input, or names of runs in --runs.",
        show_default=False,
    ),
]
EdgeOpt = Annotated[
    str | None,
    typer.Option(
        "--edge",
        metavar="OLD:NEW",
        help="An upgrade edge (two runs: names in --runs or files) to set against the floor.",
        show_default=False,
    ),
]


@app.command("floor")
def floor_cmd(
    runs: RunArgs = None,
    runs_file: RunsFileOpt = None,
    parser: ParserOpt = None,
    reader: ReaderOpt = None,
    gold: GoldOpt = None,
    gold_reader: GoldReaderOpt = None,
    lm_filter: FilterOpt = None,
    correct_field: CorrectFieldOpt = None,
    scorer: ScorerOpt = None,
    score_map: ScoreMapOpt = None,
    epoch: EpochOpt = None,
    edge: EdgeOpt = None,
    main: Annotated[
        str | None,
        typer.Option("--main", metavar="MAIN", help="A main-results run (name in --runs or file) to check against the repeats.", show_default=False),
    ] = None,
    unparsed: UnparsedOpt = None,
    out_of_scale: OutOfScaleOpt = OutOfScale.keep,
    key_field: KeyFieldOpt = None,
    gold_field: GoldFieldOpt = None,
    output_field: OutputFieldOpt = None,
    strict: StrictOpt = False,
    jobs: JobsOpt = "auto",
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    min_items: MinItemsOpt = 100,
    format: FormatOpt = Format.table,
) -> None:
    """Rerun floor: the churn between repeats of one model and configuration.

    For every ordered pair of repeats: the four cells, regression and change
    rates; their min-max ranges; EM mean and sample sd (ddof=1); the Jaccard
    overlap of the regression sets. --edge OLD:NEW says whether that edge's
    regression rate lies below, inside (bounds included) or above the floor,
    allowing for sampling error: a paired test by query cluster (--cluster)
    of the edge's regression rate minus the repeat pairs' mean, 'above' when
    its t interval (G - 1 degrees of freedom) lies above 0, 'below' under 0,
    else 'inside' (the rate lies in the range) or 'indistinguishable'; no verdict ('insufficient_data', with n and clusters)
    under 5 clusters or on too few items. JSON keeps the older widened-range
    rule as range_verdict. Floors and edges on fewer than --min-items
    items, and an edge over other items than the floor's, are flagged. --main MAIN sets MAIN's change rate against each repeat
    beside the repeat-to-repeat range; it is flagged far_beyond when even its
    closest repeat differs on more than twice the largest repeat-to-repeat
    change rate. --runs without RUN arguments: a run of [runs] and its
    repeats under [repeats] (named RUN-repeat, ...); refused, saying what to
    pass, where the file does not say which runs repeat one model.

    \b
    Example:
      replicate floor --runs fixtures/example/runs.toml \\
        alpha-2025-01 alpha-2025-01-repeat \\
        --edge alpha-2024-08 alpha-2025-01 --parser umbrela-fallback@1
    """
    from replicate.judge.floor import floor
    from replicate.judge.render.floor import floor_text
    from replicate.judge.select import select_runs

    pair = edge_of(edge, runs or ())
    check_run_values(main=main)
    extra = [*(pair or ()), *([main] if main else [])]
    if not runs and runs_file is not None:
        from replicate.cli.base import warn
        from replicate.judge.select import floor_repeats

        runs, note = floor_repeats(runs_file, exclude=[main] if main else ())
        warn(note)
    sel = select_runs(runs or [], runs_file, extra=extra)
    if len(sel.main) < 2:
        raise UsageError(f"a floor needs at least two repeats of one model; got {len(sel.main)}")
    loaded = load(sel.specs, key_field, gold_field, output_field, strict, reader, gold, gold_reader, extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=parser, out_of_scale=out_of_scale,
                  jobs=jobs, parsers=[parser] if parser else [])
    labelled = {r.name: r for r in loaded.labelled(need_parser(parser, loaded))}
    names = [loaded.named(n) for n in sel.extra]  # the runs may be named after their models once read
    choice = policy_of(unparsed, loaded)
    result = floor(
        [labelled[loaded.named(n)] for n in sel.main],
        policy=choice.policy,
        edge=(labelled[names[0]], labelled[names[1]]) if edge else None,
        main=labelled[names[-1]] if main else None,
        uncertainty=uncertainty_of(replicates, seed, cluster, min_items, loaded),
    )
    emit_runs(loaded, result, format, text=fit_terminal(lambda: floor_text(result, format), format), comparisons=[result],
              choice=choice)


def _scale(text: str | None, parser_name: str, loaded=None) -> tuple[int, int]:
    if text is not None:
        # ASCII digits (int() refuses '²'), at most 18: a grade scale, never a number int() refuses as too long
        m = re.fullmatch(r"\s*([0-9]{1,18})\s*-\s*([0-9]{1,18})\s*", text)
        if m is None or int(m[1]) > int(m[2]):
            raise UsageError(f"--scale must be LO-HI with whole-number grades LO <= HI, e.g. 0-3; got {text!r}")
        return int(m[1]), int(m[2])
    from replicate.parsing import PARSERS

    if parser_name in PARSERS:
        ls = PARSERS.get(parser_name).label_set
        if ls is not None:
            return ls.low, ls.high
    sets = [r.label_set for r in (loaded.runs if loaded is not None else ()) if r.label_set is not None]
    if sets:  # decided labels: the readers' declared scale
        return min(s.low for s in sets), max(s.high for s in sets)
    return 0, 3  # EXAM grades: round(3 x covered / total)


@app.command("matrix")
def matrix_cmd(
    runs: RunArgs = None,
    runs_file: RunsFileOpt = None,
    parser: ParserOpt = None,
    reader: ReaderOpt = None,
    gold: GoldOpt = None,
    gold_reader: GoldReaderOpt = None,
    lm_filter: FilterOpt = None,
    correct_field: CorrectFieldOpt = None,
    scorer: ScorerOpt = None,
    score_map: ScoreMapOpt = None,
    epoch: EpochOpt = None,
    unparsed: UnparsedOpt = None,
    out_of_scale: OutOfScaleOpt = OutOfScale.keep,
    scale: Annotated[
        str | None,
        typer.Option("--scale", metavar="LO-HI", help="Label scale for the sanity checks. Default: the parser's labels (0-3).", show_default=False),
    ] = None,
    key_field: KeyFieldOpt = None,
    gold_field: GoldFieldOpt = None,
    output_field: OutputFieldOpt = None,
    strict: StrictOpt = False,
    jobs: JobsOpt = "auto",
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    min_items: MinItemsOpt = 100,
    difficulty_intervals: DifficultyIntervalsOpt = False,
    format: FormatOpt = Format.table,
) -> None:
    """Every ordered pair of runs at once, plus each run's baseline against gold.

    One matrix per figure (rows = old, columns = new): regression rate, share
    of old-correct, independence ratio, label agreement. Baselines: n, EM,
    MAE and Pearson r (MAE and r over parsed items). Sanity flags: an MAE
    above the scale's range, an EM outside [0, 1], labels or gold off the
    scale, a run whose n differs, a run with items others lack, pairs on
    fewer than --min-items items. All figures use the items every run has.
    Every pair's figures get bootstrap intervals resampling whole queries
    (--cluster; --replicates 0 for none) and, with 4+ runs, the regression
    expected from errors independent given item difficulty.

    \b
    Example:
      replicate matrix --runs fixtures/example/runs.toml --parser umbrela-fallback@1
    """
    from replicate.judge.matrix import matrix
    from replicate.judge.render.matrix import matrix_text
    from replicate.judge.select import select_runs

    sel = select_runs(runs or [], runs_file)
    if len(sel.main) < 2:
        raise UsageError(f"a matrix needs at least two runs; got {len(sel.main)}")
    if scale is not None:
        _scale(scale, "")  # a bad --scale is a usage error before any file is read
    loaded = load(sel.specs, key_field, gold_field, output_field, strict, reader, gold, gold_reader, extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=parser, out_of_scale=out_of_scale,
                  jobs=jobs, parsers=[parser] if parser else [],
                  prefetch=later_imports(replicates=replicates, pvalues=format is Format.json))
    name = need_parser(parser, loaded)
    settings = uncertainty_of(replicates, seed, cluster, min_items, loaded, difficulty_intervals=difficulty_intervals)
    choice = policy_of(unparsed, loaded)
    result = matrix(loaded.labelled(name), policy=choice.policy, scale=_scale(scale, name, loaded), uncertainty=settings)
    emit_runs(loaded, result, format, text=fit_terminal(lambda: matrix_text(result, format), format), comparisons=[result],
              choice=choice)


@parsers_app.command("audit")
def audit_cmd(
    parser: Annotated[
        list[str],
        typer.Option("--parser", "-p", metavar="NAME@N", help="A parser to audit (give two or more; the first is the reference for the edge's moves)."),
    ],
    files: Annotated[
        list[Path] | None,
        typer.Argument(metavar="FILE...", help="Released judge files with raw outputs; each is one run, audited on its own (or use --runs).", show_default=False),
    ] = None,
    runs_file: RunsFileOpt = None,
    reader: ReaderOpt = None,
    gold: GoldOpt = None,
    gold_reader: GoldReaderOpt = None,
    lm_filter: FilterOpt = None,
    correct_field: CorrectFieldOpt = None,
    scorer: ScorerOpt = None,
    score_map: ScoreMapOpt = None,
    epoch: EpochOpt = None,
    edge: Annotated[
        str | None,
        typer.Option("--edge", metavar="OLD:NEW", help="Also show how an edge's figures move between the parsers (two of the audited runs, by file or run name).", show_default=False),
    ] = None,
    unparsed: UnparsedOpt = None,
    examples: Annotated[int, typer.Option("--examples", min=0, help="Differing outputs shown per file (one per label pattern first).")] = 5,
    width: Annotated[int, typer.Option("--width", min=20, help="Characters kept of each example output (head and tail).")] = 160,
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    min_items: MinItemsOpt = 100,
    key_field: KeyFieldOpt = None,
    gold_field: GoldFieldOpt = None,
    output_field: OutputFieldOpt = None,
    strict: StrictOpt = False,
    jobs: JobsOpt = "auto",
    format: FormatOpt = Format.table,
) -> None:
    """Audit parsers against each other on each run: unparsed counts, differing labels, EM.

    For each FILE (or each run of --runs): how many outputs each parser reads
    and leaves unparsed, the EM each parser's labels give, on how many items
    the labels differ (by pattern) and trimmed examples of differing outputs.
    With --edge OLD:NEW also the edge's figures under each parser and how
    they move. Gold stored as label names ("tie", "A>B") is read through the
    label set the parsers share; parsers with different sets read gold as
    whole-number grades only.

    \b
    Example:
      replicate parsers audit -p umbrela-strict@1 -p umbrela-fallback@1 results/*.jsonl
    """
    from replicate.judge.audit import audit
    from replicate.judge.render.audit import audit_text
    from replicate.judge.select import edge_among
    from replicate.parsing import PARSERS

    pair = edge_of(edge, [str(f) for f in files or ()])
    if len(parser) < 2:
        raise UsageError(f"a parser audit needs at least two parsers (--parser A --parser B); got {len(parser)}")
    parsers = PARSERS.get_many(parser)
    specs = resolve_runs(files, runs_file)
    edge_names = None if pair is None else edge_among(pair, specs, "the FILEs" if runs_file is None else f"the runs in {runs_file}")
    shared = _shared_label_set(parsers)
    try:
        loaded = load(specs, key_field, gold_field, output_field, strict, reader, gold, gold_reader, extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=shared,
                      jobs=jobs, parsers=parser, texts=True)
    except BadInput as exc:
        raise (exc if shared is not None else _differing_sets(exc, parsers)) from None
    if edge_names is not None:  # the runs may be named after their models once read
        edge_names = (loaded.named(edge_names[0]), loaded.named(edge_names[1]))
    settings = uncertainty_of(replicates, seed, cluster, min_items, loaded)
    choice = policy_of(unparsed, loaded)
    result = audit(
        loaded.runs, parsers, policy=choice.policy, edge=edge_names, examples=examples, width=width, uncertainty=settings,
        label=lambda run, p: loaded.label_run(run, p).labels,
    )
    emit_runs(loaded, result, format, text=fit_terminal(lambda: audit_text(result, format), format), choice=choice)


def _shared_label_set(parsers) -> str | None:
    """The parser whose label set gold is read against: the first, when every audited parser shares its set.

    Gold stored as text (``"tie"``, ``"A>B"``) is read through that set; when the
    sets differ gold is read as whole-number grades only (see :func:`_differing_sets`).
    """
    return parsers[0].name if len({p.label_set for p in parsers}) == 1 else None


def _differing_sets(exc: BadInput, parsers) -> BadInput:
    """A gold error while the audited parsers' label sets differ, saying why gold given as names is not read."""
    named = any(p.label_set.names or not p.label_set.is_ordinal for p in parsers)
    if "gold" not in exc.reason or not named:
        return exc
    sets = "; ".join(f"{p.name}: {p.label_set}" for p in parsers)
    parts = exc.reason.parts if isinstance(exc.reason, Message) else (exc.reason,)
    return BadInput(
        Message(*parts, f". The audited parsers' label sets differ ({sets}), so gold is read as whole-number "
                "grades only, never as label names: audit parsers that share a label set to read gold given as text"),
        path=exc.path, line=exc.line,
    )

