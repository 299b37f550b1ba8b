"""Executing a load plan: one run read from its files (I/O).

:func:`read_run` takes one :class:`~replicate.judge.load.plan.LoadPlan` (what :mod:`~replicate.judge.load.plan`
resolved; a run the run cache holds is taken from it before, by :func:`~replicate.judge.load.workers.run_of`)
and drives every file once through the stages of reading it: the stream stage opens it
(:func:`~replicate.judge.load.readfile.read_file`, its head read when its reader is chosen by it), its reader
is the planned one or the one its head shows (:func:`~replicate.judge.load.detect.reader_of`), the record stage
reads its items, through a bulk path (:mod:`~replicate.judge.load.fast`) where the reader has one, else its
records (:mod:`~replicate.judge.load.records`), into one accumulator (:class:`~replicate.judge.load.items.Items`),
which builds the run. The serial loader and the worker processes (:mod:`~replicate.judge.load.workers`) both
read a run through here."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.judge.load.detect import reader_of
from replicate.judge.load.fast import FAST_PATHS
from replicate.judge.load.items import Items
from replicate.judge.load.plan import LoadPlan
from replicate.judge.load.readfile import RawFile, read_file
from replicate.judge.load.records import load_records
from replicate.judge.model import Run, RunFile, readonly
from replicate.parsing import Parser
from replicate.reading.contract import READERS, Reader


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
            # one pass a file: its bytes opened (and its head read when its reader is chosen by it), its reader,
            # its records coded into the accumulator
            f = read_file(path, sniff=given is None)
            files.append(f)
            acc.last_file = i == last
            if given is not None:
                r = given
            else:
                assert f.sniffed is not None
                r = reader_of(f.sniffed, f.path, opts, previous=kinds[-1] if kinds else None, gold=plan.gold)
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
    run = acc.finish(plan.name, plan.paths, run_files, kinds, files)
    if parsed is not None and run.labels is None:
        parsed.update((k, readonly(v)) for k, v in acc.parsed_labels().items())
    return run
