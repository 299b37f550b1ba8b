"""``replicate import``: benchmark logs (lm-eval samples, inspect logs) into the trials table of ``replicate items``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import ForceOpt, FormatOpt, StrictOpt, app, emit, flags, report_to_stderr
from replicate.cli.judge_options import CorrectFieldOpt, FilterOpt, ScoreMapOpt, ScorerOpt, reader_options
from replicate.output import Format


@app.command("import")
@flags(unscored_as="--unscored")
def import_cmd(
    files: Annotated[list[Path], typer.Argument(metavar="FILES...", help="Benchmark logs to read: lm-eval samples files, inspect_ai logs (.eval, .json), ...", show_default=False)],
    out: Annotated[Path, typer.Option("--out", help="Trials table to write: .jsonl, .jsonl.gz or .csv (- writes JSONL to standard output, the report then going to stderr).", show_default=False)],
    reader: Annotated[Optional[str], typer.Option("--reader", metavar="NAME@N", help="Reader of every file, e.g. inspect-log@1 or lm-eval-samples@1. Default: chosen by content.")] = None,
    model: Annotated[Optional[list[str]], typer.Option("--model", metavar="NAME", help="Model name of the rows: once for every file, or once per file in the order of the files. Default: the model the file names (an inspect log's eval.model); needed for files that name none (lm-eval samples).")] = None,
    benchmark: Annotated[Optional[str], typer.Option("--benchmark", metavar="NAME", help="Benchmark name of every row. Default: the file's task (an inspect log's eval.task, an lm-eval samples file's name).")] = None,
    unscored: Annotated[str, typer.Option("--unscored", metavar="CATEGORY", help="Category of a trial without a verdict (null score, errored sample): api_error (left out of the accuracy's denominator), wrong, format_failure, refusal or truncation.")] = "api_error",
    force: ForceOpt = False,
    lm_filter: FilterOpt = None,
    correct_field: CorrectFieldOpt = None,
    scorer: ScorerOpt = None,
    score_map: ScoreMapOpt = None,
    fmt: FormatOpt = Format.table,
    strict: StrictOpt = False,
) -> None:
    """Write the trials table 'replicate items' reads from benchmark logs: one row per model, item and trial.

    Every epoch of an inspect_ai log is a trial (trial = epoch). An lm-eval samples file holds one
    verdict per document (repeats are reduced by the filter before the metric), so each file is one
    trial: several files of one model and benchmark are trials 0, 1, ... in the order given. A right
    verdict is 'correct', a wrong one 'wrong'; a trial without a verdict is written as --unscored
    (counted). Prints rows per model and benchmark, items, trials per item, and each file read with
    its reader and sha256.
    """
    from replicate.command_input import is_stdio
    from replicate.diagnostics import Diagnostics, listing_text
    from replicate.reading.contract import ReadOptions
    from replicate.trials.import_rows import render_import
    from replicate.trials.importing import import_trials

    diag = Diagnostics(strict=strict)
    extra = reader_options(lm_filter, correct_field, scorer, score_map)
    report = import_trials(
        files, out, reader=reader, model=model, benchmark=benchmark, options=ReadOptions(extra=extra),
        unscored_as=unscored, force=force, diagnostics=diag,
    )
    with report_to_stderr(is_stdio(out)):
        emit(report, fmt, diag, text=lambda: render_import(report, fmt), warnings=listing_text)
