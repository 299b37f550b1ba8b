"""Reading one run of a spec and labelling it through the caches: the steps the serial loader
(:func:`replicate.judge.api.load_runs`) and its worker processes (:mod:`replicate.judge.workers`) share.

A leaf below both, so neither imports the other for them (the layering test forbids import circles).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.labelcache import LabelCache, label_key
from replicate.judge.load import FieldSpec, load_run
from replicate.judge.load.runcache import RunCache, run_key
from replicate.judge.model import LabelledRun, Run
from replicate.judge.select import RunSpec
from replicate.parsing import Parser
from replicate.reading import ReadOptions


def label_through(
    run: Run, parser: Parser, fields: FieldSpec, options: ReadOptions | None, cache: LabelCache | None,
    parsed: np.ndarray | None = None,
) -> tuple[LabelledRun, str]:
    """``run`` labelled by ``parser`` through the label cache (None: parsed), and the labels' cache key.

    ``parsed``: the labels ``parser`` gave the outputs while they were read (not read again)."""
    key = label_key([(f.provenance.sha256, f.reader) for f in run.files], parser.name, fields, options)
    if cache is None:
        return run.label_with(parser, cached=parsed), key
    labels = cache.get(run.name, key, len(run), parser.name)
    if labels is not None:
        return run.label_with(parser, cached=labels), key
    out = run.label_with(parser, cached=parsed)
    cache.put(key, out.labels)
    return out, key


def load_spec(
    spec: RunSpec, *, fields: FieldSpec, diag: Diagnostics, reader: str | None,
    options: ReadOptions | None, run_cache: RunCache | None,
    parsers: Sequence[Parser] = (), parsed: dict[str, np.ndarray] | None = None,
) -> Run:
    """One run read from its files, or taken from the run cache when its files' stat is unchanged.

    A run is cached only when it read with no warning (so warnings and
    ``--strict`` are the same with and without the cache). ``parsers`` read
    the outputs while the files are read (``parsed``: see :func:`~replicate.judge.load.load_run`).
    """
    paths = [Path(p) for p in ([spec.paths] if isinstance(spec.paths, (str, Path)) else spec.paths)]

    def read(into: Diagnostics, with_parsers: bool = False) -> Run:
        return load_run(spec.name, paths, fields=fields, diagnostics=into, reader=reader, options=options,
                        parsers=parsers if with_parsers else (), parsed=parsed if with_parsers else None)

    key = run_key(paths, reader, fields, options) if run_cache is not None and paths else None
    if run_cache is None or key is None:
        return read(diag, True)
    holder: list[Run] = []
    cached = run_cache.get(spec.name, key, lambda: outputs_again(holder[0], read))
    if cached is not None:
        holder.append(cached)
        return cached
    before = len(diag)
    run = read(diag, True)
    if len(diag) == before:
        run_cache.put(key, run)
    return run


def outputs_again(cached: Run, read) -> Sequence[str | None]:
    """The raw outputs of a run taken from the run cache, read from its files (which must still hold the same items)."""
    fresh = read(Diagnostics())
    same = [f.provenance.sha256 for f in fresh.files] == [f.provenance.sha256 for f in cached.files]
    if not same or len(fresh) != len(cached) or not (fresh.keys == cached.keys).all():
        paths = ", ".join(f.provenance.path for f in cached.files)
        raise BadInput(
            f"run {cached.name!r}: its files changed while it was being read (rerun the command)", path=paths
        )
    return fresh.outputs  # streamed from the files when their reader's bulk path read them
