"""Reading released judge files into :class:`~replicate.judge.model.Run` values (I/O).

Two formats:

- **flat JSONL** (``.jsonl`` or ``.jsonl.gz``): one JSON object per item, e.g.
  ``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 0.0,
  "model_output": "##final score: 1"}``. Which fields hold the key, the gold
  grade and the raw output is a :class:`FieldSpec`.
- **grouped EXAM** (``.jsonl.gz``): each line ``[query_id, [paragraph, ...]]``;
  each paragraph is one item whose label is already decided by its exam grades
  (see :func:`replicate_parsers.exam.exam_label`).

Each file is read once (gzip is recognised by its magic bytes). Every record is
checked; what is wrong is either an error (:class:`BadInput` naming file and
line) or a counted warning in the :class:`Diagnostics` (``--strict`` makes those
errors too). Nothing is dropped silently. The rules (reading bytes: :mod:`~replicate.judge.load.readfile`; flat records:
:mod:`~replicate.judge.load.flat`; EXAM: the ``exam@1`` reader; bulk paths: :mod:`~replicate.judge.load.fast`):

Errors (exit 2): a line that is not JSON or not valid UTF-8; a UTF-16 file; a torn last line
(the file ends mid-record); an array or scalar where an object is due; a
missing key, gold or output field; a key that is not a string or an integer; a
gold grade that is not a non-negative integer (2.5, -1, "abc", null); a
duplicate key with different content (within a file or across a run's files);
a truncated or corrupt gzip; a run with no records.

Counted warnings (code): a blank line (``blank-line``); a UTF-8 byte-order mark
(``bom``); an empty file (``empty-file``); a duplicate key with the same gold
and output (``duplicate-identical``, first kept); a ``null`` output
(``null-output``, read as unparsed); an EXAM paragraph without graded
questions (``exam-no-questions``, unparsed) or whose judgment names another
query than its line (``exam-query-mismatch``).

Which reader reads a file is a :class:`~replicate.reading.Reader` named with
``reader=`` (``--reader``) or chosen by content (:mod:`~replicate.judge.load.detect`);
the two formats above are the built-in readers ``judge-jsonl@1`` and
``exam@1``; others (``trec-qrels@1``, ``umbrela-judge@1``, plugins) hand the
loader :class:`~replicate.reading.Record` values (:mod:`~replicate.judge.load.records`).
"""

from __future__ import annotations

import gc
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.keytable import as_array
from replicate.judge.load.detect import choose_reader, directory_file
from replicate.judge.load.fast import FAST_PATHS
from replicate.judge.load.readfile import BOM, Items, RawFile, read_file
from replicate.judge.load.records import load_records
from replicate.judge.model import Origins, Run, RunFile, readonly
from replicate.parsing import Parser
from replicate.reading import READERS, Reader, ReadOptions
from replicate.readkit import key_text
from replicate.readkit_records import FieldSpec, gold_int

__all__ = ["FieldSpec", "load_run", "detect_format", "key_text", "gold_int", "FORMATS"]

FORMATS = ("auto", "jsonl", "exam")


def _first_char(data: bytes) -> int | None:
    stripped = data[:4096].lstrip(BOM).lstrip()
    return stripped[0] if stripped else None


def detect_format(data: bytes) -> str:
    """``exam`` when the first non-blank byte opens a JSON array, else ``jsonl``."""
    return "exam" if _first_char(data) == ord("[") else "jsonl"


