"""``replicate rankings``: system-ranking agreement of retrieval runs scored under two qrels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import FormatOpt, StrictOpt, app, emit, flags
from replicate.cli.judge_options import SeedOpt
from replicate.output import Format


@app.command("rankings")
@flags(n_resamples="--replicates", confidence_level="--confidence")
def rankings_cmd(
    run_args: Annotated[Optional[list[Path]], typer.Argument(metavar="RUN_FILE", help="More run files (so that '--runs a.txt b.txt c.txt' reads all three).", show_default=False)] = None,
    runs: Annotated[Optional[list[Path]], typer.Option("--runs", metavar="RUN_FILE", help="TREC run files ('qid Q0 docid rank score tag'), one system each, named after the file; a directory stands for the files in it. Repeatable.", show_default=False)] = None,
    qrels: Annotated[Optional[list[Path]], typer.Option("--qrels", metavar="FILE", help="TREC qrels, given twice: the reference (e.g. human) first, then the estimate (e.g. an LLM judge's).", show_default=False)] = None,
    measure: Annotated[str, typer.Option("--measure", metavar="MEASURE", help="ir-measures measure name, a mean over topics: nDCG@10, AP, P@10, RR, P(rel=2)@10, ...")] = "nDCG@10",
    replicates: Annotated[int, typer.Option("--replicates", min=0, metavar="N", help="Topic bootstrap replicates for the intervals (0: no intervals).")] = 1000,
    seed: SeedOpt = 0,
    confidence: Annotated[float, typer.Option("--confidence", metavar="LEVEL", help="Confidence level of the intervals.")] = 0.95,
    strict: StrictOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """How far two qrels agree on the order of retrieval systems.

    Scores every run file under each qrels with ir-measures and compares the two orderings of
    the systems: Kendall's tau-b, tau_AP (Yilmaz et al. 2008, of the estimate against the
    reference; ties broken at random in expectation) and Spearman's rho, each with a percentile
    interval from a seeded bootstrap over topics; the pairs of systems whose order swaps; each
    system's score and rank under both. Topics are handled as ir-measures does and counted: a
    topic a qrels judges and a run has no result for is scored 0, a topic a qrels does not judge
    is not scored under it. Bad run lines stop with FILE:LINE.

    \b
    Example:
      replicate rankings --runs runs/ --qrels human.qrels --qrels llm.qrels --measure nDCG@10
    """
    from replicate.diagnostics import Diagnostics
    from replicate.rankings import ranking_agreement
    from replicate.rankings.render import rankings_text

    diag = Diagnostics(strict=strict)
    res = ranking_agreement([*(runs or []), *(run_args or [])], qrels or [], measure=measure, n_resamples=replicates,
                   seed=seed, confidence_level=confidence, diagnostics=diag)
    emit(res, fmt, diag, text=lambda: rankings_text(res, fmt))
