"""Harness figures of judge benchmarks: mtbench (MT-Bench's score) and pairwise (both-order pairs by model).

Each command loads the files as the judge commands do, makes one library call
(:mod:`replicate.pairwise`) and renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import FormatOpt, StrictOpt, app
from replicate.cli.judge_options import (
    ClusterOpt,
    ParserOpt,
    ReaderOpt,
    ReplicatesOpt,
    SeedOpt,
    emit_runs,
    load,
    uncertainty_of,
)
from replicate.errors import UsageError
from replicate.output import Format

FilesArg = Annotated[list[Path], typer.Argument(metavar="FILE", help="Judgment files; read together (a judgment in two files is an error).")]


def _loaded(files: list[Path], reader: str | None, strict: bool, parser: str | None, replicates: int):
    from replicate.judge.select import runs_from_files

    return load(runs_from_files(files), None, None, None, strict, reader, need_gold=False, parser=parser,
                texts=True, prefetch=("numpy.random",) if replicates else ())


def _keys_once(loaded, what: str) -> list[str]:
    """Every run's keys in order; a key in two files is BadInput naming it and where each file holds it."""
    from replicate.errors import BadInput
    from replicate.judge.model import KEY_SEP

    def where(run, i: int) -> str:
        return run.origins.where(i, run.files) if run.origins is not None else run.name

    keys: list[str] = []
    first: dict[str, tuple[object, int]] = {}
    for run in loaded.runs:
        for i, key in enumerate(run.keys.tolist()):
            if key in first:
                here, there = where(run, i), where(*first[key])
                raise BadInput(f"{what} {key.replace(KEY_SEP, ' / ')} is in two files ({there} and {here}); "
                               "give each once")
            first[key] = (run, i)
            keys.append(key)
    return keys