def load_run(
    name: str,
    paths: Sequence[str | Path] | str | Path,
    *,
    fields: FieldSpec = FieldSpec(),
    diagnostics: Diagnostics,
    format: str = "auto",
    reader: str | None = None,
    options: ReadOptions | None = None,
    gold: bool = False,
    parsers: Sequence[Parser] = (),
    parsed: dict[str, np.ndarray] | None = None,
) -> Run:
    """Read one run (one file, or several pooled, e.g. DL 2019 + DL 2020).

    ``gold``: these are the files of ``--gold`` (readers of gold alone are then candidates by content).

    ``parsers``: parsers to read the outputs with while they are read (the bulk paths do); when every item's
    outputs were, ``parsed`` (given empty) gets parser name -> the int8 labels, as
    :meth:`~replicate.judge.model.Run.label_with` would give them, and the outputs need not be read again.

    ``reader`` names the reader of every file (``--reader``); without it each
    file's reader is chosen by content (see :func:`~replicate.judge.load.detect.choose_reader`).
    ``format`` is the older spelling: ``jsonl`` means ``judge-jsonl@1``,
    ``exam`` means ``exam@1``, ``auto`` chooses by content. Items keep file
    order; an item key seen twice in the run (within or across files) is a
    warning when gold and output agree, else an error. The split of each item
    is its file's parent directory name. A directory (a HELM run directory) is
    read through the file in it its reader names (:func:`~replicate.judge.load.detect.directory_file`).
    """
    if format not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    if reader is None and format != "auto":
        reader = _FORMAT_READERS[format]
    given_paths = [paths] if isinstance(paths, (str, Path)) else paths
    file_paths = [Path(p) for p in given_paths]
    if not file_paths:
        raise UsageError(f"run {name!r} names no files")
    opts = options if options is not None else ReadOptions(fields=fields)
    if opts.fields is None:
        opts = replace(opts, fields=fields)
    given = READERS.get(reader) if reader is not None else None
    acc = Items.empty(parsers)
    files: list[RawFile] = []
    run_files: list[RunFile] = []
    kinds: list[Reader] = []
    # Parsed records are acyclic: pause the cyclic collector while hundreds of
    # thousands of them are made (it would otherwise scan them again and again).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i, given_path in enumerate(file_paths):
            path = directory_file(given_path, given)
            f = read_file(path)
            files.append(f)
            acc.last_file = i == len(file_paths) - 1
            r = given if given is not None else choose_reader(f, opts, previous=kinds[-1] if kinds else None, gold=gold)
            split = path.parent.name
            fast = FAST_PATHS.get(r.name)
            if fast is not None:
                rf = fast(r, f, i, opts, acc, files, diagnostics, split)
            else:
                rf = load_records(r, f, i, opts, acc, files, diagnostics, split)
            run_files.append(replace(rf, reader=r.name, chosen="given" if given is not None else "by content"))
            kinds.append(r)
    finally:
        if gc_was_enabled:
            gc.enable()
    run = _finish(name, file_paths, acc, run_files, kinds, files)
    if parsed is not None and run.labels is None:
        parsed.update((k, readonly(v)) for k, v in acc.parsed_labels().items())
    return run


_FORMAT_READERS = {"jsonl": "judge-jsonl@1", "exam": "exam@1"}


def _finish(
    name: str, paths: list[Path], acc: Items, run_files: list[RunFile], readers: list[Reader], files: list[RawFile]
) -> Run:
    used = [(rf, r) for rf, r in zip(run_files, readers) if rf.records]
    yields = {r.yields for _, r in used}
    if len(yields) > 1 or len({r.decided for _, r in used if r.yields == "labels"}) > 1:
        if {r.name for _, r in used} == {"exam@1", "judge-jsonl@1"}:
            listing = ", ".join(f"{rf.provenance.path} ({rf.format})" for rf in run_files)
            raise BadInput(f"run {name!r} mixes EXAM-graded and raw-output files: {listing}")
        listing = ", ".join(f"{rf.provenance.path} ({r.name}: {r.yields})" for rf, r in zip(run_files, readers))
        raise BadInput(f"run {name!r} mixes files whose records differ in kind (raw outputs, decided labels, verdicts): {listing}")
    if not len(acc):
        raise BadInput(f"run {name!r} has no records", path=", ".join(str(p) for p in paths))
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
