"""Reading (and labelling) a command's runs in worker processes (I/O).

``load_runs(..., jobs=N)`` hands each run to one of N worker processes. A
worker is given the run's file paths and options, reads the run as the
serial loader does (through the run cache when there is one), labels it with
the parsers the command will ask for (through the label cache), and sends
back compact values: the run as a run-cache entry (keys joined into one
string, gold, splits and origins as arrays; see
:mod:`replicate.judge.load.runcache`), one ``int8`` label array per parser,
its warnings and the cache events. The raw outputs are not sent: a command
that needs the texts reads them again from the files on first use (checked
to hold the same items, as for a run from the run cache).

The parent takes the results in the runs' order, so the runs, the warnings,
the cache events and the first error are those of the serial loader whatever
the number of workers: an error a worker meets (a torn line, a bad file) is
raised with its own message, naming file and line, and an error in an
earlier run wins over one in a later run, as when reading one run after
another. Workers take nothing from the parent but their task (they run
under the ``spawn`` start method too); on Linux they are forked, which costs
no start-up imports. The caches are safe under concurrent writers: every
entry is written to a temporary file and renamed into place.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from replicate.errors import Message, Param, ReplicateError, UsageError

if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext

    import numpy as np

    from replicate.diagnostics import Diagnostics, Warning_
    from replicate.judge.labelcache import LabelCache
    from replicate.judge.load import FieldSpec
    from replicate.judge.load.runcache import RunCache
    from replicate.judge.model import Run
    from replicate.judge.select import RunSpec
    from replicate.reading import ReadOptions

#: ``jobs="auto"`` starts workers only when the run files hold at least this many bytes in all:
#: below it, starting processes costs about what they save (bench/bench_process.py).
AUTO_MIN_BYTES = 8 << 20


def cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # the loader names a missing file


def jobs_for(specs: Sequence[RunSpec], jobs: int | str) -> int:
    """How many worker processes read ``specs`` (1: read in this process).

    ``jobs`` is a positive number or ``"auto"``: one worker per CPU (at most
    one per run) when there are two runs or more and their files hold at
    least :data:`AUTO_MIN_BYTES`, else 1.
    """
    if jobs == "auto":
        if len(specs) < 2 or cpus() < 2:
            return 1
        if sum(_size(p) for s in specs for p in s.paths) < AUTO_MIN_BYTES:
            return 1
        return min(cpus(), len(specs))
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UsageError(Message(Param("jobs"), f" must be a positive number or 'auto'; got {jobs!r}"))
    return max(1, min(jobs, len(specs)))


@dataclass(frozen=True)
class Task:
    """One run to read in a worker: everything the worker needs, nothing it would take from the parent."""

    spec: RunSpec
    fields: FieldSpec
    reader: str | None
    options: ReadOptions | None
    strict: bool
    cache_root: str | None  # the run and label caches' root (None: no cache)
    parsers: tuple[str, ...]  # label the run with these (none: read only)
    texts: bool = False  # send the raw outputs back too


@dataclass
class Done:
    """What a worker sends back for one run."""

    entry: bytes | None  # the run as a run-cache entry (outputs left to be read on first use)
    run: Run | None  # the run itself, when it has no entry form (labels read from the files, odd keys)
    warnings: list[Warning_]
    run_events: list  # the run cache's (run, key, event)s
    labels: dict[str, tuple[np.ndarray, str, list]] = field(default_factory=dict)  # parser -> labels, key, label-cache events
    outputs: tuple[str | None, ...] | None = None  # the raw outputs, when the task asks for them


def work(task: Task) -> Done | ReplicateError:
    """Read (and label) one run: the worker's whole job. A user's error is returned, to be raised in order."""
    from replicate.diagnostics import Diagnostics
    from replicate.judge.labelcache import LabelCache
    from replicate.judge.load.runcache import RunCache, encode
    from replicate.judge.runload import label_through, load_spec
    from replicate.parsing import PARSERS

    root = Path(task.cache_root) if task.cache_root is not None else None
    diag = Diagnostics(strict=task.strict)
    run_cache = RunCache(root) if root is not None else None
    try:
        run = load_spec(task.spec, fields=task.fields, diag=diag, reader=task.reader, options=task.options,
                         run_cache=run_cache)
        labels = {}
        if run.labels is None:
            for name in task.parsers:
                cache = LabelCache(root) if root is not None else None
                out, key = label_through(run, PARSERS.get(name), task.fields, task.options, cache)
                labels[name] = (out.labels, key, list(cache.events) if cache is not None else [])
    except ReplicateError as exc:
        return exc
    entry = encode(run)
    return Done(
        entry=entry, run=run if entry is None else None, warnings=list(diag.warnings),
        run_events=list(run_cache.events) if run_cache is not None else [], labels=labels,
        outputs=tuple(run.outputs) if task.texts and entry is not None else None,
    )


def _context() -> BaseContext:
    """Fork where it is the platform's safe default (Linux: no start-up imports), else spawn."""
    import multiprocessing

    if sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def load_parallel(
    specs: Sequence[RunSpec],
    workers: int,
    *,
    fields: FieldSpec,
    diag: Diagnostics,
    reader: str | None,
    options: dict[str, ReadOptions | None],
    run_cache: RunCache | None,
    label_cache: LabelCache | None,
    parsers: tuple[str, ...],
    texts: bool = False,
    prefetch: tuple[str, ...] = (),
) -> tuple[tuple[Run, ...], dict[tuple[str, str], Any]]:
    """The runs of ``specs`` read by ``workers`` processes, and the labels they gave ((run, parser) -> ...).

    ``prefetch``: modules imported in a background thread once the workers
    have started (:mod:`replicate.background`), while this process waits on them.
    """
    from concurrent.futures import ProcessPoolExecutor

    from replicate.background import prefetch as start_prefetch
    from replicate.reading import READERS

    READERS.names()  # the readers' plugins loaded once here, not again in every forked worker
    root = str(label_cache.root) if label_cache is not None else None
    tasks = [Task(s, fields, s.reader or reader, options[s.name], diag.strict, root, parsers, texts) for s in specs]
    runs: list[Run] = []
    labelled: dict[tuple[str, str], Any] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        futures: list[Future] = [pool.submit(work, t) for t in tasks]
        start_prefetch(*prefetch)  # the workers are forked by now (all at the first submit)
        try:
            for task, fut in zip(tasks, futures):
                done = fut.result()
                if isinstance(done, ReplicateError):
                    raise done
                runs.append(_run_of(task, done, fields, run_cache))
                diag.warnings.extend(done.warnings)
                for name, value in done.labels.items():
                    labelled[(task.spec.name, name)] = value
        finally:
            for fut in futures:
                fut.cancel()
    return tuple(runs), labelled


def _run_of(task: Task, done: Done, fields: FieldSpec, run_cache: RunCache | None) -> Run:
    from replicate.judge.load import load_run
    from replicate.judge.load.runcache import decode
    from replicate.judge.runload import outputs_again

    if run_cache is not None:
        run_cache.events.extend(done.run_events)
    if done.run is not None:
        return done.run
    assert done.entry is not None
    spec = task.spec

    def read(into: Diagnostics) -> Run:
        return load_run(spec.name, list(spec.paths), fields=fields, diagnostics=into, reader=task.reader,
                        options=task.options)

    holder: list[Run] = []
    run = decode(done.entry, spec.name, lambda: outputs_again(holder[0], read))
    if run is None:
        raise RuntimeError(f"run {spec.name!r}: a worker's result did not decode")
    if done.outputs is not None:
        return replace(run, outputs=done.outputs)
    holder.append(run)
    return run
