"""One claim model: a printed figure over a source (judge runs or a trials table), and its validation (pure).

A ``[[claims]]`` entry names a metric of the one table
(:mod:`replicate.verify.metrics`), a value as printed and a unit; the fields
that say what it is about depend on its **source**:

- over judge runs (the default): ``run``, ``old`` + ``new`` or ``runs``, and
  optionally ``parser`` and ``unparsed`` (the policy);
- over a trials table (the claim names ``trials``): ``edge``, ``benchmark``,
  ``model`` and the settings of :mod:`replicate.trials.settings` (over the
  ``[study]`` ones).

A metric may declare fields of its own (:attr:`Metric.fields`): they are
accepted only for a claim naming it, checked, and kept in ``claim.options``.

:func:`parse_claim` says every problem of an entry (each prefixed by its id)
and returns a :class:`Claim` only when there is none.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from replicate.printed import Printed
from replicate.stats.policy import POLICIES, Policy
from replicate.trials.settings import SETTING_FIELDS, TrialSettings, parse_settings
from replicate.verify.matching import FLAG_WORDS, PrintedFlag
from replicate.verify.metrics import TRIAL_UNITS, UNITS, Metric, claim_unit, metric as find_metric, metric_names
from replicate.verify.part import outside_root
from replicate.verify.sources import rankings

#: Fields every claim may give, then those of each built-in source.
COMMON_FIELDS = ("id", "where", "text", "metric", "value", "unit")
RUN_FIELDS = ("run", "old", "new", "runs", "parser", "unparsed")
TRIAL_FIELDS = ("trials", "edge", "benchmark", "model", *SETTING_FIELDS)


@dataclass(frozen=True, slots=True)
class Claim:
    """One printed figure: its metric over a source (runs or a trials table), and the value as printed."""

    id: str
    metric: str
    printed: Printed | PrintedFlag
    spec: Metric = field(compare=False, repr=False)
    where: str = ""
    text: str = ""
    position: int = 0  # 1-based position among [[claims]]
    options: Mapping[str, Any] = field(default_factory=dict)  # the metric's own fields, checked
    # over judge runs
    run: str | None = None
    old: str | None = None
    new: str | None = None
    runs: tuple[str, ...] = ()
    parser: str | None = None  # pinned parser (None: recompute under every parser asked)
    unparsed: Policy | None = None  # pinned unparsed policy (None: the runs' source rule, else intersect)
    # over a trials table
    trials: str | None = None  # the [trials] table it is computed from
    edge: str | None = None  # "A:B" as written (split against the table's models when loaded)
    benchmark: str | None = None
    model: str | None = None
    settings: TrialSettings = TrialSettings()
    # over system rankings
    trec_runs: str | tuple[str, ...] | None = None  # a [trec_runs] name, or run files / directories
    # over a source of one's own (:func:`register_source`): its fields, as its parse function kept them
    about: Mapping[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return self.spec.source

    @property
    def scope(self) -> str:
        if self.source != "runs":
            return self.spec.scope
        if self.runs:
            return "floor"
        return "edge" if self.old is not None else "run"

    @property
    def run_names(self) -> tuple[str, ...]:
        """The runs a claim over runs reads (none for a trial claim)."""
        if self.source != "runs":
            return ()
        return self.runs or ((self.old, self.new) if self.old is not None else (self.run,))  # type: ignore[return-value]

    @property
    def policy(self) -> Policy:
        return self.unparsed or "intersect"

    @property
    def table(self) -> str:
        """The [trials] table a trial claim is computed from."""
        assert self.trials is not None, "a claim over runs names no trials table"
        return self.trials

    @property
    def by(self) -> str:
        """A trial cell per benchmark, or pooled over benchmarks."""
        return "benchmark" if self.benchmark is not None else "none"

    @property
    def target(self) -> str:
        """What the figure is about, as a reader sees it."""
        return self.described(str)

    def described(self, name: Callable[[Any], str]) -> str:
        """:attr:`target` with every name the user gave (runs, models, benchmarks, files) passed through ``name``
        (the note's escaping), the words around them as they are."""
        scope = self.scope
        if scope == "floor":
            return "floor of " + ", ".join(map(name, self.runs))
        if scope == "edge":
            return f"{name(self.old)} -> {name(self.new)}"
        if scope == "run":
            return name(self.run)
        if self.about:
            return ", ".join(f"{k} {name(v)}" for k, v in self.about.items())
        if scope == "systems":
            runs = name(self.trec_runs) if isinstance(self.trec_runs, str) else ", ".join(map(name, self.trec_runs or ()))
            return f"systems of {runs}, {name(self.options.get('measure'))}"
        bench = name(self.benchmark) if self.benchmark is not None else "all benchmarks pooled"
        own = "".join(f", {k} {name(v)}" for k, v in self.options.items())  # a metric's own fields (kind, per)
        if scope == "cell":
            src, _, tgt = (self.edge or "").partition(":")
            return f"{name(src)} -> {name(tgt)}, {bench}{own}"
        if scope == "model":
            return f"{name(self.model)}, {name(self.benchmark)}{own}"
        return f"{name(self.benchmark)}{own}"

    def to_json(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "metric": self.metric, "printed": self.printed.text,
                               "unit": self.printed.unit, "where": self.where, "text": self.text}
        scope = self.scope
        if self.source == "rankings":
            out["trec_runs"] = self.trec_runs if isinstance(self.trec_runs, str) else list(self.trec_runs or ())
        elif self.source == "trials":
            out["trials"] = self.trials
            if scope == "cell":
                out["edge"] = self.edge
            if scope == "model":
                out["model"] = self.model
            out["benchmark"] = self.benchmark
        elif self.about:
            out.update(self.about)
        else:
            if scope == "floor":
                out["runs"] = list(self.runs)
            elif scope == "edge":
                out.update(old=self.old, new=self.new)
            else:
                out["run"] = self.run
            out.update(parser=self.parser, unparsed=self.policy)
        if self.options:
            out["options"] = dict(self.options)
        return out


Say = Callable[[str], None]


@dataclass(frozen=True)
class ClaimSource:
    """A claim source as a claims file names it (``docs/verify.md``, "Adding a claim source").

    ``parse(claim, metric, context, say)`` checks the source's own fields of a
    raw claim (each problem said) and returns the :class:`Claim` attributes it
    keeps (a registered source keeps them as ``about``). ``check(claims, root,
    claims_file)`` computes the source's claims into its
    :class:`~replicate.verify.part.Part`; runs and trials have none, since
    :func:`replicate.verify.api.verify` computes them with what it loads.
    """

    name: str  # as metrics name their source: runs, trials, rankings, or your own
    selector: str | None  # the claim field that puts a claim over this source (None: the default source, runs)
    fields: tuple[str, ...]  # its claim fields beyond COMMON_FIELDS
    units: tuple[str, ...]  # units its printed values may take
    parse: Callable[[Mapping[str, Any], Metric | None, Context, Say], dict[str, Any]]
    noun: str = ""  # how messages call its claims ("trial" claim, "ranking" metric)
    check: Callable[..., Any] | None = None
    tables: tuple[str, ...] = ()  # top-level tables of the claims file it reads (ClaimsFile.tables)
    id_first: bool = False  # its id is checked before its other fields (the order problems are listed in)
    early: Callable[[Mapping[str, Any], Context, Say], None] | None = None  # checked before the metric's name


@dataclass(frozen=True)
class Context:
    """What a claim is checked against: the file's runs, trials tables, parsers and [study] settings."""

    runs: Mapping[str, Any]
    tables: Mapping[str, str]
    parsers: Collection[str] | None
    settings: TrialSettings
    seen: dict[str, int]  # id -> position, filled as claims are read
    trec_tables: Mapping[str, Any] = field(default_factory=dict)  # [trec_runs] name -> paths
    source_tables: Mapping[str, Any] = field(default_factory=dict)  # registered sources' top-level tables, as read


def close(name: str, options: Collection[str]) -> str:
    found = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean {found[0]!r}?)" if found else ""