@app.command("mtbench")
def mtbench_cmd(
    files: FilesArg,
    parser: ParserOpt = None,
    reader: ReaderOpt = None,
    strict: StrictOpt = False,
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    format: FormatOpt = Format.table,
) -> None:
    """MT-Bench's score per model from FastChat single-answer judgments, as FastChat's show_result.py computes it.

    Each judgment's rating is read as FastChat records it (mtbench-single@2 by
    default: 8.5 and 0 kept); judgments without one (FastChat's score -1) are
    left out and counted; the mean rating is printed per model over both turns
    (overall: the mean over its rated judgments), turn 1 and turn 2. Intervals:
    bootstrap over questions (a question's two turns resampled together;
    --cluster item for judgments one by one).

    Example: replicate mtbench model_judgment/gpt-4_single.jsonl
    """
    from replicate.judge.model import KEY_SEP
    from replicate.judge.uncertainty import MIN_ITEMS
    from replicate.pairwise.mtbench import mtbench_scores
    from replicate.pairwise.render import mtbench_text
    from replicate.parsing import PARSERS

    name = parser or "mtbench-single@2"
    loaded = _loaded(files, reader, strict, name, replicates)
    keys = _keys_once(loaded, "the judgment (question_id, model, turn)")
    outputs = [t for r in loaded.runs for t in r.outputs]
    settings = uncertainty_of(replicates, seed, cluster, MIN_ITEMS, loaded)
    try:
        result = mtbench_scores(keys, outputs, PARSERS.get(name), key_names=loaded.key_names, sep=KEY_SEP,
                                reader=" + ".join(dict.fromkeys(f.reader for r in loaded.runs for f in r.files)),
                                uncertainty=settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    emit_runs(loaded, result, format, text=lambda: mtbench_text(result, format))


#: Why the length-controlled win rate is not printed when no df_gamed file is given.
LC_NOT_GIVEN = ("not computed: AlpacaEval fits it with its df_gamed.csv (its gamed baselines' annotations and each "
                "instruction's difficulty, in its Hugging Face dataset tatsu-lab/alpaca_eval), which no annotations "
                "file holds; give that file with --length-controlled FILE")


def _length_control(files: list[Path], gamed_path: Path | None):
    """AlpacaEval's length-controlled win rate of each annotations file, or why it is not computed."""
    from replicate.pairwise.lc import LengthControl, LengthControlError, length_controlled

    if gamed_path is None:
        return LengthControl(reason=LC_NOT_GIVEN)
    from replicate.alpacaeval_files import read_gamed, read_lengths
    from replicate.command_input import is_stdio

    if any(is_stdio(f) for f in files):
        raise UsageError("--length-controlled reads each annotations FILE again for its outputs' lengths: give files, "
                         "not standard input")
    gamed, sha256 = read_gamed(gamed_path)
    out = []
    for f in files:
        lengths = read_lengths(f)
        try:
            out.append(length_controlled(lengths.preference, lengths.len_1, lengths.len_2, gamed,
                                         model=lengths.model, baseline=lengths.baseline))
        except LengthControlError as exc:
            raise UsageError(f"{f}: AlpacaEval's length-controlled win rate cannot be computed with {gamed_path}: "
                             f"{exc}") from None
    return LengthControl(tuple(out), None, str(gamed_path), sha256)


def _pair_parser(parser: str | None, loaded) -> str:
    """The harness's own reading when none is named: decided labels as read; FastChat's [[A]] reading; Arena-Hard's
    reading of the files' layout (v0.1's arena-hard@1, v2.0's arena-hard-last@1)."""
    if parser is not None:
        return parser
    from replicate.judge.model import decided_column

    decided = decided_column(loaded.runs)
    if decided is not None:
        return decided
    readers = {f.reader for r in loaded.runs for f in r.files}
    layouts = {dict(f.reader_options).get("layout") for r in loaded.runs for f in r.files}
    if readers == {"arena-hard-judgment@1"}:
        return "arena-hard-last@1" if layouts == {"v2.0"} else "arena-hard@1"
    if readers == {"fastchat-pair@1"}:
        return "mtbench-pair@1"
    raise UsageError("name the parser that reads these judgments with --parser")


def _judge_verdicts(loaded, parser: str | None, baseline: str | None, readers: str):
    """The judge's verdict per question and pair, however its files are laid out, and how it was read."""
    from replicate.judge.model import KEY_SEP
    from replicate.pairwise.alpacaeval import alpacaeval_records
    from replicate.pairwise.arena import ARENA_KEY, battles_of
    from replicate.pairwise.human import battle_verdicts, verdicts_of
    from replicate.pairwise.layout import ALPACAEVAL_KEY
    from replicate.pairwise.rules import resolve
    from replicate.pairwise.tally import BASELINE, games_of
    from replicate.parsing import PARSERS

    names = tuple(loaded.key_names)
    if names == ARENA_KEY:
        return battle_verdicts(battles_of(loaded.labelled(_pair_parser(parser, loaded)))), f"{readers}: each battle's winner"
    if names == ALPACAEVAL_KEY:
        name = parser or "alpacaeval-preference@1"
        records = alpacaeval_records([k for r in loaded.runs for k in r.keys.tolist()],
                                     [t for r in loaded.runs for t in r.outputs], PARSERS.get(name),
                                     key_names=names, sep=KEY_SEP)
        return verdicts_of(records), f"{name} ({readers}): preference above 1.5 generator_2 wins, 1.5 a tie"
    name = _pair_parser(parser, loaded)
    games = games_of(loaded.labelled(name))
    verdicts = verdicts_of(resolve(games.rule, games.games), games.turns or None)
    if games.rule != "fastchat" and baseline is not None:  # Arena-Hard's files do not name their baseline
        from dataclasses import replace

        verdicts = [replace(v, models=(v.models[0], baseline if v.models[1] == BASELINE else v.models[1]))
                    for v in verdicts]
    elif baseline is not None:
        verdicts = [v for v in verdicts if baseline in v.models]
    how = ("games resolved by FastChat's rule" if games.rule == "fastchat"
           else "the battles of both games: mean above 0.5 a win, 0.5 a tie, below a loss")
    return verdicts, f"{name} ({readers}), {how}"


def _against_humans(loaded, human: list[Path], parser: str | None, baseline: str | None, strict: bool, readers: str,
                    settings):
    from replicate.cli.judge_options import show_warnings
    from replicate.judge.model import KEY_SEP
    from replicate.pairwise.alpacaeval import alpacaeval_records
    from replicate.pairwise.arena import ARENA_KEY, battles_of
    from replicate.pairwise.human import annotation_battles, human_agreement
    from replicate.pairwise.layout import ALPACAEVAL_KEY
    from replicate.parsing import PARSERS

    battles_loaded = _loaded(human, None, strict, None, 0)
    names = tuple(battles_loaded.key_names)
    show_warnings(battles_loaded.diagnostics)
    human_readers = " + ".join(dict.fromkeys(f.reader for r in battles_loaded.runs for f in r.files))
    unread, unit = 0, "question_id"
    if names == ARENA_KEY:
        battles = battles_of(battles_loaded.labelled(_pair_parser(None, battles_loaded)))
    elif names == ALPACAEVAL_KEY and tuple(loaded.key_names) == ALPACAEVAL_KEY:
        name = "alpacaeval-preference@1"
        records = alpacaeval_records([k for r in battles_loaded.runs for k in r.keys.tolist()],
                                     [t for r in battles_loaded.runs for t in r.outputs], PARSERS.get(name),
                                     key_names=names, sep=KEY_SEP)
        battles, unread = annotation_battles(records)
        human_readers = f"{name} ({human_readers}): preference above 1.5 generator_2 wins, 1.5 a tie"
        unit = "instruction"
    else:
        raise UsageError("--human takes battle logs (model_a, model_b, winner: read with arena-battles@1), or, "
                         "against AlpacaEval annotations, another annotator's AlpacaEval annotations")
    verdicts, judge = _judge_verdicts(loaded, parser, baseline, readers)
    return human_agreement(verdicts, battles, judge=judge, human=human_readers, uncertainty=settings,
                           human_without_verdict=unread, unit=unit)


@app.command("pairwise")
def pairwise_cmd(
    files: FilesArg,
    parser: ParserOpt = None,
    reader: ReaderOpt = None,
    baseline: Annotated[Optional[str], typer.Option("--baseline", metavar="MODEL", help="FastChat pairs: count only the records with MODEL and leave its own row out (show_result.py --mode pairwise-baseline). Default: every record (pairwise-all). With --human and Arena-Hard files: the baseline's name in the battles.")] = None,
    length_control: Annotated[Optional[Path], typer.Option("--length-controlled", metavar="DF_GAMED", help="AlpacaEval annotations: fit AlpacaEval 2.0's length-controlled win rate of each FILE (its GLM length_controlled_v1) with this copy of AlpacaEval's df_gamed.csv (from its Hugging Face dataset tatsu-lab/alpaca_eval). Without it the figure is not computed, and the output says so.")] = None,
    human: Annotated[Optional[list[Path]], typer.Option("--human", metavar="BATTLES", help="Human battle logs (Chatbot Arena's clean_battle layout, MT-Bench's human judgments; JSON, JSONL, Parquet), or for AlpacaEval annotations another annotator's annotations of the same outputs: print the judge's agreement with them on the same question (instruction) and model pair instead of the tally. Repeatable.")] = None,
    strict: StrictOpt = False,
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    format: FormatOpt = Format.table,
) -> None:
    """Both-order pairwise judgments by model: win, tie, loss, win rate (ties as half), position bias.

    A pairwise judge sees each question twice, the answers swapped (game 1,
    game 2); a verdict A is about the answer shown first. The two games of a
    question are resolved into an outcome per model by the harness's own rule
    before anything is counted: FastChat's show_result.py for MT-Bench pairs
    (fastchat-pair@1; an inconsistent pair is a tie), Arena-Hard-Auto's for its
    judgment files (battles against the baseline, >> weighted 3, by the files'
    layout v0.1 or v2.0). The share of questions whose two games disagree is
    shown as its own figure. AlpacaEval annotations (one judgment per
    instruction, the model as generator_2) give AlpacaEval's win_rate (the
    mean preference, ties as half) and discrete_win_rate. Default reading: the harness's (mtbench-pair@1;
    arena-hard@1 for v0.1 files, arena-hard-last@1 for v2.0; --reader
    arena-hard-score@1 for the verdicts the files recorded). Chatbot Arena
    battle logs (arena-battles@1) give each model's human win rate, a tie
    (bothbad) counted as a tie (as Arena's Elo fits count it). Intervals: bootstrap over questions
    (--cluster item for units one by one; battles without a question_id one
    by one).

    With --human BATTLES, the judge's verdict on each question and model
    pair (both games resolved as above) is set against every human vote on
    the same question and pair (and turn, for MT-Bench pairs), a pair named
    the other way round flipped: agreement with and without ties and Cohen's
    kappa, as MT-Bench's paper reports them (intervals: bootstrap over
    questions), with the battles and verdicts left unpaired counted. On
    AlpacaEval annotations, --human also takes a second annotator's
    annotations of the same outputs (another judge, or human annotations in
    AlpacaEval's layout): each instruction's preferences are paired on the
    instruction and generator pair, bootstrapped over instructions.
    --length-controlled DF_GAMED adds AlpacaEval 2.0's length-controlled
    win rate (its GLM, fitted with its df_gamed.csv).

    Example: replicate pairwise model_judgment/gpt-4_pair.jsonl --human human_judgments.json
    """
    from dataclasses import replace

    from replicate.judge.model import KEY_SEP
    from replicate.judge.uncertainty import MIN_ITEMS
    from replicate.pairwise.alpacaeval import alpacaeval_tally
    from replicate.pairwise.arena import ARENA_KEY, arena_tally, battles_of
    from replicate.pairwise.layout import ALPACAEVAL_KEY
    from replicate.pairwise.render import human_text, pairwise_text
    from replicate.pairwise.tally import PairwiseError, games_of, tally
    from replicate.parsing import PARSERS

    loaded = _loaded(files, reader, strict, parser, replicates)
    readers = " + ".join(dict.fromkeys(f.reader for r in loaded.runs for f in r.files))
    settings = uncertainty_of(replicates, seed, cluster, MIN_ITEMS, loaded)
    if length_control is not None and (human or tuple(loaded.key_names) != ALPACAEVAL_KEY):
        raise UsageError("--length-controlled is for AlpacaEval annotations (their win rate), not with --human")
    if human:
        try:
            agreement = _against_humans(loaded, human, parser, baseline, strict, readers, settings)
        except PairwiseError as exc:
            raise UsageError(str(exc)) from None
        emit_runs(loaded, agreement, format, text=lambda: human_text(agreement, format))
        return
    try:
        if tuple(loaded.key_names) == ARENA_KEY:
            if baseline is not None:
                raise UsageError("--baseline is for FastChat pairs (or names Arena-Hard's baseline with --human)")
            result = arena_tally(battles_of(loaded.labelled(_pair_parser(parser, loaded))), reader=readers,
                                 uncertainty=settings)
        elif tuple(loaded.key_names) == ALPACAEVAL_KEY:  # one annotation per instruction: no games to pair
            if baseline is not None:
                raise UsageError("--baseline is for FastChat pairs; AlpacaEval's baseline is each file's generator_1")
            name = parser or "alpacaeval-preference@1"
            keys = _keys_once(loaded, "the annotation (instruction, generator_1, generator_2)")
            outputs = [t for r in loaded.runs for t in r.outputs]
            result = alpacaeval_tally(keys, outputs, PARSERS.get(name), key_names=loaded.key_names, sep=KEY_SEP,
                                      reader=readers, uncertainty=settings)
            result = replace(result, length_controlled=_length_control(files, length_control))
        else:
            name = _pair_parser(parser, loaded)
            labelled = loaded.labelled(name)
            result = tally(games_of(labelled), parser=name, reader=readers, baseline=baseline, uncertainty=settings)
    except PairwiseError as exc:
        raise UsageError(str(exc)) from None
    emit_runs(loaded, result, format, text=lambda: pairwise_text(result, format))
