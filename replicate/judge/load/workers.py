"""Reading a command's load plans: in this process, or (and labelling them) in worker processes (I/O).

:func:`read_plans` reads the plans one after another here, or with ``jobs=N``
hands each to one of N worker processes. A worker is given the run's plan
(:class:`~replicate.judge.load.plan.LoadPlan`: its files, readers and options),
reads the run as the serial loader does (from the run cache when it holds it, else
from its files: :func:`run_of`), labels it with
the parsers the command will ask for (through the label cache), and sends
back compact values: the run as a run-cache entry (keys joined into one
string, gold, splits and origins as arrays; see
:mod:`replicate.judge.load.runcache`), one ``int8`` label array per parser,
its warnings and the cache events. The raw outputs are not sent: a command
that needs the texts reads them again from the files on first use (checked
to hold the same items, as for a run from the run cache).

The gold file's plan, when there is one, is read last, in the parent (as
before load plans), and so is a run that reads standard input (given as
``-``), at its turn, as the serial loader reads it: a worker's standard
input is empty (``multiprocessing`` points it at ``os.devnull``).
The parent takes the results in the plans' order, so the runs, the warnings,
the cache events and the first error are those of the serial loader whatever
the number of workers: an error a worker meets (a torn line, a bad file) is
raised with its own message, naming file and line, and an error in an
earlier run wins over one in a later run, as when reading one run after
another. A worker's task holds everything it reads from (they run under the
``spawn`` start method too); on Linux they are forked, which costs no
start-up imports. The caches are safe under concurrent writers: every
entry is written to a temporary file and renamed into place.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from replicate.command_input import is_stdio
from replicate.diagnostics import Diagnostics
from replicate.errors import Message, Param, ReplicateError, UsageError
from replicate.judge.labelcache import LabelCache, label_through
from replicate.judge.load.execute import read_run
from replicate.judge.load.runcache import RunCache, decode, encode
from replicate.parsing import PARSERS

if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext

    import numpy as np

    from replicate.diagnostics import Warning_
    from replicate.judge.load.plan import LoadPlan
    from replicate.judge.model import Run
    from replicate.judge.select import RunSpec
    from replicate.parsing import Parser

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


def jobs_for(specs: Sequence[RunSpec] | Sequence[LoadPlan], jobs: int | str) -> int:
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

    plan: LoadPlan
    strict: bool
    cache_root: str | None  # the run and label caches' root (None: no cache)
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


def read_plans(
    plans: Sequence[LoadPlan],
    *,
    jobs: int | str,
    diag: Diagnostics,
    run_cache: RunCache | None,
    label_cache: LabelCache | None,
    texts: bool = False,
    prefetch: tuple[str, ...] = (),
) -> tuple[tuple[Run, ...], dict[tuple[str, str], Any]]:
    """The run of each plan, in order, and the labels given while reading ((run, parser) -> labels, key, events).

    ``jobs``: worker processes (:func:`jobs_for`, counted over the plans of runs, not the gold file's).
    Serially the plans' parsers label the outputs while they are read (labels, None, None: not yet through
    the label cache); a worker labels its run through the label cache. ``texts`` and ``prefetch``: see
    :func:`load_parallel`.
    """
    workers = jobs_for([p for p in plans if not p.gold], jobs)
    if workers > 1:
        return load_parallel(plans, workers, diag=diag, run_cache=run_cache, label_cache=label_cache, texts=texts,
                             prefetch=prefetch)
    runs = []
    labelled: dict[tuple[str, str], Any] = {}
    for plan in plans:
        runs.append(_read_here(plan, diag, run_cache, labelled))
    return tuple(runs), labelled


def _read_here(plan: LoadPlan, diag: Diagnostics, run_cache: RunCache | None,
               labelled: dict[tuple[str, str], Any]) -> Run:
    """The run of ``plan`` read in this process, its parsers labelling the outputs as they are read (into
    ``labelled``: labels, None, None, not yet through the label cache)."""
    parsed: dict[str, np.ndarray] = {}
    read_with = tuple(PARSERS.get(p) for p in dict.fromkeys(plan.parsers) if p in PARSERS)
    run = run_of(plan, diag, run_cache, read_with, parsed)
    labelled.update(((plan.name, p), (labels, None, None)) for p, labels in parsed.items())
    return run


def run_of(
    plan: LoadPlan, diag: Diagnostics, run_cache: RunCache | None,
    parsers: Sequence[Parser] = (), parsed: dict[str, np.ndarray] | None = None,
) -> Run:
    """The run of ``plan``: from the run cache when it holds it (its outputs read again from the files on first
    use), else read from its files (:func:`~replicate.judge.load.execute.read_run`; ``parsers`` read the outputs
    while the files are read, ``parsed``: see there) and kept in the cache when it read with no warning (so
    warnings and ``--strict`` are the same with and without the cache). A plan without a cache key is read."""
    key = plan.cache_key if run_cache is not None else None
    if run_cache is not None and key is not None:
        cached = run_cache.get(plan.name, key, partial(read_run, plan))
        if cached is not None:
            return cached
    before = len(diag)
    run = read_run(plan, diag, parsers, parsed)
    if run_cache is not None and key is not None and len(diag) == before:
        run_cache.put(key, run)
    return run


def read_in_parent(plan: LoadPlan) -> bool:
    """Whether ``plan`` is read in this process even with workers: the gold file's, and one that reads
    standard input (a file given as ``-``; a worker's standard input is empty)."""
    return plan.gold or any(is_stdio(p) for p in plan.paths)


def work(task: Task) -> Done | ReplicateError:
    """Read (and label) one run: the worker's whole job. A user's error is returned, to be raised in order."""
    plan = task.plan
    root = Path(task.cache_root) if task.cache_root is not None else None
    diag = Diagnostics(strict=task.strict)
    run_cache = RunCache(root) if root is not None else None
    try:
        run = run_of(plan, diag, run_cache)
        labels = {}
        if run.labels is None:
            for name in plan.parsers:
                cache = LabelCache(root) if root is not None else None
                out, key = label_through(run, PARSERS.get(name), plan.fields, plan.options, cache)
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
    plans: Sequence[LoadPlan],
    workers: int,
    *,
    diag: Diagnostics,
    run_cache: RunCache | None,
    label_cache: LabelCache | None,
    texts: bool = False,
    prefetch: tuple[str, ...] = (),
) -> tuple[tuple[Run, ...], dict[tuple[str, str], Any]]:
    """The runs of ``plans`` read by ``workers`` processes, and the labels they gave ((run, parser) -> ...).

    ``texts``: the caller reads every run's raw outputs (workers send them back instead of leaving them to
    be read again from the files on first use). ``prefetch``: modules imported in a background thread once
    the workers have started (:mod:`replicate.background`), while this process waits on them.
    """
    from concurrent.futures import ProcessPoolExecutor

    from replicate.background import prefetch as start_prefetch

    root = str(label_cache.root) if label_cache is not None else None
    runs: list[Run] = []
    labelled: dict[tuple[str, str], Any] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        # the gold file and a run from standard input are read here at their turn (None: no task)
        futures: list[Future | None] = [
            None if read_in_parent(p) else pool.submit(work, Task(p, diag.strict, root, texts))
            for p in plans
        ]
        start_prefetch(*prefetch)  # the workers are forked by now (all at the first submit)
        try:
            for plan, fut in zip(plans, futures):
                if fut is None:
                    runs.append(_read_here(plan, diag, run_cache, labelled))
                    continue
                done = fut.result()
                if isinstance(done, ReplicateError):
                    raise done
                if run_cache is not None:
                    run_cache.events.extend(done.run_events)
                run = done.run
                if run is None:  # the run as an entry: its outputs read again from the files on first use
                    assert done.entry is not None
                    run = decode(done.entry, plan.name, partial(read_run, plan))
                    if run is None:
                        raise RuntimeError(f"run {plan.name!r}: a worker's result did not decode")
                    if done.outputs is not None:
                        run = replace(run, outputs=done.outputs)
                runs.append(run)
                diag.warnings.extend(done.warnings)
                for name, value in done.labels.items():
                    labelled[(plan.name, name)] = value
        finally:
            for fut in futures:
                if fut is not None:
                    fut.cancel()
    return tuple(runs), labelled
