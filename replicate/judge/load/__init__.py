"""Reading released judge files into :class:`~replicate.judge.model.Run` values (I/O).

Two formats:

- **flat JSONL** (``.jsonl`` or ``.jsonl.gz``): one JSON object per item, e.g.
  ``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 0.0,
  "model_output": "##final score: 1"}``. Which fields hold the key, the gold
  grade and the raw output is a :class:`FieldSpec`.
- **grouped EXAM** (``.jsonl.gz``): each line ``[query_id, [paragraph, ...]]``;
  each paragraph is one item whose label is already decided by its exam grades
  (see :func:`replicate_parsers.exam.exam_label`).

Each file's records are read once (gzip is recognised by its magic bytes; a bulk path that declines a file
has read it before). Every record is
checked; what is wrong is either an error (:class:`BadInput` naming file and
line) or a counted warning in the :class:`Diagnostics` (``--strict`` makes those
errors too). Nothing is dropped silently. The rules (reading bytes: :mod:`~replicate.judge.load.readfile`; the items of a run:
:mod:`~replicate.judge.load.items`; flat records:
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

Which reader reads a file is a :class:`~replicate.reading.contract.Reader` named with
``reader=`` (``--reader``) or chosen by content (:mod:`~replicate.judge.load.detect`), once, in the run's
load plan (:mod:`~replicate.judge.load.plan`), which :mod:`~replicate.judge.load.execute` reads;
the two formats above are the built-in readers ``judge-jsonl@1`` and
``exam@1``; others (``trec-qrels@1``, ``umbrela-judge@1``, plugins) hand the
loader :class:`~replicate.reading.contract.Record` values (:mod:`~replicate.judge.load.records`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.judge.load.execute import read_run
from replicate.judge.load.plan import FORMATS, plan_run
from replicate.judge.load.readfile import BOM
from replicate.judge.model import Run
from replicate.parsing import Parser
from replicate.reading.contract import ReadOptions
from replicate.reading.jsonl import FieldSpec, gold_int
from replicate.reading.stream import key_text

__all__ = ["FieldSpec", "load_run", "detect_format", "key_text", "gold_int", "FORMATS"]


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
    """Read one run (one file, or several pooled, e.g. DL 2019 + DL 2020): its plan
    (:func:`~replicate.judge.load.plan.plan_run`) read (:func:`~replicate.judge.load.execute.read_run`).

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
    plan = plan_run(name, paths, fields=fields, format=format, reader=reader, options=options, gold=gold)
    return read_run(plan, diagnostics, parsers, parsed)