def parse_claim(c: Any, position: int, ctx: Context, problems: list[str]) -> Claim | None:
    """A ``[[claims]]`` entry: each problem appended to ``problems`` (by id); a claim only when there is none."""
    if not isinstance(c, dict):
        problems.append(f"claims[{position}]: must be a table ([[claims]])")
        return None
    source = claim_source(c)
    cid = c.get("id")
    label = f"claim {cid!r}" if isinstance(cid, str) and cid else f"claims[{position}]"
    before = len(problems)

    def say(message: str) -> None:
        problems.append(f"{label}: {message}")

    def check_id() -> None:
        if "id" in c:
            if not isinstance(cid, str) or not cid:
                say("id must be a non-empty string")
            elif cid in ctx.seen:
                say(f"duplicate id (also claims[{ctx.seen[cid]}])")
            else:
                ctx.seen[cid] = position

    if source.id_first:  # (the order problems are listed in, as before the kinds of claim were one)
        check_id()
    name = c.get("metric")
    spec = find_metric(name, source.name) if isinstance(name, str) else None
    allowed = COMMON_FIELDS + source.fields + tuple(f.name for f in (spec.fields if spec is not None else ()))
    noun = f"{source.noun} " if source.noun else ""
    where = f" in a {noun}claim" if noun else ""
    for k in c:
        if k not in allowed:
            say(f"unknown field {k!r}{close(k, allowed)}; allowed{where}: {', '.join(allowed)}")
    for key in ("id", "metric", "value", "unit"):
        if key not in c:
            say(f"missing field {key!r}")
    if not source.id_first:
        check_id()
    if source.early is not None:
        source.early(c, ctx, say)
    if "metric" in c and spec is None:
        names = metric_names(source.name)
        say(f"unknown {noun}metric {name!r}{close(str(name), names)}; metrics: {', '.join(names)}")
    unit = claim_unit(c, source.units, spec, say, units_of=f"units of {noun}figures" if noun else "units")
    printed = _printed(c["value"], unit, say) if "value" in c else None
    options = _options(c, spec, say)
    extra: dict[str, Any] = source.parse(c, spec, ctx, say)
    if len(problems) > before or spec is None or printed is None:
        return None
    return Claim(id=str(cid), metric=spec.name, printed=printed, spec=spec, where=c.get("where", ""),
                 text=c.get("text", ""), position=position, options=options, **extra)


