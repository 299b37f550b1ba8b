"""Executing a load plan: one run read from its files, or taken from the run cache (I/O).

:func:`execute` takes one :class:`~replicate.judge.load.plan.LoadPlan` (what :mod:`~replicate.judge.load.plan`
resolved) through the run cache (:meth:`~replicate.judge.load.runcache.RunCache.through`): a hit is the run as
it was read, its outputs read again from the files on first use; otherwise :func:`read_run` reads every file
with its planned reader, or the one its head shows (:func:`~replicate.judge.load.detect.choose_reader`) when
the plan names none, through a bulk path (:mod:`~replicate.judge.load.fast`) where the reader has one, else its
records (:mod:`~replicate.judge.load.records`), into one accumulator of items
(:class:`~replicate.judge.load.readfile.Items`), and finishes the run, which the cache keeps when it read with no
warning. The serial loader and the worker processes (:mod:`~replicate.judge.load.workers`) both read a run
through here.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.keytable import as_array
from replicate.judge.load.detect import choose_reader
from replicate.judge.load.fast import FAST_PATHS
from replicate.judge.load.plan import LoadPlan
from replicate.judge.load.readfile import Items, RawFile, read_file
from replicate.judge.load.records import load_records
from replicate.judge.load.runcache import RunCache
from replicate.judge.model import Origins, Run, RunFile, readonly
from replicate.parsing import Parser
from replicate.reading.contract import READERS, Reader


def execute(
    plan: LoadPlan, diag: Diagnostics, run_cache: RunCache | None,
    parsers: Sequence[Parser] = (), parsed: dict[str, np.ndarray] | None = None,
) -> Run:
    """The run of ``plan``, through the run cache when there is one and the plan has a key
    (:meth:`~replicate.judge.load.runcache.RunCache.through`). ``parsers`` read the outputs while the files
    are read (``parsed``: see :func:`read_run`)."""
    if run_cache is None or plan.cache_key is None:
        return read_run(plan, diag, parsers, parsed)
    return run_cache.through(plan.name, plan.cache_key, diag, lambda into: read_run(plan, into, parsers, parsed),
                             partial(read_run, plan))


def read_run(
    plan: LoadPlan, diag: Diagnostics, parsers: Sequence[Parser] = (), parsed: dict[str, np.ndarray] | None = None,
) -> Run:
    """The run of ``plan`` read from its files (each once), warnings in ``diag``.

    ``parsers``: parsers that read the outputs while they are read (the bulk paths do); when every item's
    outputs were, ``parsed`` (given empty) gets parser name -> the int8 labels, as
    :meth:`~replicate.judge.model.Run.label_with` would give them, and the outputs need not be read again.
    Items keep file order; an item key seen twice in the run (within or across files) is a warning when
    gold and output agree, else an error. The split of each item is its file's parent directory name.
    """
    opts = plan.read_options
    given = READERS.get(plan.reader) if plan.reader is not None else None
    acc = Items.empty(parsers)
    files: list[RawFile] = []
    run_files: list[RunFile] = []
    kinds: list[Reader] = []
    last = len(plan.files) - 1
    # Parsed records are acyclic: pause the cyclic collector while hundreds of
    # thousands of them are made (it would otherwise scan them again and again).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i, path in enumerate(plan.files):
            f = read_file(path)
            files.append(f)
            acc.last_file = i == last
            r = given if given is not None else choose_reader(f, opts, previous=kinds[-1] if kinds else None, gold=plan.gold)
            split = path.parent.name
            fast = FAST_PATHS.get(r.name)
            if fast is not None:
                rf = fast(r, f, i, opts, acc, files, diag, split)
            else:
                rf = load_records(r, f, i, opts, acc, files, diag, split)
            run_files.append(replace(rf, reader=r.name, chosen="given" if given is not None else "by content"))
            kinds.append(r)
    finally:
        if gc_was_enabled:
            gc.enable()
    run = _finish(plan, acc, run_files, kinds, files)
    if parsed is not None and run.labels is None:
        parsed.update((k, readonly(v)) for k, v in acc.parsed_labels().items())
    return run


def _finish(plan: LoadPlan, acc: Items, run_files: list[RunFile], readers: list[Reader], files: list[RawFile]) -> Run:
    name = plan.name
    used = [(rf, r) for rf, r in zip(run_files, readers) if rf.records]
    yields = {r.yields for _, r in used}
    if len(yields) > 1 or len({r.decided for _, r in used if r.yields == "labels"}) > 1:
        if {r.name for _, r in used} == {"exam@1", "judge-jsonl@1"}:
            listing = ", ".join(f"{rf.provenance.path} ({rf.format})" for rf in run_files)
            raise BadInput(f"run {name!r} mixes EXAM-graded and raw-output files: {listing}")
        listing = ", ".join(f"{rf.provenance.path} ({r.name}: {r.yields})" for rf, r in zip(run_files, readers))
        raise BadInput(f"run {name!r} mixes files whose records differ in kind (raw outputs, decided labels, verdicts): {listing}")
    if not len(acc):
        raise BadInput(f"run {name!r} has no records", path=", ".join(str(p) for p in plan.paths))
    kind = used[0][1] if used else readers[0]
    labels = None
    if kind.yields != "outputs":
        labels = readonly(acc.label_array())
    file_index, line = acc.origin_columns()
    return Run(
        name=name,
        keys=as_array(acc.keys.build()),
        gold=readonly(acc.gold_array()),
        outputs=acc.outputs_from(files),
        files=tuple(run_files),
        labels=labels,
        splits=as_array(acc.split_column()),
        origins=Origins(as_array(file_index), as_array(line)),
        yields=kind.yields,
        decided=kind.decided,
        label_set=kind.label_set,
    )
