"""Reading released judge files into :class:`~replicate.judge.model.Run` values (I/O).

Two formats:

- **flat JSONL** (``.jsonl`` or ``.jsonl.gz``): one JSON object per item, e.g.
  ``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 0.0,
  "model_output": "##final score: 1"}``. Which fields hold the key, the gold
  grade and the raw output is a :class:`FieldSpec`.
- **grouped EXAM** (``.jsonl.gz``): each line ``[query_id, [paragraph, ...]]``;
  each paragraph is one item whose label is already decided by its exam grades
  (see :func:`exam_label`).

Each file is read once (gzip is recognised by its magic bytes). Every record is
checked; what is wrong is either an error (:class:`BadInput` naming file and
line) or a counted warning in the :class:`Diagnostics` (``--strict`` makes those
errors too). Nothing is dropped silently. The rules (reading bytes: :mod:`~replicate.judge.load.readfile`; flat records:
:mod:`~replicate.judge.load.flat`; EXAM: :mod:`~replicate.judge.load.exam`):

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
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Sequence

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.load.exam import exam_label, load_exam_file
from replicate.judge.load.fields import FieldSpec, gold_int, key_text
from replicate.judge.load.flat import load_flat_file
from replicate.judge.load.readfile import BOM, Items, RawFile, read_file
from replicate.judge.model import Origins, Run, RunFile, readonly

__all__ = ["FieldSpec", "load_run", "detect_format", "exam_label", "key_text", "gold_int", "FORMATS"]

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
) -> Run:
    """Read one run (one file, or several pooled, e.g. DL 2019 + DL 2020).

    ``format`` is ``auto`` (a file whose first line is a JSON array is grouped
    EXAM, anything else flat JSONL), ``jsonl`` or ``exam``. Items keep file
    order; an item key seen twice in the run (within or across files) is a
    warning when gold and output agree, else an error. The split of each item
    is its file's parent directory name.
    """
    if format not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    given = [paths] if isinstance(paths, (str, Path)) else paths
    file_paths = [Path(p) for p in given]
    if not file_paths:
        raise UsageError(f"run {name!r} names no files")
    acc = Items.empty()
    files: list[RawFile] = []
    run_files: list[RunFile] = []
    # Parsed records are acyclic: pause the cyclic collector while hundreds of
    # thousands of them are made (it would otherwise scan them again and again).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        _read_all(file_paths, format, fields, acc, files, run_files, diagnostics)
    finally:
        if gc_was_enabled:
            gc.enable()
    return _finish(name, file_paths, acc, run_files)


def _read_all(paths, format, fields, acc, files, run_files, diagnostics) -> None:
    for i, path in enumerate(paths):
        f = read_file(path)
        files.append(f)
        fmt = detect_format(f.data) if format == "auto" else format
        split = path.parent.name
        if fmt == "exam":
            rf = load_exam_file(f, i, acc, files, diagnostics, split)
        else:
            rf = load_flat_file(f, i, fields, acc, files, diagnostics, split)
        run_files.append(rf)


def _finish(name: str, paths: list[Path], acc: Items, run_files: list[RunFile]) -> Run:
    kinds = {rf.format for rf in run_files if rf.records}
    if len(kinds) > 1:
        listing = ", ".join(f"{rf.provenance.path} ({rf.format})" for rf in run_files)
        raise BadInput(f"run {name!r} mixes EXAM-graded and raw-output files: {listing}")
    if not acc.keys:
        raise BadInput(f"run {name!r} has no records", path=", ".join(str(p) for p in paths))
    n = len(acc.keys)
    keys = np.empty(n, dtype=object)
    keys[:] = acc.keys
    labels = None
    if kinds == {"exam"}:
        labels = readonly(np.asarray(acc.labels, dtype=np.int8))
    splits = np.empty(n, dtype=object)
    splits[:] = acc.splits
    file_index, line = acc.origins()
    return Run(
        name=name,
        keys=readonly(keys),
        gold=readonly(acc.gold_array()),
        outputs=tuple(acc.outputs),
        files=tuple(run_files),
        labels=labels,
        splits=readonly(splits),
        origins=Origins(readonly(file_index), readonly(line)),
    )
