"""The record stage: a reader's records of one file -> coded items (the generic path of every reader without a
bulk one).

Each :class:`~replicate.reading.contract.Record` is checked and coded here (:func:`_coded`), so every reader
gets the same rules: a key is a non-empty tuple of strings; a decided label is a whole-number grade (or a
category of the reader's label set, :func:`~replicate.labels.decided_code`); a verdict is True/False/None;
gold is a whole-number grade or, for a categorical label set, one of its names
(:func:`~replicate.labels.gold_code`). What is wrong with a record is found first and raised once, naming the
file and the line. The record stage reads a file's records once, into columns (:class:`RecordBlock`), and
they go to the accumulator (:class:`~replicate.judge.load.items.Items`) whole when the file is clean, else item
by item with the warnings met reading them among them: an item key seen twice is a warning when everything
agrees, else an error naming both places.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

import numpy as np

from replicate.diagnostics import Diagnostics, Warning_
from replicate.errors import BadInput, Message, Param, ReplicateError
from replicate.judge.keytable import KeysBuilder
from replicate.judge.load.items import Items, sorted_distinct
from replicate.judge.load.readfile import RawFile
from replicate.judge.model import KEY_SEP, NO_GOLD, RunFile
from replicate.labels import LabelSet, decided_code, gold_code, gold_problem
from replicate.parsing import UNPARSED
from replicate.reading.contract import Reader, ReadOptions, Record, Source

#: One coded item: (key, gold, output, label, line).
Coded = tuple[str, int, "str | None", "int | None", int]


def replay(warnings: Diagnostics, diag: Diagnostics) -> None:
    """Warn in ``diag`` what a first (bulk) pass warned in ``warnings``: a pass that is kept warns once."""
    diag.warn_all(warnings.warnings)


def _several_trials(reader: Reader, first: Record, rec: Record) -> Message:
    """What is wrong with a file whose records carry several trials, read as one run (one reading per item)."""
    pick: list[str | Param] = []
    if reader.trial_option is not None:
        pick = ["keep one with ", Param(reader.trial_option), ", or "]
    return Message(
        f"the file holds several trials of its items (trial {first.trial} at line {first.line}, "
        f"trial {rec.trial} at line {rec.line}); a run takes one reading per item, so it is not read "
        "as one: ", *pick, f"read every trial into a trials table with 'replicate import --reader {reader.name}'",
    )


def _coded(reader: Reader, src: Source, gold_labels: LabelSet | None) -> Iterator[Coded]:
    """Every record of ``src`` coded (key joined, gold, output, label), in file order; the first problem of a
    record is raised (:class:`~replicate.errors.BadInput` naming the file and the line), a label outside its set warned."""
    yields = reader.yields
    gold_set = gold_labels if yields == "outputs" else reader.label_set or gold_labels
    first_trial: Record | None = None
    for rec in reader.records(src):
        key = rec.key
        problem: str | Message | None = None
        if not isinstance(key, tuple) or not key or not all(type(k) is str for k in key):
            problem = f"reader gave a key that is not a non-empty tuple of strings: {key!r}"
        elif rec.trial is not None and first_trial is not None and rec.trial != first_trial.trial:
            problem = _several_trials(reader, first_trial, rec)
        elif yields == "verdicts" and rec.correct is not None and type(rec.correct) is not bool:
            problem = f"reader gave a verdict that is not True/False/None: {rec.correct!r}"
        output = rec.output if yields == "outputs" else None
        label: int | None = None
        warning: str | None = None
        gold: int | None = None
        if problem is None and yields == "verdicts":  # right is label 1 against gold 1
            gold = 1
            label = UNPARSED if rec.correct is None else int(rec.correct)
        elif problem is None:
            gold = NO_GOLD if rec.gold is None else gold_code(rec.gold, gold_set)
            if gold is None:
                problem = gold_problem(rec.gold, gold_set)
            elif yields == "outputs":
                if output is not None and type(output) is not str:
                    problem = f"reader gave an output that is not text: {output!r}"
            elif rec.label is None:
                label = UNPARSED
            else:
                assert reader.label_set is not None  # Reader checks this for readers of labels
                label, problem, warning = decided_code(rec.label, reader.label_set)
        if problem is not None:
            raise BadInput(problem, path=src.path, line=rec.line)
        if warning is not None:
            src.warn("label-outside-set", warning, rec.line)
        if rec.trial is not None and first_trial is None:
            first_trial = rec
        assert gold is not None
        yield KEY_SEP.join(key), gold, output, label, rec.line


class RecordBlock:
    """The items of one file as a reader's records give them, in columns, and the warnings met reading them
    (:attr:`met`): kept whole, by :meth:`~replicate.judge.load.items.Items.add_block`, when no key repeats;
    else given item by item, the warnings among them where they were met
    (:meth:`~replicate.judge.load.items.Items.add_each`)."""

    def __init__(self, *, labels: bool, outputs: bool, hashes: bool) -> None:
        self.keys = KeysBuilder()
        self._key_hashes = array("q")
        self.gold = array("h")
        self.labels = array("b") if labels else None
        self.outputs: list[str | None] | None = [] if outputs else None
        self.hashes = array("q") if hashes else None  # of the outputs (a later file's item compared)
        self.lines = array("i")
        self.met = MetWarnings(self.lines)

    def add(self, key: str, gold: int, output: str | None, label: int | None, line: int) -> None:
        self.keys.append(key)
        self._key_hashes.append(hash(key))
        self.gold.append(gold)
        if self.labels is not None:
            self.labels.append(UNPARSED if label is None else label)
        if self.outputs is not None:
            self.outputs.append(output)
        if self.hashes is not None:
            self.hashes.append(hash(output))
        self.lines.append(line)

    @property
    def key_hashes(self) -> np.ndarray:
        return np.frombuffer(self._key_hashes, dtype=np.int64)

    def distinct(self) -> bool:
        """Whether no two keys are equal (no two hashes: a rare collision of unequal keys answers no)."""
        return len(self._key_hashes) < 2 or sorted_distinct(self.key_hashes) is not None


class _Noted(list[Warning_]):
    """A list of warnings that notes, as each is added, how many items had been read (the length of
    ``items``) — whether the reader warned through :meth:`~replicate.diagnostics.Diagnostics.warn` or added
    the warning to the list itself."""

    def __init__(self, items: array) -> None:
        super().__init__()
        self.items = items
        self.before = array("q")

    def append(self, warning: Warning_) -> None:
        self.before.append(len(self.items))
        super().append(warning)

    def extend(self, warnings: Iterable[Warning_]) -> None:
        for w in warnings:
            self.append(w)

    def __iadd__(self, warnings: Iterable[Warning_]) -> _Noted:  # type: ignore[override,misc]
        self.extend(warnings)
        return self


class MetWarnings(Diagnostics):
    """The warnings met reading a file, each with how many of its items had been read before it
    (:attr:`before`, counted in ``items``: the block's lines), so that they can be given again among the
    items in the order they were met."""

    def __init__(self, items: array) -> None:
        super().__init__()
        self.warnings = _Noted(items)

    @property
    def before(self) -> array:
        """How many items had been read before each of :attr:`warnings` was met."""
        assert isinstance(self.warnings, _Noted)
        return self.warnings.before


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

    The records are read once (a bulk path that declined the file has read it before), into columns
    (:class:`RecordBlock`: no Python object kept per item but its output), their warnings aside. When no key
    repeats (within the file or with an earlier file's) and nothing is wrong, the block is kept whole and its
    warnings given. Otherwise its items are given
    one by one, its warnings among them where they were met, so a repeated item is warned (same content) or
    refused (other content) where it comes, as is the first problem of the file after the items before it.
    """
    block = RecordBlock(labels=reader.yields != "outputs", outputs=reader.yields == "outputs",
                        hashes=not acc.last_file)
    failed: ReplicateError | None = None
    try:
        rf = _read(reader, f, options, block.met, block.add)
    except ReplicateError as exc:
        # raised again below, after the items before it: its traceback would keep the failed pass's frames
        # (a whole reader's text, the open stream) alive while they are added
        rf, failed = None, exc.with_traceback(None)
        failed.__context__ = None  # an exception it was raised from would hold them too
    if rf is not None and block.distinct() and not acc.seen_before(block.key_hashes):
        replay(block.met, diag)
        acc.add_block(block, split, file_idx)
        return rf
    repeated = acc.add_each(block, block.met.warnings, block.met.before, diag, split=split, files=files,
                            file_idx=file_idx)
    if rf is None:
        assert failed is not None
        raise failed  # the items before it added (an earlier repeated item with other content raised first)
    return replace(rf, records=rf.records - repeated, skipped=rf.skipped + repeated)


def _read(
    reader: Reader, f: RawFile, options: ReadOptions, diag: Diagnostics,
    add: Callable[[str, int, str | None, int | None, int], None],
) -> RunFile:
    """Read every record of ``f`` through ``add``."""
    src = f.source(options, diag, streams=reader.streams)  # streamed: the file is never held whole
    records = 0
    for key, gold, output, label, line in _coded(reader, src, options.gold_labels):
        add(key, gold, output, label, line)
        records += 1
    if src.lines_total is not None:
        n_lines = src.lines_total
    elif reader.streams:
        n_lines = src.lines_seen
    else:
        n_lines = int(np.count_nonzero(np.frombuffer(src.data, dtype=np.uint8) == 10)) + (1 if src.torn else 0)
    return RunFile(
        provenance=f.provenance(),
        format=reader.format,
        lines=n_lines,
        records=records,
        output_field=None,
        skipped=src.skipped,
        reader=reader.name,
        reader_options=tuple(src.used.items()),
        about=tuple(src.about.items()),
        side_files=tuple(map(str, src.side_files)),
        extraction_failures=src.extraction_failures,
        failures_unrecorded=src.failures_unrecorded,
        source_rule=reader.source_rule,
        harness=tuple(src.harness),
    )


__all__ = ["load_records", "replay", "BadInput"]