def claim_source(c: Mapping[str, Any]) -> ClaimSource:
    """The source a raw claim is over: the first whose selecting field it gives (a trials table, TREC runs,
    a registered source's), else judge runs."""
    return next((s for s in SOURCES.values() if s.selector is not None and s.selector in c), SOURCES["runs"])


def _strings(c: Mapping[str, Any], keys: tuple[str, ...], say: Say, *, non_empty: bool = False) -> None:
    """Each of ``keys`` the claim gives must be a string (a non-empty one, with ``non_empty``)."""
    for key in keys:
        if key in c and (not isinstance(c[key], str) or (non_empty and not c[key])):
            say(f"{key} must be a {'non-empty ' if non_empty else ''}string")


def _rankings_part(c: Mapping[str, Any], spec: Metric | None, ctx: Context, say: Callable[[str], None]) -> dict:
    _strings(c, ("where", "text"), say)
    runs, tables = c["trec_runs"], ctx.trec_tables
    if isinstance(runs, str):
        if runs not in tables:
            say(f"trec_runs {runs!r} is no [trec_runs] name{close(runs, tables)}; [trec_runs]: {', '.join(tables) or 'none'}")
    elif isinstance(runs, list) and runs and all(isinstance(v, str) and v for v in runs):
        if (bad := outside_root(runs)) is not None:
            say(f"trec_runs {bad}")
    else:
        say(f"trec_runs must be a [trec_runs] name or a list of run files, got {runs!r}")
    if spec is not None and "qrels" not in c:
        say(f"missing field 'qrels' (metric {spec.name!r} names [reference, estimate] qrels files)")
    return dict(trec_runs=runs if isinstance(runs, str) else tuple(runs) if isinstance(runs, list) else None)


