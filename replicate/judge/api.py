"""The library entry point for judge runs: load named runs once, label them, compare.

>>> loaded = load_runs(runs_from_toml("fixtures/example/runs.toml"))   # doctest: +SKIP
>>> edges = chain(loaded.labelled("umbrela-fallback@1"))             # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import Message, UsageError
from replicate.judge.gold import GoldJoin, attach_gold
from replicate.judge.labelcache import LabelCache, label_through
from replicate.judge.load.plan import plan_load
from replicate.judge.load.runcache import RunCache
from replicate.judge.load.workers import read_plans
from replicate.judge.model import LabelledRun, Run, evolve
from replicate.judge.outofscale import (
    KEEP,
    OutOfScale,
    ScaleOutcome,
    apply_out_of_scale,
    check_out_of_scale,
    dropped_whole,
    outcomes_json,
)
from replicate.judge.select import RunSpec, named_by_model
from replicate.parsing import PARSERS, Parser
from replicate.reading.contract import READERS, ReadOptions
from replicate.reading.jsonl import FieldSpec


@dataclass(frozen=True)
class Loaded:
    """Runs read from disk plus every warning raised while reading them.

    Raw runs are read once; :meth:`labelled` reads their outputs with a named
    parser (cached per parser, so several parser versions can be compared).
    """

    runs: tuple[Run, ...]
    diagnostics: Diagnostics
    fields: FieldSpec = FieldSpec()
    gold: GoldJoin | None = None  # what --gold joined, when given
    options: ReadOptions | None = None  # reader options the runs were read with (the command's)
    label_cache: LabelCache | None = None  # parsed labels kept across processes (None: parse every time)
    run_options: dict[str, ReadOptions] = field(default_factory=dict)  # run name -> its own options, where it sets any
    run_cache: RunCache | None = None  # read runs kept across processes (with the label cache)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    _label_keys: dict = field(default_factory=dict, repr=False, compare=False)
    #: (run, parser) -> (labels, label-cache key, label-cache events) given by a worker, used once; (labels,
    #: None, None): the parser read them while the run's files were read (not yet through the label cache)
    _prelabelled: dict = field(default_factory=dict, repr=False, compare=False)
    #: a run's name as given (its file's) -> the model name it was given after reading (see :func:`load_runs`)
    renamed: dict[str, str] = field(default_factory=dict)
    #: what :meth:`labelled` does with labels outside a run's scale (:mod:`replicate.judge.outofscale`)
    out_of_scale: OutOfScale = KEEP
    #: parser -> what the out-of-scale policy did to each run labelled by it
    _scales: dict = field(default_factory=dict, repr=False, compare=False)

    def named(self, name: str) -> str:
        """The loaded run's name for ``name``, a run's name as the command line gave it (e.g. an ``--edge``)."""
        return self.renamed.get(name, name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.runs)

    def detected(self) -> dict[str, list[str]]:
        """Reader name -> paths of the files whose reader was chosen by content (not named)."""
        out: dict[str, list[str]] = {}
        for r in self.runs:
            for f in r.files:
                if f.chosen == "by content":
                    out.setdefault(f.reader, []).append(f.provenance.path)
        if self.gold is not None and self.gold.chosen == "by content":
            out.setdefault(self.gold.reader, []).append(self.gold.path)
        return out

    def labelled(self, parser_name: str) -> list[LabelledRun]:
        """Each run labelled by the registered parser ``parser_name`` (EXAM runs keep their grades), labels
        outside a run's scale read under :attr:`out_of_scale` (what that did: :meth:`scale_outcomes`)."""
        if parser_name not in self._cache:
            needs_parser = any(r.labels is None for r in self.runs)
            parser = PARSERS.get(parser_name) if needs_parser else None
            names = self.key_names
            read = [apply_out_of_scale(evolve(self._label(r, parser), key_names=names, diagnostics=self.diagnostics), self.out_of_scale)
                    for r in self.runs]
            self._cache[parser_name] = [lr for lr, _ in read]
            self._scales[parser_name] = tuple(o for _, o in read)
        return list(self._cache[parser_name])

    def emptied(self) -> Message | None:
        """Why a run holds no item any more, when a choice of the user's emptied it: the ``gold`` file covering
        none of its items, or ``out_of_scale`` drop dropping every one (known once :meth:`labelled` ran); None
        otherwise. A command whose runs then share no item says this, not only that they share none."""
        if self.gold is not None:
            why = self.gold.covering_none(self.key_names)
            if why is not None:
                return why
        return dropped_whole(self.scale_outcomes(), {r.name: len(r) for r in self.runs})

    def scale_outcomes(self) -> tuple[ScaleOutcome, ...]:
        """What the out-of-scale policy did to each run :meth:`labelled` gave, in order of labelling."""
        return tuple(o for outcomes in self._scales.values() for o in outcomes)

    def label_run(self, run: Run, parser: Parser | None) -> LabelledRun:
        """``run`` (one of these runs) labelled by ``parser`` (None for runs that carry labels), through the label cache."""
        return self._label(run, parser)

    def _label(self, run: Run, parser: Parser | None) -> LabelledRun:
        """One run labelled, through the label cache when there is one.

        Runs joined with ``--gold`` are not cached (their items depend on the gold file too).
        """
        cache = self.label_cache
        if parser is None or run.labels is not None or self.gold is not None:
            return run.label_with(parser)
        pre = self._prelabelled.pop((run.name, parser.name), None)
        parsed = None
        if pre is not None and pre[1] is None:  # read by the parser while the files were read
            parsed = pre[0]
        elif pre is not None:  # labelled by a worker process while reading (see replicate.judge.load.workers)
            labels, key, events = pre
            self._label_keys.setdefault((run.name, parser.name), key)
            if cache is not None:
                cache.events.extend(events)
            return run.label_with(parser, cached=labels)
        out, key = label_through(run, parser, self.fields, self.run_options.get(run.name, self.options), cache, parsed)
        self._label_keys.setdefault((run.name, parser.name), key)
        return out

    def label_keys(self) -> dict[tuple[str, str], str]:
        """(run name, parser) -> label-cache key of the labels given, in order of use, with or without the cache.

        JSON provenance (:func:`~replicate.judge.labelcache.label_provenance`): the key names what the labels
        are a function of (file sha256s, readers, parser, options), so cold,
        warm and ``--no-cache`` runs report the same.
        """
        return dict(self._label_keys)

    @property
    def key_names(self) -> tuple[str, ...]:
        """The names of the parts of an item key (what ``cluster`` names): the key fields of flat JSONL, else the readers'.

        Runs read by readers with their own keys (an lm-eval samples file's ``doc_id``) cluster by those
        names, and by the metadata field ``--cluster metadata.FIELD`` (``doc.FIELD``) appended; flat JSONL (``judge-jsonl@1``) and mixed readers keep the :class:`FieldSpec` key fields.
        """
        names = {f.reader for r in self.runs for f in r.files}
        if not names or "judge-jsonl@1" in names:
            return tuple(self.fields.key_fields)
        key_names = {READERS.get(n).key_names for n in names}
        if len(key_names) != 1:
            return tuple(self.fields.key_fields)
        group = self.options.get("cluster_by") if self.options is not None else None
        if group is not None and all(READERS.get(n).cluster_prefix for n in names):
            return key_names.pop() + (str(group),)  # the readers appended the grouping to every key
        return key_names.pop()

    def report(self, result: Any) -> LoadReport:
        """``result`` (a comparison, a chain's mapping, ...) with what this load did: the JSON of a command.

        Its JSON is the result's, then ``gold`` (what ``gold=`` joined), ``label_cache``
        (the key of every run's labels) and ``warnings`` (those met reading, counted by code):
        ``replicate compare -f json`` prints ``loaded.report(compare(old, new)).to_json()``.
        """
        from replicate.judge.labelcache import label_provenance

        extra: dict[str, Any] = {}
        if self.gold is not None:
            extra["gold"] = self.gold
        keys = label_provenance(self.label_keys())
        if keys is not None:
            extra["label_cache"] = keys
        extra["out_of_scale"] = outcomes_json(self.out_of_scale, self.scale_outcomes())
        extra["warnings"] = self.diagnostics.to_json()
        return LoadReport(result, extra)

    def run(self, name: str) -> Run:
        for r in self.runs:
            if r.name == name:
                return r
        raise UsageError(f"unknown run {name!r}; runs: {', '.join(self.names)}")


