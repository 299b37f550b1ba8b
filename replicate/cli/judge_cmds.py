"""Judge-run commands: parse, compare, chain, cells, demo.

Each command turns options into a library call (replicate.judge.*) and renders
the result. Heavy modules (numpy work, scipy for p-values) load inside the
commands, never at start-up.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer

from replicate.cli.base import ForceOpt, FormatOpt, StrictOpt, app, emit, report_to_stderr
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
    emit_runs,
    later_imports,
    load,
    need_parser,
    reader_options,
    resolve_runs,
    show_warnings,
    uncertainty_of,
)
from replicate.errors import UsageError
from replicate.output import Format


@app.command("parse")
def parse_cmd(
    files: Annotated[list[Path], typer.Argument(metavar="FILE", help="Released judge files (.jsonl, .jsonl.gz, EXAM .jsonl.gz); each is reported on its own.")],
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
    labels: Annotated[
        Path | None,
        typer.Option("--labels", metavar="OUT.jsonl", help="Write one row per item: every part of its key, named as the reader names it (Arena-Hard: question_id, model, game), label (int or null) and gold (null where there is none) (- for standard output, the report then going to stderr). One FILE only."),
    ] = None,
    force: ForceOpt = False,
    key_field: KeyFieldOpt = None,
    gold_field: GoldFieldOpt = None,
    output_field: OutputFieldOpt = None,
    strict: StrictOpt = False,
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    format: FormatOpt = Format.table,
) -> None:
    """Read judge files with a parser: lines, parsed, unparsed, accuracy against gold, label distribution.

    The parsed and unparsed shares, the accuracy against gold (when there is
    gold; under --unparsed, by default the source's rule) and each label's
    share of the parsed outputs get a bootstrap interval over the run's items
    (whole queries resampled, as in compare; --cluster item for items one by
    one). Where the harness wrote its own aggregate beside the file (lm-eval's
    results file, an inspect log's header, HELM's stats.json), it is shown
    beside the recomputed accuracy at its printed precision, with match or MISMATCH.

    Example: replicate parse results/model_annotations.jsonl --parser umbrela-fallback@1
    """
    from replicate.command_input import is_stdio
    from replicate.judge.load.export import labels_output, write_labels
    from replicate.judge.parsed import parse_intervals
    from replicate.judge.render.parse import parse_summary, parse_text
    from replicate.judge.select import runs_from_files
    from replicate.judge.sourcerule import unparsed_choice
    from replicate.judge.uncertainty import MIN_ITEMS

    if labels is not None and len(files) != 1:
        raise UsageError(f"--labels writes one file's labels; got {len(files)} files")
    if labels is not None and not is_stdio(labels):
        labels_output(force).check(labels)
    loaded = load(runs_from_files(files), key_field, gold_field, output_field, strict, reader, gold, gold_reader, need_gold=False, extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=parser, parsers=[parser] if parser else [], out_of_scale=out_of_scale)
    labelled = loaded.labelled(need_parser(parser, loaded))
    settings = uncertainty_of(replicates, seed, cluster, MIN_ITEMS, loaded)
    shares = functools.partial(parse_intervals, settings=settings) if settings.resampled else None
    given = None if unparsed is None else unparsed.value
    summaries = [parse_summary(lr, run, shares, unparsed_choice([run], given)) for lr, run in zip(labelled, loaded.runs)]
    if labels is not None:
        write_labels(labels, labelled[0], fields=loaded.fields, force=force)
    with report_to_stderr(is_stdio(labels)):
        emit_runs(loaded, {"runs": summaries}, format, text=lambda: "\n".join(parse_text(s, format) for s in summaries))


@app.command("harness-claims")
def harness_claims_cmd(
    files: Annotated[list[Path], typer.Argument(metavar="FILE", help="Per-item files of a harness (lm-eval samples, inspect logs, HELM runs), each one run.")],
    root: Annotated[Path, typer.Option("--root", metavar="DIR", help="Directory the claims file's paths are relative to (verify's --root).")] = Path("."),
    reader: ReaderOpt = None,
    lm_filter: FilterOpt = None,
    correct_field: CorrectFieldOpt = None,
    scorer: ScorerOpt = None,
    score_map: ScoreMapOpt = None,
    epoch: EpochOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Write a claims file (TOML, on standard output) whose claims are the harness's own figures.

    Each FILE whose harness wrote its aggregate beside it (lm-eval's results
    file, an inspect log's header, HELM's stats.json) gives one run and an
    'em' claim per figure, the value as the harness wrote it; 'replicate
    verify' then recomputes them under the runs' source rule, without a
    hand-written claims file. A FILE with no such figure is named on stderr.

    Example: replicate harness-claims out/*/samples_gsm8k_*.jsonl --filter strict-match > claims.toml
    """
    import os

    from replicate.cli.base import warn
    from replicate.command_input import write_stdout
    from replicate.judge.harness import claims_toml
    from replicate.judge.select import runs_from_files
    from replicate.reading.contract import READER_OPTIONS

    loaded = load(runs_from_files(files), None, None, None, strict, reader, need_gold=False,
                  extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch))
    entries = []
    for run in loaded.runs:
        f = run.files[0]
        if not f.harness:
            warn(f"harness-claims: {f.provenance.path}: no figure of its harness beside it (run {run.name}); no claim")
            continue
        rel = os.path.relpath(f.provenance.path, root)
        if rel.startswith(".."):
            raise UsageError(f"{f.provenance.path} lies outside --root {root}: a claims file names files under its root")
        options = {k: v for k, v in f.reader_options if k in READER_OPTIONS}
        entries.append((run.name, [Path(rel).as_posix()], f.reader, options, f.harness))
    show_warnings(loaded.diagnostics)
    if not entries:
        raise UsageError("no FILE has its harness's own figure beside it: nothing to claim")
    write_stdout(claims_toml(entries).encode("utf-8"))