def _printed(value: Any, unit: str | None, say: Callable[[str], None]) -> Printed | PrintedFlag | None:
    if not isinstance(value, str):
        say(f"value must be a string as printed (write value = \"{value}\"), got {type(value).__name__} {value!r}")
        return None
    if unit is None:
        return None
    if unit == "flag":
        word = value.strip().lower()
        if word not in FLAG_WORDS:
            say(f"value {value!r} of unit 'flag' must be pass or fail")
            return None
        return PrintedFlag(value, FLAG_WORDS[word])
    try:
        return Printed.parse(value, unit)
    except ValueError as exc:
        say(str(exc))
        return None


def _options(c: Mapping[str, Any], spec: Metric | None, say: Callable[[str], None]) -> dict[str, Any]:
    """The metric's own fields: each given value checked, the rest at their defaults."""
    out: dict[str, Any] = {}
    for f in spec.fields if spec is not None else ():
        if f.name not in c:
            if f.required:
                say(f"missing field {f.name!r} (metric {spec.name!r} needs it: {f.doc})")  # type: ignore[union-attr]
            out[f.name] = f.default
            continue
        problem = f.check(c[f.name])
        if problem is not None:
            say(f"{f.name} {problem}")
        out[f.name] = c[f.name]
    return out


# -- over judge runs ---------------------------------------------------------------------------
def _runs_part(c: Mapping[str, Any], spec: Metric | None, ctx: Context, say: Callable[[str], None]) -> dict:
    _strings(c, ("where", "text"), say)
    parser = c.get("parser")
    if "parser" in c:
        if not isinstance(parser, str):
            say("parser must be a parser name such as 'umbrela-fallback@1'")
        elif ctx.parsers is not None and parser not in ctx.parsers:
            say(f"unknown parser {parser!r}{close(parser, ctx.parsers)}; parsers: {', '.join(ctx.parsers) or 'none'}")
    policy = c.get("unparsed")
    if "unparsed" in c and policy not in POLICIES:
        say(f"unknown unparsed policy {policy!r}; policies: {', '.join(POLICIES)}")
    _check_run_fields(c, spec, ctx.runs, say)
    return dict(run=c.get("run"), old=c.get("old"), new=c.get("new"), runs=tuple(c.get("runs", ())),
                parser=parser, unparsed=policy)


_RUN_SCOPE_WORDS = {"run": "one run (run = \"NAME\")", "edge": "an edge (old = \"A\", new = \"B\")",
                    "floor": "repeats (runs = [\"A\", \"B\", ...])"}


def _scope_words(metric: Metric) -> str:
    return " or ".join(_RUN_SCOPE_WORDS[s] for s in metric.scopes)


def _check_run_fields(c: Mapping[str, Any], metric: Metric | None, runs: Mapping[str, Any], say) -> None:
    """The run/old/new/runs fields: the right ones for the metric's scope, naming known runs."""
    has = {k: k in c for k in ("run", "old", "new", "runs")}
    scopes = metric.scopes if metric is not None else ("run", "edge", "floor")

    def known(name: Any, what: str) -> None:
        if not isinstance(name, str):
            say(f"{what} must be a run name (string)")
        elif runs and name not in runs:
            say(f"unknown run {name!r} in {what}{close(name, runs)}; runs: {', '.join(runs)}")

    def refuse(fields: str) -> bool:
        if metric is not None and {"'runs'": "floor", "'old'/'new'": "edge", "'run'": "run"}[fields] not in scopes:
            say(f"metric {metric.name!r} does not take {fields}; it names {_scope_words(metric)}")
            return True
        return False

    if has["runs"]:
        if refuse("'runs'"):
            return
        if has["run"] or has["old"] or has["new"]:
            say("give either 'runs' (a floor) or 'run' or 'old' and 'new', not several")
        elif not isinstance(c["runs"], list) or len(c["runs"]) < 2:
            say("runs must be a list of at least two repeat runs")
        else:
            for r in c["runs"]:
                known(r, "runs")
            if len(set(map(str, c["runs"]))) != len(c["runs"]):
                say("runs lists a run twice")
        return
    if has["old"] or has["new"]:
        if refuse("'old'/'new'"):
            return
        if has["run"]:
            say("give either 'run' or 'old' and 'new', not both")
        for k in ("old", "new"):
            if has[k]:
                known(c[k], k)
            else:
                say(f"missing field {k!r} (an edge names old and new)")
        if has["old"] and has["new"] and c["old"] == c["new"]:
            say(f"old and new are the same run {c['old']!r}")
        return
    if has["run"]:
        if not refuse("'run'"):
            known(c["run"], "run")
        return
    if metric is not None:
        say(f"missing {_scope_words(metric)}")


