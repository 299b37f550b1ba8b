"""The agreement command: kappa, Scott's pi, Krippendorff's alpha, tau-b and rho of runs against gold and each other."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from replicate.cli.base import FormatOpt, StrictOpt, app, flags
from replicate.cli.judge_options import (
    ClusterOpt,
    CorrectFieldOpt,
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
    policy_of,
    reader_options,
    resolve_runs,
    uncertainty_of,
)
from replicate.errors import Message, Param, UsageError
from replicate.output import Format


def thresholds_of(text: str | None) -> tuple[int, ...]:
    """``--binarize 1,2,3`` as distinct integers in the order given."""
    if not text:
        return ()
    parts = [p.strip() for p in text.split(",")]
    # ASCII digits (int() refuses '--5' and '²'), at most 18 (a grade, never a number int() refuses as too long)
    bad = [p for p in parts if not re.fullmatch(r"-?[0-9]{1,18}", p)]
    if bad:
        raise UsageError(f"--binarize takes integer thresholds (grades) separated by commas (e.g. 1,2,3); got {text!r}")
    return tuple(dict.fromkeys(int(p) for p in parts))


@app.command("agreement")
@flags(thresholds="--binarize")
def agreement_cmd(
    files: Annotated[list[Path] | None, typer.Argument(metavar="RUN", help="Run files (one file = one run), or use --runs.")] = None,
    runs: RunsFileOpt = None,
    binarize: Annotated[str | None, typer.Option("--binarize", metavar="T,T,...", help="Also on the labels binarized at each threshold T (label >= T is 1), e.g. 1,2,3 for the '0|123', '01|23', '012|3' columns of IR papers.", show_default=False)] = None,
    pairs: Annotated[bool, typer.Option("--pairs", help="Also every two runs against each other.")] = False,
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
    """Agreement of each run with gold (and, with --pairs, of every two runs): a table of runs x figures.

    Cohen's kappa (unweighted, linear, quadratic), Scott's pi, Krippendorff's
    alpha (nominal, ordinal, interval, ratio; value domain from the label set),
    Kendall's tau-b and Spearman's rho, over the items the runs share, on the
    labels as read and binarized at each --binarize threshold. Each figure gets
    a seeded bootstrap interval that resamples whole queries (--cluster), as
    every other figure does. Unparsed outputs follow --unparsed (see
    docs/concepts.md, "Agreement"). JSON values are fractions.

    Example: replicate agreement run1.txt run2.txt --reader trec-qrels@1 --gold qrels.txt --binarize 1,2,3
    """
    from replicate.judge.agreement import agreement_report
    from replicate.judge.align import align
    from replicate.judge.render.agreement import agreement_text

    thresholds = thresholds_of(binarize)
    specs = resolve_runs(files, runs)
    if not specs:
        raise UsageError("give one or more run files (or --runs)")
    loaded = load(specs, key_field, gold_field, output_field, strict, reader, gold, gold_reader, need_gold=not pairs,
                  extra=reader_options(lm_filter, correct_field, scorer, score_map, epoch, cluster), parser=parser, out_of_scale=out_of_scale,
                  jobs=jobs, parsers=[parser] if parser else [], prefetch=later_imports(replicates=replicates, pvalues=False))
    aligned = align(loaded.labelled(need_parser(parser, loaded)))
    settings = uncertainty_of(replicates, seed, cluster, min_items, loaded)
    has_gold = bool((aligned.gold >= 0).any())
    if not has_gold and not pairs:
        why = loaded.emptied()  # a choice of the user's emptied a run (the warnings say more)
        if why is not None:
            from replicate.cli.judge_options import show_scale_outcomes, show_warnings
            from replicate.errors import BadInput

            show_warnings(loaded.diagnostics)
            show_scale_outcomes(loaded)
            raise BadInput(why)
        where = (" in ", Param("gold"), f" {gold} (its keys match none of the runs' items, or its labels are "
                 "unusable)") if gold else (" (the runs carry none: give ", Param("gold"), ")")
        raise UsageError(Message("no item is in every run with a usable gold label", *where, "; ", Param("pairs"),
                                 " sets the runs against each other"))
    if has_gold and any(r.yields == "verdicts" for r in aligned.runs):
        from replicate.judge.compare import VERDICT_AGREEMENT

        if not pairs:
            raise UsageError(f"no agreement with gold: {VERDICT_AGREEMENT}; --pairs sets the runs' verdicts "
                             "against each other")
        has_gold = False  # the runs against each other only
    choice = policy_of(unparsed, loaded)
    report = agreement_report(aligned, gold=has_gold, pairs=pairs, thresholds=thresholds, policy=choice.policy,
                              settings=settings)
    emit_runs(loaded, report, format, text=lambda: agreement_text(report, format), comparisons=[report], choice=choice)