def _side_specs(positional: list[Path] | None, old: list[Path] | None, new: list[Path] | None):
    """The command line's two forms (OLD NEW, or --old/--new pools) -> judge.select.edge_specs."""
    from replicate.judge.select import edge_specs

    positional = list(positional or [])
    old, new = list(old or []), list(new or [])
    if positional and (old or new):
        raise UsageError("give OLD NEW as two arguments or with --old/--new, not both")
    if positional:
        if len(positional) != 2:
            raise UsageError(f"compare takes exactly two files, OLD and NEW (got {len(positional)}); use --old/--new to pool several")
        old, new = [positional[0]], [positional[1]]
    if not old or not new:
        raise UsageError("need both sides: OLD NEW, or --old FILE ... --new FILE ...")
    return edge_specs(old, new)


@app.command("compare")
def compare_cmd(
    files: Annotated[list[Path] | None, typer.Argument(metavar="OLD NEW", help="The old version's file, then the new version's (or use --old/--new).", show_default=False)] = None,
    old: Annotated[list[Path] | None, typer.Option("--old", metavar="FILE", help="A file of the old run (repeat to pool, e.g. DL 2019 + DL 2020).")] = None,
    new: Annotated[list[Path] | None, typer.Option("--new", metavar="FILE", help="A file of the new run (repeatable).")] = None,
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
    """Compare two versions item by item: four cells, regression figures, McNemar, identity check.

    Over the items both runs have: the four cells (both, only_old, only_new,
    neither), EM of each side, regression rate (only_old / n), the share of the
    old version's correct items that the new one loses, backward rate, change
    rate, independence ratio, McNemar's exact p and unparsed counts per side.
    JSON rates are fractions. Every figure gets a seeded bootstrap interval
    that resamples whole queries (--cluster; with --replicates 0 the Wilson
    interval of each proportion instead), and McNemar a clustered
    counterpart; JSON's ci lists each figure's intervals by method and names
    that default. An edge on fewer than --min-items items is flagged.

    Example: replicate compare old.jsonl new.jsonl --parser umbrela-fallback@1
    """
    from replicate.judge.compare import compare
    from replicate.judge.render import comparison_text

    loaded = load(_side_specs(files, old, new), key_field, gold_field, output_field, strict, reader, gold, gold_reader, extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=parser, out_of_scale=out_of_scale,
                  jobs=jobs, parsers=[parser] if parser else [], prefetch=later_imports(replicates=replicates, pvalues=True))
    a, b = loaded.labelled(need_parser(parser, loaded))
    cmp = compare(a, b, policy=None if unparsed is None else unparsed.value, uncertainty=uncertainty_of(replicates, seed, cluster, min_items, loaded),
                  agreement=True)
    emit_runs(loaded, cmp, format, text=lambda: comparison_text(cmp, format), comparisons=[cmp])


@app.command("chain")
def chain_cmd(
    files: Annotated[list[Path] | None, typer.Argument(metavar="RUN", help="Run files in version order, oldest first (one file = one run).")] = None,
    runs: RunsFileOpt = None,
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
    """Every adjacent edge of a version line (RUN1 -> RUN2 -> ...), one row per edge.

    All edges use the items every run has. Example:
    replicate chain --runs fixtures/example/runs.toml --parser umbrela-fallback@1
    """
    from replicate.judge.compare import chain
    from replicate.judge.render import chain_text
    from replicate.judge.samples import dropped_per_run, edge_flags

    specs = resolve_runs(files, runs)
    if len(specs) < 2:
        raise UsageError(f"a chain needs at least two runs; got {len(specs)}")
    loaded = load(specs, key_field, gold_field, output_field, strict, reader, gold, gold_reader, extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=parser, out_of_scale=out_of_scale,
                  jobs=jobs, parsers=[parser] if parser else [], prefetch=later_imports(replicates=replicates, pvalues=True))
    settings = uncertainty_of(replicates, seed, cluster, min_items, loaded, difficulty_intervals=difficulty_intervals)
    edges = chain(loaded.labelled(need_parser(parser, loaded)), policy=None if unparsed is None else unparsed.value,
                  uncertainty=settings)
    flags = edge_flags(edges, min_items=settings.min_items, intervals=settings.resampled)
    result = {
        "edges": edges,
        "runs": dropped_per_run(edges),
        "flags": flags,
        "uncertainty": settings,
    }
    emit_runs(loaded, result, format, text=lambda: chain_text(edges, format, flags=flags), comparisons=edges)


@app.command("cells")
def cells_cmd(
    both: Annotated[int, typer.Argument(metavar="BOTH", help="Items both versions got right.", min=0)],
    only_old: Annotated[int, typer.Argument(metavar="ONLY_OLD", help="Old right, new wrong (regressions).", min=0)],
    only_new: Annotated[int, typer.Argument(metavar="ONLY_NEW", help="Old wrong, new right.", min=0)],
    neither: Annotated[int, typer.Argument(metavar="NEITHER", help="Both wrong.", min=0)],
    replicates: Annotated[
        int, typer.Option("--replicates", min=1, help="Item-bootstrap replicates for the EM difference, the independent regression rate and the ratio.")
    ] = 1000,
    seed: SeedOpt = 0,
    min_items: MinItemsOpt = 100,
    format: FormatOpt = Format.table,
) -> None:
    """Every figure from a four-cell table printed in a paper (no data needed).

    Intervals assume independent items (a table of counts has no cluster
    key): Wilson for the proportions, an item bootstrap from the counts for
    the EM difference, the independent regression rate and the ratio. A
    table of fewer than --min-items items is flagged, as an edge is.

    Example: replicate cells 6252 5776 1455 7163
    """
    from replicate.judge.render import cells_text
    from replicate.judge.samples import CellsReport
    from replicate.stats.countintervals import cell_figures
    from replicate.stats.fourcell import FourCell

    figs = cell_figures(FourCell(both, only_old, only_new, neither), n_resamples=replicates, seed=seed)
    report = CellsReport(figs, min_items)
    emit(report, format, text=lambda: cells_text(figs, format, flag=report.flag))


@app.command("demo")
def demo_cmd(
    path: Annotated[
        Path | None,
        typer.Argument(
            metavar="[DIR]",
            help="An example release with runs.toml (default: the bundled fixtures/example). "
            "A DIR that does not exist yet, or is empty, gets the example release written to it and kept.",
        ),
    ] = None,
    parser: Annotated[str, typer.Option("--parser", "-p", metavar="NAME@N", help="Parser for the main table.")] = "umbrela-fallback@1",
    format: FormatOpt = Format.table,
) -> None:
    """Run 'chain' on the bundled SYNTHETIC example release and explain what it shows.

    Without the bundled folder (an install without fixtures/), the same seeded
    release is rebuilt in a temporary directory that is removed afterwards.
    """
    from replicate.examples.demo import run_demo

    demo = run_demo(path, parser=parser, fmt=format)
    emit(demo, format, demo.diagnostics, text=lambda: demo.text, warnings=None)  # the text says the warnings
