"""``verify``: recompute a claims file's figures from released files (the library entry point).

>>> v = verify("fixtures/example/claims.toml", root="fixtures/example",
...            parsers=["umbrela-fallback@1"], date="2026-01-01")     # doctest: +SKIP
>>> v.summary_line()                                                 # doctest: +SKIP
'9 of 12 claims match under umbrela-fallback@1'

:func:`verify_runs` is the pure part (claims + in-memory runs in, a
:class:`Verification` out); :func:`verify` adds reading the claims file and
the run files (each file once, whatever the number of parsers).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param, UsageError
from replicate.judge.floor import Floor
from replicate.judge.model import LabelledRun, Run, decided_column
from replicate.judge.run_figures import RunFigures
from replicate.judge.select import RunEntry, RunSpec
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import PARSERS, Parser
from replicate.printed import Verdict
from replicate.registry import VersionedName
from replicate.verify.alternatives import alternatives
from replicate.verify.claim import SOURCES
from replicate.verify.claims_file import ClaimsFile, load_claims
from replicate.verify.flags import collect_flags
from replicate.verify.matching import Outcome
from replicate.verify.part import Flag, Part
from replicate.verify.recompute import (
    EdgeFigures,
    Recomputer,
    edge_key,
    floor_of,
)
from replicate.verify.sources.runs import ClaimResult, Runs
from replicate.verify.verification import Verification
from replicate.version import tool_version

if TYPE_CHECKING:
    from replicate.judge.labelcache import LabelCache
    from replicate.judge.load.runcache import RunCache

#: The parser family tried when neither --parser nor a claim names one.
DEFAULT_FAMILY = "umbrela"

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_date(date: str | None) -> str:
    """``date`` as YYYY-MM-DD (today, UTC, when None); UsageError otherwise."""
    if date is None:
        return _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    try:
        if not _DATE.match(date):
            raise ValueError
        return _dt.date.fromisoformat(date).isoformat()
    except ValueError:
        raise UsageError(Message(Param("date"), f" must be a calendar date YYYY-MM-DD, got {date!r}")) from None


def default_parsers(claims: ClaimsFile) -> tuple[str, ...]:
    """The parsers a claim that pins none is recomputed under when no --parser is given.

    Released readings come first, so that the gating (first) parser is one a
    paper could have used: the ``[study] parser`` if the claims file names one,
    then its alternatives in registry order, except that corrections (parsers
    with ``released=False``, see :attr:`replicate.parsing.Parser.released`) come
    last. The alternatives are the registered parsers of the study parser's
    family that give the same label set (``arena-hard@1`` beside
    ``arena-hard-last@1``, never ``mtbench-pair@1`` beside
    ``mtbench-single@1``); without a study parser, every ``umbrela`` parser.
    """
    if claims.study.parser:
        pinned = PARSERS.get(claims.study.parser)
        same = PARSERS.get_many(PARSERS.names(family=VersionedName.parse(pinned.name).family))
        family = [p for p in same if p.label_set == pinned.label_set]
    else:
        family = PARSERS.get_many(PARSERS.names(family=DEFAULT_FAMILY))
    # a stable sort: released readings (key False) before corrections, each in registry order
    ordered = [p.name for p in sorted(family, key=lambda p: not getattr(p, "released", True))]
    first = [claims.study.parser] if claims.study.parser else []
    return tuple(dict.fromkeys(first + ordered))


def parser_columns(claims: ClaimsFile, parsers: Sequence[str] | None) -> tuple[tuple[str, ...], bool]:
    """The parser columns, in order, and whether they were given explicitly.

    Given parsers override every claim's own, in the order given. Otherwise the
    columns are :func:`default_parsers`, then any other parser a claim pins.
    """
    if parsers:
        names = list(dict.fromkeys(parsers))
        PARSERS.get_many(names)  # every unknown name at once
        return tuple(names), True
    names = list(default_parsers(claims))
    for c in claims.claims:
        if c.parser is not None and c.parser not in names:
            names.append(c.parser)
    if not names:
        raise UsageError(Message(f"no parser given and no {DEFAULT_FAMILY} parser is registered; pass ", Param("parsers")))
    return tuple(names), False


def verify_runs(
    claims: ClaimsFile,
    runs: Mapping[str, Run],
    *,
    parsers: Sequence[str] | None = None,
    root: str = ".",
    date: str | None = None,
    diagnostics: Diagnostics | None = None,
    uncertainty: Uncertainty | None = None,
    label: Callable[[Run, Parser | None], LabelledRun] | None = None,
    out_of_scale: str = "keep",
) -> Verification:
    """Recompute every claim of ``claims`` from in-memory ``runs`` (pure).

    ``out_of_scale`` (``keep``, ``drop``, ``clip``): what a label outside its run's scale is read as
    (:mod:`replicate.judge.outofscale`); a mismatching claim's alternatives also try the other two.

    With ``uncertainty`` settings every edge and floor gets bootstrap
    intervals (clusters from the claims file's key fields) and small samples are flagged.
    ``label`` labels one run with a parser (default ``Run.label_with``; :func:`verify`
    passes the loader's, which goes through the label cache).

    Each claim is recomputed under every parser of ``parsers`` (given parsers
    override a claim's own; the first gates); without ``parsers``, under the
    parser the claim pins, else under :func:`default_parsers` (released
    readings first, so the gating parser is one a paper could have used).
    """
    columns, explicit = parser_columns(claims, parsers)
    defaults = default_parsers(claims)
    date = check_date(date)
    missing = sorted({n for c in claims.claims for n in c.run_names if n not in runs})
    if missing:
        raise UsageError(f"runs named by claims were not loaded: {', '.join(missing)}")
    claims, departures = _source_rules(claims, runs)
    # runs read by a reader of labels (qrels, EXAM) or verdicts (benchmark logs) need no parser: one column, named
    # by the readers' pseudo-parser as compare names it (lm-eval-metric, qrels-grades; several joined with ' + ')
    decided = decided_column([runs[n] for n in _used_runs(claims)])
    if decided is not None:
        columns = defaults = (decided,)
    if uncertainty is not None:
        from replicate.judge.load import FieldSpec

        try:  # clusters are named by the key fields the claims file reads items with
            uncertainty = replace(uncertainty, key_fields=tuple(claims.fields.get("key_fields") or FieldSpec().key_fields))
        except ValueError as exc:
            raise UsageError(Message(Param("cluster"), f": {exc}")) from None
    try:
        rc = Recomputer(runs, PARSERS.get, uncertainty=uncertainty, label=label, out_of_scale=out_of_scale)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    plain = rc.under()  # the alternatives of a mismatching claim (replicate.verify.alternatives) need no intervals
    results = []
    for c in claims.claims:
        if explicit or decided is not None:
            ps = columns
        elif c.parser is not None:
            ps = (c.parser,)
        elif defaults:
            ps = defaults
        else:
            raise UsageError(Message(f"claim {c.id!r} names no parser and no {DEFAULT_FAMILY} parser is registered; "
                                     "pass ", Param("parsers")))
        computed = {p: rc.compute(c, p) for p in ps}
        found = None
        if Outcome(c.printed, computed[ps[0]]).verdict is Verdict.mismatch:
            found = alternatives(plain, c, ps[0], PARSERS.names())
        results.append(ClaimResult(c, ps, computed, found))
    edges, floors, run_figs = _touched(claims, results, rc, columns)
    run_files = {name: runs[name].files for name in _used_runs(claims)}
    diag = diagnostics if diagnostics is not None else Diagnostics()
    flags = (*collect_flags(claims, results, run_figs, edges, floors, run_files, diag), *departures)
    part = Runs(parsers=columns, explicit_parsers=explicit, results=tuple(results), edges=edges, floors=floors,
                run_figures=run_figs, run_files=run_files, flags=flags, decided=decided is not None,
                against_floor=_against_floor(edges, floors, rc), out_of_scale=rc.out_of_scale,
                scale_outcomes=rc.scale_outcomes())
    return Verification(claims_file=claims, parts=(part,), root=root, tool_version=tool_version(), date=date,
                        diagnostics=diag)


def _source_rules(claims: ClaimsFile, runs: Mapping[str, Run]) -> tuple[ClaimsFile, tuple[Flag, ...]]:
    """Each claim over runs that pins no unparsed policy takes its runs' source rule (the harness's own way of
    counting an item it could not score, :mod:`replicate.judge.sourcerule`); a claim that pins another is
    flagged as a departure from it."""
    from replicate.judge.sourcerule import unparsed_choice

    out, flags = [], []
    for c in claims.claims:  # every one a claim over runs, naming its runs
        choice = unparsed_choice([runs[n] for n in c.run_names], c.unparsed)
        if choice.departs:
            flags.append(Flag("departure", f"claim {c.id!r} pins unparsed = {c.unparsed!r}, a departure from the "
                                           f"source's rule, {choice.rule} ({choice.reason()}): its figure is not "
                                           "the harness's own"))
        out.append(c if c.unparsed is not None or choice.rule is None else replace(c, unparsed=choice.rule))
    return replace(claims, claims=tuple(out)), tuple(flags)


def _against_floor(edges: Sequence[EdgeFigures], floors: Sequence[Floor], rc: Recomputer) -> dict:
    """Per edge with a floor of its new version's repeats (same parser and policy), what ``floor --edge`` says."""
    checks = {edge_key(e): rc.against_floor(e, f) for e in edges if (f := floor_of(floors, e)) is not None}
    return {key: check for key, check in checks.items() if check is not None}


def _used_runs(claims: ClaimsFile) -> list[str]:
    used = {n for c in claims.claims for n in c.run_names}
    return [n for n in claims.runs if n in used]


def _touched(
    claims: ClaimsFile, results: Sequence[ClaimResult], rc: Recomputer, columns: Sequence[str] = ()
) -> tuple[tuple[EdgeFigures, ...], tuple[Floor, ...], tuple[RunFigures, ...]]:
    """The edges, floors and runs the claims touch, under each parser they were computed with.

    Runs come in the claims file's order, each under its parsers in the order of the
    claims table's columns (``columns``), so that the note's tables agree."""
    edges: dict[tuple, EdgeFigures] = {}
    floors: dict[tuple, Floor] = {}
    run_keys: dict[tuple, None] = {}
    for r in results:
        c = r.claim
        for p in r.parsers:
            if c.scope == "edge":
                e = rc.edge(c.old, c.new, p, c.policy)  # type: ignore[arg-type]  # an edge claim names old and new
                if not isinstance(e, str):
                    edges.setdefault((c.old, c.new, p, c.policy), e)
            elif c.scope == "floor":
                f = rc.floor(c.runs, p, c.policy)
                if not isinstance(f, str):
                    floors.setdefault((c.runs, p, c.policy), f)
            for name in c.run_names:
                run_keys.setdefault((name, p), None)
    order = {n: i for i, n in enumerate(claims.runs)}
    rank = {p: i for i, p in enumerate(columns)}
    run_figs = tuple(
        rc.run_figures(name, p, "intersect")
        for name, p in sorted(run_keys, key=lambda k: (order.get(k[0], 0), rank.get(k[1], len(rank)), k[1]))
    )
    # one row per (run, parser actually used): EXAM runs give the same figures under every parser
    run_figs = tuple({(f.name, f.parser): f for f in run_figs}.values())
    return tuple(edges.values()), tuple(floors.values()), run_figs


def _inside_root(claims: ClaimsFile, root: Path, claims_path: str | Path) -> None:
    """Refuse, before anything is read, a file the claims file names that resolves outside ``root``: a symbolic
    link (of the file or a folder on its way) out of the release. Its content is never read nor quoted."""
    named = [("[runs]", f) for files in claims.runs.values() for f in files]
    named += [("[gold]", claims.gold["file"])] if claims.gold else []
    named += [("[trials]", f) for f in claims.trials.tables.values()]
    named += [("[replication]", f) for spec in claims.trials.replication.values()
              for f in (spec.trials, spec.archive) if f is not None]
    named += [("[trec_runs]", f) for files in claims.trec_runs.values() for f in files]
    top = root.resolve()
    for where, rel in named:
        try:
            resolved = (root / rel).resolve()
        except (RuntimeError, OSError):  # a loop of symbolic links (Python 3.11: RuntimeError; 3.13: OSError)
            raise BadInput(f"{where} file {rel!r} is a loop of symbolic links (each points on to another, "
                           "never to a file): it is not read", path=claims_path) from None
        if not resolved.is_relative_to(top):
            raise BadInput(Message(f"{where} file {rel!r} resolves outside ", Param("root"),
                                   " (a symbolic link out of it): it is not read"), path=claims_path)


def _spec(name: str, claims: ClaimsFile, root: Path) -> RunSpec:
    """The run ``name`` of the claims file's [runs], its paths under ``root``."""
    entry = claims.entries.get(name, RunEntry(claims.runs[name]))
    return RunSpec(name, tuple(root / f for f in claims.runs[name]), entry.reader, entry.options)


def _directories_read(claims: ClaimsFile, used: Sequence[str], root: Path, claims_path: str | Path,
                      reader: str | None) -> None:
    """The reader a [runs] entry names, and a directory it names that no reader reads a run through, are problems
    of the claims file: the error names the claims file and the run, then what is wrong (an unknown reader;
    what the directory lacks, :func:`~replicate.judge.load.detect.directory_file`)."""
    from replicate.judge.load.detect import directory_file
    from replicate.reading.contract import READERS

    for name in used:
        own = claims.entries.get(name, RunEntry(claims.runs[name])).reader
        try:
            chosen = READERS.get(own) if own is not None else None
        except UsageError as exc:
            raise BadInput(Message(f"[runs] {name}: ", *_parts(exc.args[0])), path=claims_path) from None
        if own is None and reader is not None and reader in READERS:  # an unknown --reader is the command's error
            chosen = READERS.get(reader)
        for f in claims.runs[name]:
            try:
                directory_file(root / f, chosen)
            except BadInput as exc:
                raise BadInput(Message(f"[runs] {name}: {f} ", *_parts(exc.reason)), path=claims_path) from None


def _parts(why: str) -> tuple[str | Param, ...]:
    """An error's text as the parts of a :class:`~replicate.errors.Message` (its options kept as options)."""
    return why.parts if isinstance(why, Message) else (why,)


def verify(
    claims_path: str | Path,
    *,
    root: str | Path,
    parsers: Sequence[str] | None = None,
    date: str | None = None,
    strict: bool = False,
    replications: Mapping[str, str | Path] | None = None,
    replication_archives: Mapping[str, str | Path] | None = None,
    reader: str | None = None,
    uncertainty: Uncertainty | None = None,
    label_cache: LabelCache | None = None,
    jobs: int | str = 1,
    run_cache: RunCache | None = None,
    out_of_scale: str = "keep",
) -> Verification:
    """Read a claims file and the files its runs name (under ``root``), then :func:`verify_runs`.

    Runs are read and labelled as the judge commands do (:func:`replicate.judge.api.load_runs`);
    ``label_cache`` keeps parsed labels across processes (None: parse every time), and with it
    ``run_cache`` (default: one under the same root) read runs;
    ``jobs`` worker processes read the runs and label them under every parser column
    (see :func:`~replicate.judge.api.load_runs`; the result is the same for every number).

    Trial claims are checked by :func:`replicate.verify.trials_check.check_trials`
    over the ``[trials]`` tables; ``replications`` (name -> fresh trials table,
    as ``--replication NAME=TRIALS``; paths as given) replaces the claims file's
    ``[replication]`` entries (paths under ``root``) of the same name, and
    ``replication_archives`` names the archive each fresh table was scored from.

    Raises :class:`BadInput` (exit 2) for a malformed claims file (listing
    every problem) or run files that are missing or malformed, and
    :class:`UsageError` for unknown parsers or a bad date.
    """
    from replicate.judge.api import load_runs
    from replicate.judge.load import FieldSpec
    from replicate.judge.select import names_run_file
    from replicate.reading.contract import ReadOptions

    claims = load_claims(claims_path, parsers=PARSERS.names())
    columns, _ = parser_columns(claims, parsers)
    check_date(date)
    root_path = Path(root)
    if not root_path.is_dir():
        raise UsageError(Message(Param("root"), f" {str(root)!r} is not a directory"))
    _inside_root(claims, root_path, claims_path)
    used = _used_runs(claims)
    trials = None
    if claims.trials.claims or replications:
        from replicate.verify.trials_io import load_trials_part

        trials = load_trials_part(claims, root_path, replications=replications or {},
                                  archives=replication_archives or {}, strict=strict)
    missing = [f"{name}: {f}" for name in used for f in claims.runs[name] if not names_run_file(root_path / f)]
    if missing:
        raise BadInput(
            f"{len(missing)} file(s) named in [runs] not found under {root}:\n" + "\n".join(missing),
            path=claims_path,
        )
    _directories_read(claims, used, root_path, claims_path, reader)
    try:
        fields = FieldSpec(**claims.fields)
    except (TypeError, ValueError) as exc:
        raise BadInput(f"[fields]: {exc}", path=claims_path) from None
    specs = [_spec(name, claims, root_path) for name in used]
    gold = claims.gold
    if gold and not (root_path / gold["file"]).is_file():
        raise BadInput(f"[gold] file {gold['file']!r} not found under {root}", path=claims_path)
    # Gold stored as a label's name ("B", "tie") is read against the parsers' label set, as the judge commands
    # read it against --parser's; with columns of several sets, gold stays whole-number grades.
    sets = {PARSERS.get(p).label_set for p in columns}
    loaded = load_runs(
        specs, fields=fields, strict=strict, reader=reader,
        options=ReadOptions(fields=fields, gold_labels=sets.pop() if len(sets) == 1 else None),
        gold=root_path / gold["file"] if gold else None, gold_reader=gold.get("reader"), label_cache=label_cache,
        jobs=jobs, parsers=columns,
        run_cache=run_cache,
    )
    keys: dict[tuple[str, str, str], None] = {}

    def label(run: Run, parser: Parser | None) -> LabelledRun:
        out = loaded.label_run(run, parser)
        if parser is not None:  # the key of the labels just given (none for decided labels)
            key = loaded.label_keys().get((run.name, parser.name))
            if key is not None:
                keys.setdefault((run.name, parser.name, key), None)
        return out

    v = verify_runs(
        claims, {r.name: r for r in loaded.runs}, parsers=list(columns) if parsers else None,
        root=str(root), date=date, diagnostics=loaded.diagnostics, uncertainty=uncertainty, label=label,
        out_of_scale=out_of_scale,
    )
    parts: list[Part] = [replace(v.runs, label_keys=tuple(keys))]
    if trials is not None:
        parts.append(trials)
    for name, of_source in claims.other_claims.items():  # rankings, and sources of register_source
        check = SOURCES[name].check
        assert check is not None  # only runs and trials are computed here
        parts.append(check(of_source, root_path, claims))
    return replace(v, parts=tuple(parts))