@dataclass(frozen=True)
class LoadReport:
    """A result whose JSON also says what the load did (:meth:`Loaded.report`)."""

    result: Any  # a result with to_json(), or a mapping of results
    extra: dict[str, Any]

    def to_json(self) -> dict:
        r = self.result
        own = dict(r.to_json() if hasattr(r, "to_json") else r)
        return {**{k: v for k, v in own.items() if k not in self.extra}, **self.extra}


def load_runs(
    specs: Sequence[RunSpec],
    *,
    fields: FieldSpec = FieldSpec(),
    strict: bool = False,
    reader: str | None = None,
    options: ReadOptions | None = None,
    gold: str | Path | None = None,
    gold_reader: str | None = None,
    need_gold: bool = True,
    label_cache: LabelCache | None = None,
    jobs: int | str = 1,
    parsers: Sequence[str] = (),
    texts: bool = False,
    run_cache: RunCache | None = None,
    prefetch: Sequence[str] = (),
    out_of_scale: str = KEEP,
) -> Loaded:
    """Read every run of ``specs`` (each file once) into a :class:`Loaded`.

    One pass downward: each spec, and the ``gold`` file, resolved once into a load plan
    (:func:`~replicate.judge.load.plan.plan_load`: files, readers, options, parsers, run cache key), the
    plans read (:func:`~replicate.judge.load.workers.read_plans`), runs named by their file renamed after
    their model (:func:`~replicate.judge.select.named_by_model`), then the gold joined
    (:func:`~replicate.judge.gold.attach_gold`).

    ``reader`` names the reader of runs whose spec names none (``--reader``);
    without either, each file's reader is chosen by content. A spec's own
    reader options win over ``options`` for that run. ``gold`` is a
    file of reference labels read with ``gold_reader`` (or by content) and
    joined by key (:func:`~replicate.judge.gold.attach_gold`); without it a run
    that carries no gold is an error unless ``need_gold`` is False. Errors raise :class:`~replicate.errors.BadInput` naming file and line;
    warnings are counted in ``Loaded.diagnostics`` (``strict=True`` raises on the first).
    ``label_cache`` keeps parsed labels across processes (see :mod:`replicate.judge.labelcache`), and
    with it ``run_cache`` (default: one under the same root) read runs.

    ``jobs``: worker processes reading the runs (``"auto"``: as many as CPUs
    and runs when the files are large enough to pay for starting them; see
    :func:`~replicate.judge.load.workers.jobs_for`). Workers also label each run
    with the parsers named in ``parsers`` (the ones the caller will ask
    :meth:`Loaded.labelled` for). The result, the warnings and the errors are
    the same for every number of workers. ``texts``: the caller reads every
    run's raw outputs (workers send them back instead of leaving them to be
    read again from the files on first use).

    ``prefetch``: modules the caller will import next, imported in a
    background thread while worker processes read the runs (this process
    only waits on them; see :mod:`replicate.background`). Without workers
    nothing is prefetched: this process is busy reading, and a second thread
    importing beside it slows it about as much as the import would.

    ``out_of_scale`` (``keep``, ``drop`` or ``clip``): what :meth:`Loaded.labelled` does with a label
    outside its run's scale (:mod:`replicate.judge.outofscale`).
    """
    try:
        policy = check_out_of_scale(out_of_scale)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if run_cache is None and label_cache is not None:
        run_cache = RunCache(label_cache.root)
    plans = plan_load(specs, fields=fields, reader=reader, options=options, gold=gold, gold_reader=gold_reader,
                      parsers=parsers, cache=run_cache is not None)
    diag = Diagnostics(strict=strict)
    read, prelabelled = read_plans(plans.all(), jobs=jobs, diag=diag, run_cache=run_cache, label_cache=label_cache,
                                   texts=texts, prefetch=tuple(prefetch))
    runs, renamed = named_by_model(read[: len(plans.runs)], [p.from_file for p in plans.runs])
    runs, joined = attach_gold(runs, read[-1] if plans.gold is not None else None, diag, need=need_gold)
    own = {renamed.get(p.name, p.name): p.options for p in plans.runs if p.own_options and p.options is not None}
    prelabelled = {(renamed.get(k[0], k[0]), *k[1:]): v for k, v in prelabelled.items()}
    loaded = Loaded(runs, diag, fields, joined, options, label_cache, own, run_cache, renamed=renamed,
                    out_of_scale=policy)
    loaded._prelabelled.update(prelabelled)
    return loaded
