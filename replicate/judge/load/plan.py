"""A run spec resolved once into what reading it takes: the load plan (I/O: no file is read, only stat'ed).

:func:`plan_load` turns a command's runs (:class:`~replicate.judge.select.RunSpec`) and its gold file into
:class:`LoadPlan` values, one per run and one for the gold file. A plan says which files are read (a directory
given as a run file is the file in it its reader names), each file's reader (named, else chosen by the file's
head as it is opened: :mod:`~replicate.judge.load.detect`), the field and reader options, the parsers that label
the outputs while they are read and the run cache key (:func:`run_key`). The executor
(:mod:`~replicate.judge.load.execute`) reads a plan into a run.

Choosing a reader by content is left to the reading because it reads the file's head and asks every installed
reader about it (about 1 ms a file): a run the run cache holds is never opened, and planning it must not open it.

Whatever is wrong with a spec as such is an error here, before any file is read: an unknown reader, two runs
of one name, a run of no files, a directory no reader reads, a file of gold alone given as a run.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replicate.errors import Message, Param, UsageError
from replicate.judge.labelcache import reading_text
from replicate.judge.load.detect import directory_file
from replicate.judge.load.runcache import MAGIC as RUN_MAGIC
from replicate.reading.contract import READERS, ReadOptions
from replicate.reading.jsonl import FieldSpec

if TYPE_CHECKING:
    from replicate.judge.select import RunSpec

#: ``format=`` of :func:`~replicate.judge.load.load_run`, the older spelling of a reader.
FORMATS = ("auto", "jsonl", "exam")
_FORMAT_READERS = {"jsonl": "judge-jsonl@1", "exam": "exam@1"}


@dataclass(frozen=True)
class LoadPlan:
    """One run (or the gold file) resolved: what the executor reads, and how."""

    name: str
    paths: tuple[Path, ...]  # the files as given (the run cache's key is over these)
    files: tuple[Path, ...]  # the files read (for a directory given as a run file, the file in it its reader names)
    fields: FieldSpec = FieldSpec()
    options: ReadOptions | None = None  # as given: the run's own, else the command's (None: the fields alone)
    reader: str | None = None  # the reader named for every file (None: each chosen by its content)
    parsers: tuple[str, ...] = ()  # the parsers that label the outputs while they are read
    cache_key: str | None = None  # the run cache's key (None: not cached)
    gold: bool = False  # the files of ``--gold``
    own_options: bool = False  # the run sets reader options of its own (a runs file's inline table)
    from_file: bool = False  # the name is its file's: a model its files all name replaces it

    @property
    def read_options(self) -> ReadOptions:
        """The options the readers are given: :attr:`options`, the field spec filled in."""
        opts = self.options if self.options is not None else ReadOptions(fields=self.fields)
        return opts if opts.fields is not None else replace(opts, fields=self.fields)


@dataclass(frozen=True)
class Plans:
    """A command's runs resolved, then its gold file (None: no ``--gold``)."""

    runs: tuple[LoadPlan, ...]
    gold: LoadPlan | None = None

    def all(self) -> tuple[LoadPlan, ...]:
        """The plans in reading order: every run, then the gold file."""
        return self.runs + ((self.gold,) if self.gold is not None else ())


