"""Option types and small helpers shared by the judge commands (parse, compare, chain, ...).

Kept free of heavy imports: importing this module must stay cheap.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Sequence

import typer

from replicate.cli.base import CACHE_SETTINGS, StrictOpt, emit, warn
from replicate.errors import UsageError
from replicate.output import Format

__all__ = [
    "ParserOpt",
    "ReaderOpt",
    "GoldOpt",
    "GoldReaderOpt",
    "UnparsedOpt",
    "Unparsed",
    "OutOfScaleOpt",
    "OutOfScale",
    "RunsFileOpt",
    "KeyFieldOpt",
    "GoldFieldOpt",
    "OutputFieldOpt",
    "FilterOpt",
    "CorrectFieldOpt",
    "ScorerOpt",
    "ScoreMapOpt",
    "EpochOpt",
    "StrictOpt",
    "resolve_runs",
    "check_run_values",
    "edge_of",
    "field_spec",
    "load",
    "emit_runs",
    "show_warnings",
    "need_parser",
    "require_shared_items",
    "ReplicatesOpt",
    "SeedOpt",
    "ClusterOpt",
    "MinItemsOpt",
    "JobsOpt",
    "jobs_value",
    "uncertainty_of",
    "policy_of",
]


class Unparsed(str, enum.Enum):
    intersect = "intersect"
    wrong = "wrong"


ParserOpt = Annotated[
    str | None,
    typer.Option(
        "--parser",
        "-p",
        metavar="NAME@N",
        help="Parser that reads raw outputs into labels, e.g. umbrela-fallback@1 "
        "(see 'replicate parsers list'). Needed unless every run is pre-graded (EXAM).",
    ),
]
UnparsedOpt = Annotated[
    Unparsed | None,
    typer.Option(
        "--unparsed",
        help="intersect: drop an item unparsed on either side (what the released scripts did); "
        "wrong: count an unparsed output as wrong (what an API user experiences). Default: the source's rule, "
        "so the figures are the harness's own (lm-eval and HELM completions: wrong; inspect_ai and HELM "
        "metrics: intersect; see 'replicate readers show'), else intersect. A choice that departs from the "
        "source's rule is printed as a departure.",
        show_default=False,
    ),
]


class OutOfScale(str, enum.Enum):
    keep = "keep"
    drop = "drop"
    clip = "clip"


OutOfScaleOpt = Annotated[
    OutOfScale,
    typer.Option(
        "--out-of-scale",
        help="A label outside its run's scale (the parser's or reader's declared grades, e.g. 10 on 0-3). "
        "keep: as read, a category of its own (counted on stderr); drop: leave its item out of that run; "
        "clip: to the scale's nearest bound (10 reads 3). drop and clip are printed in the header and the JSON.",
    ),
]
RunsFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--runs",
        metavar="RUNS.toml",
        help="TOML file whose [runs] table lists the runs in order: name = [\"file\", ...] "
        "(paths relative to the TOML file).",
    ),
]
KeyFieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--key-field",
        metavar="FIELD",
        help="Field identifying an item (repeat for several; compared as strings). "
        "Default: query_id and corpus_id.",
    ),
]
GoldFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--gold-field",
        metavar="FIELD",
        help="Field holding the gold grade (an integer; 2.0 reads as 2). Default: original_qrel_score.",
        show_default=False,
    ),
]
ReaderOpt = Annotated[
    str | None,
    typer.Option(
        "--reader",
        "-r",
        metavar="NAME@N",
        help="Reader of the run files, e.g. trec-qrels@1 (see 'replicate readers list'). "
        "Default: chosen by each file's content (the choice is printed on stderr).",
        show_default=False,
    ),
]
GoldOpt = Annotated[
    Path | None,
    typer.Option(
        "--gold",
        metavar="FILE",
        help="Reference labels kept apart from the runs (e.g. human TREC qrels), joined by item key; "
        "items without gold and gold without items are counted and reported.",
        show_default=False,
    ),
]
GoldReaderOpt = Annotated[
    str | None,
    typer.Option(
        "--gold-reader",
        metavar="NAME@N",
        help="Reader of the --gold file, e.g. trec-qrels@1. Default: chosen by its content.",
        show_default=False,
    ),
]
OutputFieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--output-field",
        metavar="FIELD",
        help="Field holding the raw output (repeat to give alternatives; each file uses the first "
        "its first record has). Default: model_output, then gemini_output.",
    ),
]

FilterOpt = Annotated[
    str | None,
    typer.Option(
        "--filter",
        metavar="NAME",
        help="lm-eval samples (lm-eval-samples@1): the filter whose lines are read, e.g. strict-match. "
        "Needed when a file holds several; for a file written before lm-eval 0.4.7 also its position N "
        "(1-based) in the task's filter_list.",
        show_default=False,
    ),
]
CorrectFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--correct-field",
        metavar="METRIC",
        help="lm-eval samples (lm-eval-samples@1) and HELM runs (helm-run@1): the per-sample 0/1 metric that "
        "says right or wrong, e.g. exact_match or acc. Needed when the samples carry several (HELM runs always do).",
        show_default=False,
    ),
]


ScorerOpt = Annotated[
    str | None,
    typer.Option(
        "--inspect-scorer",
        metavar="NAME",
        help="inspect_ai logs (inspect-log@1): the scorer whose value says right or wrong, e.g. match. "
        "Needed when the samples carry several.",
        show_default=False,
    ),
]
ScoreMapOpt = Annotated[
    str | None,
    typer.Option(
        "--score-map",
        metavar="V=1,V=0,...",
        help="inspect_ai logs and HELM runs: what other score values count as, e.g. P=0 (partial credit wrong) "
        "or 0.5=1. Default: C 1; I and N 0; yes/no, true/false, 1/0 (HELM: 1/0).",
        show_default=False,
    ),
]
EpochOpt = Annotated[
    int | None,
    typer.Option(
        "--epoch",
        min=1,
        metavar="N",
        help="inspect_ai logs: the epoch read when a log holds several (epochs are trials; "
        "'replicate import' reads them all). HELM runs: the train trial, counted from 1 (train_trial_index N-1).",
        show_default=False,
    ),
]


#: ``--cluster`` prefixes naming a field of each sample's metadata (inspect_ai) or doc (lm-eval), not of its key.
METADATA_CLUSTERS = ("metadata.", "doc.")


def reader_options(
    lm_filter: str | None,
    correct_field: str | None,
    scorer: str | None = None,
    score_map: str | None = None,
    epoch: int | None = None,
    cluster: str | None = None,
) -> dict[str, str | int]:
    """Reader-specific options (ReadOptions.extra) from the reader option flags given.

    ``--cluster metadata.FIELD`` (``doc.FIELD``) asks the reader for a field of each sample's metadata.
    """
    grouped = cluster if cluster is not None and cluster.startswith(METADATA_CLUSTERS) else None
    given = {"filter": lm_filter, "correct_field": correct_field, "scorer": scorer, "score_map": score_map, "epoch": epoch,
             "cluster_by": grouped}
    return {k: v for k, v in given.items() if v is not None}


ReplicatesOpt = Annotated[
    int,
    typer.Option(
        "--replicates",
        min=0,
        metavar="N",
        help="Bootstrap replicates for the intervals of every figure (0: no intervals; the clustered McNemar test, "
        "the difficulty baseline and the small-sample flags stay).",
    ),
]
DifficultyIntervalsOpt = Annotated[
    bool,
    typer.Option(
        "--difficulty-intervals",
        help="Compute the difficulty baseline's interval whatever it costs. By default it is left out, and the output "
        "says so, when it would take more than 10,000,000 refits of the baseline (pairs x (runs - 1) bins x 100 "
        "replicates: past 47 runs with every ordered pair); its point values are always given.",
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap (recorded in the output).")]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="FIELD|item",
        help="Key field whose items are resampled together (items of one query are alike), or 'item' "
        "for the plain item bootstrap; inspect_ai logs and lm-eval samples: metadata.FIELD / doc.FIELD, a field "
        "of each sample's metadata (doc), e.g. metadata.passage. Default: the first key field when the key has "
        "two or more (query_id), else 'item'.",
        show_default=False,
    ),
]
JobsOpt = Annotated[
    str,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N|auto",
        help="Worker processes reading and parsing the runs. auto: one per CPU (at most one per run) when "
        "the run files hold 8 MB or more in all, else 1. The output is the same for every N.",
    ),
]


def jobs_value(text: str) -> int | str:
    """``--jobs`` as the library takes it: a number, else the text as given.

    The library checks it (:func:`replicate.judge.load.workers.jobs_for`: a positive number or ``"auto"``).
    """
    try:
        return int(text)
    except ValueError:
        return text


MinItemsOpt = Annotated[
    int,
    typer.Option(
        "--min-items",
        min=0,
        metavar="N",
        help="Flag an edge or floor compared on fewer items than this (its figures are too uncertain for a verdict).",
    ),
]


def uncertainty_of(
    replicates: int, seed: int, cluster: str | None, min_items: int, loaded, *, difficulty_intervals: bool = False
):
    """Uncertainty settings from the options (``--replicates 0``: no intervals); a UsageError for an unknown --cluster."""
    from replicate.judge.uncertainty import Uncertainty

    try:
        return Uncertainty(
            replicates=replicates, seed=seed, cluster=cluster, key_fields=loaded.key_names, min_items=min_items,
            difficulty_intervals=difficulty_intervals,
        )
    except ValueError as exc:
        raise UsageError(f"--cluster: {exc}") from None


def field_spec(key_fields: Sequence[str] | None, gold_field: str | None, output_fields: Sequence[str] | None):
    """A FieldSpec from the field options (defaults where not given)."""
    from replicate.judge.load import FieldSpec

    default = FieldSpec()
    try:
        return FieldSpec(
            key_fields=tuple(key_fields) if key_fields else default.key_fields,
            gold_field=gold_field or default.gold_field,
            output_fields=tuple(output_fields) if output_fields else default.output_fields,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def load(
    specs,
    key_field: Sequence[str] | None,
    gold_field: str | None,
    output_field: Sequence[str] | None,
    strict: bool,
    reader: str | None = None,
    gold: Path | None = None,
    gold_reader: str | None = None,
    *,
    need_gold: bool = True,
    extra: dict[str, str | int] | None = None,
    parser: str | None = None,
    jobs: str = "1",
    parsers: Sequence[str] = (),
    texts: bool = False,
    prefetch: Sequence[str] = (),
    out_of_scale: OutOfScale | str = OutOfScale.keep,
):
    """Load the runs ``specs`` with the field options (the first step of every judge command).

    ``jobs`` is ``--jobs``; ``parsers`` are the parsers the command labels with
    (the workers label the runs while reading them); ``texts``: the command reads
    every run's raw outputs itself; ``prefetch``: modules its later steps import
    (:func:`later_imports`), imported while the runs are read; ``out_of_scale``
    is ``--out-of-scale`` (what the runs' labels outside their scale become).

    ``extra`` holds reader-specific options (:func:`reader_options`). ``parser``
    (the command's --parser) gives the label set gold stored as text is read
    against (``"tie"``, ``"A>B"``).
    Says on stderr which reader was chosen by content for which files.
    """
    from replicate.judge.api import load_runs
    from replicate.parsing import PARSERS
    from replicate.reading.contract import ReadOptions

    fields = field_spec(key_field, gold_field, output_field)
    gold_labels = PARSERS.get(parser).label_set if parser is not None else None
    loaded = load_runs(
        specs, fields=fields, strict=strict, reader=reader,
        options=ReadOptions(fields=fields, extra=extra or {}, gold_labels=gold_labels),
        gold=gold, gold_reader=gold_reader, need_gold=need_gold,
        label_cache=label_cache(), jobs=jobs_value(jobs), parsers=parsers, texts=texts, prefetch=prefetch,
        out_of_scale=OutOfScale(out_of_scale).value,
    )
    show_detected(loaded.detected())
    return loaded


def later_imports(*, replicates: int, pvalues: bool) -> tuple[str, ...]:
    """What a figure command imports after reading its runs, for :func:`load`'s ``prefetch``.

    ``numpy.random`` for the bootstrap (``replicates`` > 0); ``scipy.special``
    when the output shows exact McNemar p-values (``pvalues``: every JSON
    edge, and chain's table), and only then: a table without p-values needs no scipy.
    """
    return (("numpy.random",) if replicates else ()) + (("scipy.special",) if pvalues else ())


def label_cache():
    """The label cache the commands read and write (under REPLICATE_CACHE_DIR or the user cache dir); None with --no-cache."""
    from replicate.judge.labelcache import LabelCache, default_root

    return LabelCache(default_root()) if CACHE_SETTINGS["use"] else None


def run_cache():
    """The run cache the commands read and write (beside the label cache); None with --no-cache."""
    from replicate.judge.labelcache import default_root
    from replicate.judge.load.runcache import RunCache

    return RunCache(default_root()) if CACHE_SETTINGS["use"] else None


def show_cache_events(cache, run_cache=None) -> None:
    """Say on stderr what the run and label caches did: a damaged entry always, hits and misses with --verbose.

    One line per lookup, the same for every command: ``run cache: hit for run NAME (KEY)``, then
    ``label cache: miss for run NAME under PARSER@N (KEY)``.
    """
    for what, c, again in (("run", run_cache, "read"), ("label", cache, "parsed")):
        for e in c.events if c is not None else []:
            which = f"run {e.run}" + (f" under {e.parser}" if e.parser else "")
            if e.event == "corrupt":
                warn(f"{what} cache: the entry for {which} ({e.key[:16]}) was damaged; {again} again and rewritten")
            elif CACHE_SETTINGS["verbose"]:
                warn(f"{what} cache: {e.event} for {which} ({e.key[:16]})")


def show_detected(detected: dict[str, list[str]]) -> None:
    """One stderr line per reader chosen by content: which files it read (the first three named; fitted to
    COLUMNS or a terminal's width, as many as fit, at least one)."""
    from replicate.cli.base import terminal_width

    width = terminal_width(sys.stderr)
    for name, paths in detected.items():
        head = f"reader: {name} (chosen by content; --reader to choose) for "
        warn(head + _named(paths, None if width is None else width - len(head)))


def _named(paths: list[str], room: int | None) -> str:
    """``a, b, c and N more``: the first three paths, or (``room`` characters) as many as fit; ``N files``
    when not even one does."""
    def text(k: int) -> str:
        if k == 0:
            return f"{len(paths)} file{'s' if len(paths) != 1 else ''}"
        return ", ".join(paths[:k]) + (f" and {len(paths) - k} more" if len(paths) > k else "")

    if room is None:
        return text(min(3, len(paths)))
    if len(text(len(paths))) <= room:  # all of them (no "and N more" to add)
        return text(len(paths))
    k = 0
    while k < len(paths) and len(text(k + 1)) <= room:
        k += 1
    return text(k)


def emit_runs(loaded, result: Any, fmt: Format, *, text: Callable[[], str], comparisons: Sequence | None = None,
              choice=None) -> None:
    """:func:`~replicate.cli.base.emit` for a judge command: the result with the load's warnings.

    With ``comparisons``, a run set sharing no item is an error, raised after
    the warnings (which often say why). ``choice`` (an
    :class:`~replicate.judge.sourcerule.UnparsedChoice`, for a command whose renderer does not say it): the
    unparsed policy's line heads the text, and the JSON carries it as ``unparsed_rule``.
    """
    show_warnings(loaded.diagnostics)
    show_scale_outcomes(loaded)
    show_cache_events(loaded.label_cache, loaded.run_cache)
    if comparisons is not None:
        require_shared_items(loaded, comparisons)
    report = loaded.report(result)
    shown = text
    if choice is not None:
        report.extra["unparsed_rule"] = choice.to_json()
    if choice is not None and choice.rule is not None:  # the runs' readers declare a rule: say how it stands

        def shown() -> str:
            from replicate.judge.render import policy_head

            return policy_head(choice, fmt) + ("" if fmt is Format.markdown else "\n") + text()
    # the warnings are shown above (before the cache lines and the shared-items check); the JSON is the library's
    emit(report, fmt, text=with_departures(loaded, shown, fmt))


def show_scale_outcomes(loaded) -> None:
    """One stderr line per run with labels outside its scale: how many, and what --out-of-scale did with them."""
    hint = ("--out-of-scale drop or clip to change" if loaded.out_of_scale == "keep"
            else f"--out-of-scale {loaded.out_of_scale}")
    for o in dict.fromkeys(o for o in loaded.scale_outcomes() if o.count):
        warn(f"out-of-scale labels: {o.words()} ({hint})")


def with_departures(loaded, text: Callable[[], str], fmt: Format) -> Callable[[], str]:
    """``text`` headed by the out-of-scale policy when it is not the default (drop, clip): every table says it."""
    from replicate.judge.outofscale import departure_lines

    def headed() -> str:
        body = text()  # labels the runs, so the outcomes are known
        lines = departure_lines(loaded.out_of_scale, dict.fromkeys(loaded.scale_outcomes()))
        if not lines:
            return body
        if fmt is Format.markdown:
            lines = [f"- {lines[0]}", *(f"  - {line.strip()}" for line in lines[1:])]
        return "\n".join(lines) + "\n\n" + body

    return headed


def policy_of(unparsed: Unparsed | None, loaded):
    """The unparsed policy of a command over ``loaded``'s runs: ``--unparsed`` when given, else the source's rule
    (:func:`replicate.judge.sourcerule.unparsed_choice`)."""
    from replicate.judge.sourcerule import unparsed_choice

    return unparsed_choice(loaded.runs, None if unparsed is None else unparsed.value)


def resolve_runs(files: Sequence[Path] | None, runs_toml: Path | None) -> list:
    """RunSpecs from file arguments or from ``--runs`` (judge.select.runs_given)."""
    from replicate.judge.select import runs_given

    return runs_given(files, runs_toml)


def edge_of(edge: str | None, names: Sequence[str] = ()) -> tuple[str, str] | None:
    """``--edge OLD:NEW`` -> ``(OLD, NEW)`` (the split whose sides are both among ``names`` when one is, else at the first ':').

    A value that starts with '-' is an option click took for the edge: that is said.
    """
    if edge is None:
        return None
    from replicate.trials.engine import parse_edge

    if edge.startswith("-") or ":" not in edge.strip(":"):
        raise UsageError(
            f"--edge takes two run names, OLD:NEW; got {edge!r} "
            "(a run file whose name starts with '-' can be written ./-name)"
        )
    return parse_edge(edge, list(names) or None)


def check_run_values(*, main: str | None = None) -> None:
    """A UsageError when --main took an option as a run name (``--main -p X``: click takes the next word whatever it is)."""
    if main is not None and main.startswith("-"):
        raise UsageError(
            f"--main takes a run name; got {main!r} (a run file whose name starts with '-' can be written ./-name)"
        )


def need_parser(parser: str | None, loaded) -> str:
    """The parser name to label with; a UsageError listing the parsers when one is needed."""
    if parser is not None:
        return parser
    from replicate.judge.model import decided_column

    decided = decided_column(loaded.runs)
    if decided is not None:
        return decided
    from replicate.parsing import PARSERS

    suggested = suggested_parsers(loaded.runs)
    installed = ", ".join(PARSERS.names()) or "none installed"
    if suggested:
        first, *others = dict.fromkeys(p for ps in suggested.values() for p in ps)
        more = f" (or {', '.join(others)})" if others else ""
        raise UsageError(
            f"these runs hold raw outputs: name a parser with --parser. Outputs read by {', '.join(suggested)} "
            f"are parsed with {first}{more}: --parser {first}. Installed: {installed}"
        )
    raise UsageError(f"these runs hold raw outputs: name a parser with --parser, one of {installed}")


def suggested_parsers(runs) -> dict[str, tuple[str, ...]]:
    """Per reader of ``runs`` that names parsers for its outputs (:attr:`Reader.parsers`), the installed ones
    among them; empty unless every run's readers name some (a mix gives no one suggestion)."""
    from replicate.parsing import PARSERS
    from replicate.reading.contract import READERS

    out: dict[str, tuple[str, ...]] = {}
    for run in runs:
        for f in run.files:
            r = READERS.get(f.reader) if f.reader in READERS else None
            named = tuple(p for p in (r.parsers if r is not None else ()) if p in PARSERS)
            if not named:
                return {}
            out[f.reader] = named
    return out


def require_shared_items(loaded, comparisons) -> None:
    """A BadInput when the runs have no item in common (usually the wrong key fields)."""
    from replicate.errors import BadInput

    if comparisons and comparisons[0].shared_items == 0:
        why = loaded.emptied()  # a choice of the user's emptied a run: that is the cause, not the keys
        if why is not None:
            raise BadInput(why)
        fields = ", ".join(loaded.fields.key_fields)
        raise BadInput(
            f"the runs {', '.join(loaded.names)} share no item (items are keyed by {fields}){_held_elsewhere(loaded)}; "
            "check the files or set --key-field"
        )


def _held_elsewhere(loaded) -> str:
    """For more than two runs, how many items the others would share without each run (which run stands apart)."""
    from collections import Counter

    if len(loaded.runs) <= 2:
        return ""
    keys = [set(run.keys) for run in loaded.runs]
    held = Counter(k for ks in keys for k in ks)
    others = len(keys) - 1
    without = [sum(1 for k, n in held.items() if n == others and k not in ks) for ks in keys]
    return ": without one run the others would share " + ", ".join(
        f"{n} (without {name})" for name, n in zip(loaded.names, without))


def show_warnings(diagnostics) -> None:
    """Print the counted warnings about the input to stderr (nothing when there are none)."""
    from replicate.diagnostics import summary_text

    text = summary_text(diagnostics)
    if text:
        warn(text.rstrip("\n"))