# -- over a trials table -----------------------------------------------------------------------
_TRIAL_SCOPE_WORDS = {
    "cell": 'an edge = "A:B" and a benchmark (none for the cell pooled over benchmarks)',
    "model": "a model and a benchmark",
    "benchmark": "a benchmark",
}


def _trials_part(c: Mapping[str, Any], spec: Metric | None, ctx: Context, say: Callable[[str], None]) -> dict:
    _strings(c, ("where", "text", "edge", "benchmark", "model"), say, non_empty=True)
    if spec is not None:
        _check_trial_scope(c, spec, say)
    settings = parse_settings(c, ctx.settings, say)
    if spec is not None:
        cell = spec.scope == "cell"
        if settings.by == "none" and "benchmark" in c and cell:
            say("by = \"none\" pools the benchmarks: leave out 'benchmark'")
        if settings.by == "benchmark" and "benchmark" not in c and cell:
            say("by = \"benchmark\" needs a 'benchmark' (omit both for the pooled cell)")
        if spec.needs_null:
            if "seed" not in settings.given:
                say(f"{spec.name} depends on the permutation null's seed, which neither the claim nor "
                    "[study] gives (add seed = N)")
            if settings.null == 0:
                say(f"{spec.name} needs the permutation null, but null = 0 turns it off")
    return dict(trials=c.get("trials"), edge=c.get("edge"), benchmark=c.get("benchmark"), model=c.get("model"),
                settings=settings)


def _check_trial_scope(c: Mapping[str, Any], metric: Metric, say: Callable[[str], None]) -> None:
    wants = {"cell": ("edge",), "model": ("model", "benchmark"), "benchmark": ("benchmark",)}[metric.scope]
    for k in wants:
        if k not in c:
            say(f"missing field {k!r} (metric {metric.name!r} names {_TRIAL_SCOPE_WORDS[metric.scope]})")
    for k in ("edge", "model"):
        if k in c and k not in wants:
            say(f"metric {metric.name!r} does not take {k!r}")
    edge = c.get("edge")
    if isinstance(edge, str) and edge and ":" not in edge[1:-1]:  # a colon with a name on each side
        say(f"edge must look like SOURCE:TARGET, got {edge!r}")


def _trials_table(c: Mapping[str, Any], ctx: Context, say: Say) -> None:
    if not isinstance(c["trials"], str) or c["trials"] not in ctx.tables:
        say(f"unknown trials table {c['trials']!r}{close(str(c['trials']), ctx.tables)}; [trials] tables: "
            f"{', '.join(ctx.tables) or 'none'}")


#: Every claim source by name: the built-in ones, then those registered (:func:`register_source`).
SOURCES: dict[str, ClaimSource] = {s.name: s for s in (
    ClaimSource("runs", None, RUN_FIELDS, UNITS, _runs_part),
    ClaimSource("trials", "trials", TRIAL_FIELDS, TRIAL_UNITS, _trials_part, "trial", id_first=True,
                early=_trials_table),
    ClaimSource("rankings", "trec_runs", ("trec_runs",), ("ratio",), _rankings_part, "ranking",
                check=rankings.check),
)}


def register_source(source: ClaimSource) -> None:
    """Add a claim source of one's own; its metrics are rows of the metric table naming it as their source
    (:func:`replicate.verify.metrics.register`)."""
    if source.name in SOURCES:
        raise ValueError(f"claim source {source.name!r} is registered twice")
    if source.check is None:
        raise ValueError(f"claim source {source.name!r} gives no check (claims -> its part)")
    SOURCES[source.name] = source