def plan_load(
    specs: Sequence[RunSpec],
    *,
    fields: FieldSpec = FieldSpec(),
    reader: str | None = None,
    options: ReadOptions | None = None,
    gold: str | Path | None = None,
    gold_reader: str | None = None,
    parsers: Sequence[str] = (),
    cache: bool = False,
) -> Plans:
    """The plans of ``specs`` and of the ``gold`` file (see :func:`~replicate.judge.api.load_runs` for the
    arguments); ``cache``: the runs are read through the run cache (their plans carry its key).

    A spec's own reader options win over ``options`` for that run; ``parsers`` label the outputs while they
    are read, except with ``gold`` (its join drops items).
    """
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"run names must be unique; repeated: {', '.join(dupes)}")
    if reader is not None:
        READERS.get(reader)  # an unknown name is a usage error before any file is read
    base = options or ReadOptions(fields=fields)
    labelling = tuple(parsers) if gold is None else ()
    own = {s.name: base.overridden(dict(s.options)) for s in specs if s.options}
    # (name, files, reader named, options, gold?): every run, then the gold file
    wanted: list[tuple[str, Sequence[Path] | str | Path, str | None, ReadOptions | None, bool]] = [
        (s.name, s.paths, s.reader or reader, own.get(s.name, options), False) for s in specs
    ]
    if gold is not None:
        wanted.append(("gold", gold, gold_reader, options, True))
    plans = [
        plan_run(name, paths, fields=fields, reader=named, options=opts, gold=is_gold, parsers=labelling,
                 cache=cache and not is_gold)
        for name, paths, named, opts, is_gold in wanted
    ]
    for plan in plans[: len(specs)]:
        # a file of gold only (its reader's gold_only) is not a run: it goes with --gold (a reader chosen by
        # content for a run's file never reads gold alone)
        if plan.reader is not None and READERS.get(plan.reader).gold_only:
            raise UsageError(Message(
                f"run {plan.name!r}: {plan.files[0]} holds gold labels only ({plan.reader}), "
                "not a judge's reading; give it with ", Param("gold"), " FILE",
            ))
    runs = tuple(replace(p, own_options=s.name in own, from_file=s.from_file) for p, s in zip(plans, specs))
    return Plans(runs, plans[-1] if gold is not None else None)


def plan_run(
    name: str,
    paths: Sequence[str | Path] | str | Path,
    *,
    fields: FieldSpec = FieldSpec(),
    format: str = "auto",
    reader: str | None = None,
    options: ReadOptions | None = None,
    gold: bool = False,
    parsers: Sequence[str] = (),
    cache: bool = False,
) -> LoadPlan:
    """One run's plan (the arguments as :func:`~replicate.judge.load.load_run` takes them).

    ``reader`` names the reader of every file; without it each file's reader is chosen by its head when it
    is read (:func:`~replicate.judge.load.detect.choose_reader`). A directory is read through the file in it
    its reader names (:func:`~replicate.judge.load.detect.directory_file`). ``cache``: the plan carries the
    run cache's key.
    """
    if format not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    if reader is None and format != "auto":
        reader = _FORMAT_READERS[format]
    given_paths = [paths] if isinstance(paths, (str, Path)) else paths
    file_paths = tuple(Path(p) for p in given_paths)
    if not file_paths:
        raise UsageError(f"run {name!r} names no files")
    given = READERS.get(reader) if reader is not None else None
    files = tuple(directory_file(p, given) for p in file_paths)
    key = run_key(file_paths, reader, fields, options) if cache else None
    return LoadPlan(name, file_paths, files, fields, options, reader, tuple(parsers), key, gold)


def _version() -> str:
    from replicate.version import tool_version

    return tool_version()


def run_key(paths: Sequence[Path], reader: str | None, fields: Any, options: ReadOptions | None) -> str | None:
    """The run cache's *stat pre-key* of a run (:mod:`~replicate.judge.load.runcache`), or None when a file
    cannot be stat'ed (then the run is read normally).

    The sha256 of the entry format, the replicate version, the reader named (None: chosen by content), the
    field and reader options, and for every file in order its path as given, absolute path, size,
    ``mtime_ns``, ``ctime_ns``, inode and device. A directory given as a run file (a HELM run) is not
    cached: its stat does not change when a file in it is rewritten in place.
    """
    h = hashlib.sha256()
    h.update(RUN_MAGIC)
    h.update(f"version={_version()}\nreader={reader}\n{reading_text(fields, options, gold=True)}".encode())
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        if stat.S_ISDIR(st.st_mode):
            return None
        h.update(f"file={p}\0{os.path.abspath(p)}\0{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}\n".encode())
    return h.hexdigest()
