"""Records from a reader -> the items of a run (the generic path of every reader without a bulk one).

Each :class:`~replicate.reading.contract.Record` is checked and encoded here, so every
reader gets the same rules: a key is a non-empty tuple of strings; a decided
label is a whole-number grade (or a category of the reader's label set); a
verdict is True/False/None; gold is a whole-number grade or, for a
categorical label set, one of its names. An item key seen twice is a warning
when everything agrees, else an error naming both places.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param, ReplicateError
from replicate.judge.load.readfile import Items, RawFile, RecordBlock, replay, strip_bom
from replicate.judge.model import KEY_SEP, NO_GOLD, RunFile
from replicate.labels import LabelSet, gold_code, gold_problem, grade_code, outside_set
from replicate.parsing import UNPARSED
from replicate.reading.contract import Reader, ReadOptions, Record, Source


def _gold(rec: Record, label_set: LabelSet | None, src: Source) -> int:
    value = rec.gold
    if value is None:
        return NO_GOLD
    code = gold_code(value, label_set)
    if code is None:
        raise src.bad(gold_problem(value, label_set), rec.line)
    return code


def _label(rec: Record, reader: Reader, src: Source) -> int:
    value = rec.label
    if value is None:
        return UNPARSED
    ls = reader.label_set
    assert ls is not None  # Reader checks this for readers of labels
    if ls.is_ordinal:
        code = grade_code(value)
        if code is None:
            raise src.bad(f"label must be a whole-number grade 0-127, got {value!r}", rec.line)
        if not ls.low <= code <= ls.high:
            src.warn("label-outside-set", outside_set(code, ls), rec.line)
        return code
    code = ls.code(value)
    if code is None:
        raise src.bad(f"label {value!r} is not one of {', '.join(ls.names)}", rec.line)
    return code


def _key(rec: Record, src: Source) -> str:
    key = rec.key
    if not isinstance(key, tuple) or not key or not all(type(k) is str for k in key):
        raise src.bad(f"reader gave a key that is not a non-empty tuple of strings: {key!r}", rec.line)
    return KEY_SEP.join(key)


def _several_trials(reader: Reader, src: Source, first: Record, rec: Record) -> BadInput:
    """The error for a file whose records carry several trials, read as one run (one reading per item)."""
    pick: list[str | Param] = []
    if reader.trial_option is not None:
        pick = ["keep one with ", Param(reader.trial_option), ", or "]
    message = Message(
        f"the file holds several trials of its items (trial {first.trial} at line {first.line}, "
        f"trial {rec.trial} at line {rec.line}); a run takes one reading per item, so it is not read "
        "as one: ", *pick, f"read every trial into a trials table with 'replicate import --reader {reader.name}'",
    )
    return src.bad(message, rec.line)


def load_records(
    reader: Reader,
    f: RawFile,
    file_idx: int,
    options: ReadOptions,
    acc: Items,
    files: list[RawFile],
    diag: Diagnostics,
    split: str,
) -> RunFile:
    """Add every record ``reader`` reads from ``f`` to ``acc``; what was read, as a :class:`RunFile`.

    The records are first read into columns (:class:`~replicate.judge.load.readfile.RecordBlock`: no Python
    object kept per item but its output), their warnings aside; when no key repeats (within the file or
    with an earlier file's) and nothing is wrong, the block is kept and its warnings given. Otherwise the
    file is read again item by item, which names the repeated item, or the error, exactly where and as it
    always has.
    """
    first = Diagnostics()
    block = RecordBlock(labels=reader.yields != "outputs", outputs=reader.yields == "outputs",
                        hashes=not acc.last_file)
    try:
        rf = _read(reader, f, options, first, block, None)
    except ReplicateError:
        rf = None
    if rf is None or not block.distinct() or acc.seen_before(block.key_hashes):
        def add(key: str, gold: int, output: str | None, label: int | None, line: int) -> bool:
            return acc.add(key, gold, output, label, split=split, files=files, file_idx=file_idx, lineno=line,
                           diag=diag)  # a repeated key: a warning (same content) or an error, as it comes

        return _read(reader, f, options, diag, None, add)
    replay(first, diag)
    acc.add_block(block, split, file_idx)
    return rf


def _read(
    reader: Reader, f: RawFile, options: ReadOptions, diag: Diagnostics, block: RecordBlock | None,
    add: Callable[[str, int, str | None, int | None, int], bool] | None,
) -> RunFile:
    """Read every record of ``f`` into ``block`` (every one kept) or through ``add`` (False: skipped)."""
    if reader.streams:  # read through Source.chunks: the file is never held whole
        data = b""
        src = Source(f.path, data, options, diag, stream=lambda: f.stream_text(diag))
    else:
        data = strip_bom(f, diag)
        src = Source(f.path, data, options, diag)
    records = skipped = 0
    yields = reader.yields
    first_trial: Record | None = None
    for rec in reader.records(src):
        key = _key(rec, src)
        if rec.trial is not None:
            if first_trial is None:
                first_trial = rec
            elif rec.trial != first_trial.trial:
                raise _several_trials(reader, src, first_trial, rec)
        output: str | None = None
        label: int | None = None
        if yields == "outputs":
            gold = _gold(rec, options.gold_labels, src)
            output = rec.output
            if output is not None and type(output) is not str:
                raise src.bad(f"reader gave an output that is not text: {output!r}", rec.line)
        elif yields == "labels":
            gold = _gold(rec, reader.label_set or options.gold_labels, src)
            label = _label(rec, reader, src)
        else:  # verdicts: right is label 1 against gold 1
            if rec.correct is not None and type(rec.correct) is not bool:
                raise src.bad(f"reader gave a verdict that is not True/False/None: {rec.correct!r}", rec.line)
            gold, label = 1, (UNPARSED if rec.correct is None else int(rec.correct))
        if block is not None:
            block.add(key, gold, output, label, rec.line)
        elif add is not None and not add(key, gold, output, label, rec.line):
            skipped += 1
            continue
        records += 1
    if src.lines_total is not None:
        n_lines = src.lines_total
    elif reader.streams:
        n_lines = src.lines_seen
    else:
        n_lines = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10)) + (1 if src.torn else 0)
    return RunFile(
        provenance=f.provenance(),
        format=reader.format,
        lines=n_lines,
        records=records,
        output_field=None,
        skipped=skipped + src.skipped,
        reader=reader.name,
        reader_options=tuple(src.used.items()),
        about=tuple(src.about.items()),
        side_files=tuple(map(str, src.side_files)),
        extraction_failures=src.extraction_failures,
        failures_unrecorded=src.failures_unrecorded,
        source_rule=reader.source_rule,
        harness=tuple(src.harness),
    )


__all__ = ["load_records", "BadInput"]
