"""In-memory values of single-label judge runs (pure data, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.judge.keytable import as_array, columns, raw_keys
from replicate.labels import LabelSet
from replicate.parsing import UNPARSED, Parser
from replicate.provenance import FileProvenance

if TYPE_CHECKING:
    from replicate.reading.contract import HarnessFigure, SourceRule

#: Separator joining the key fields of an item into one string key.
KEY_SEP = "\x1f"
#: The gold value of an item whose file carries no gold (it may come from ``--gold``).
NO_GOLD = -1


def readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class RunFile:
    """What was read from one released file."""

    provenance: FileProvenance
    format: str  # "jsonl" | "exam"
    lines: int  # physical lines read (including skipped ones)
    records: int  # items taken from the file
    output_field: str | None  # which field held the raw output (flat JSONL)
    rewritten: int = 0  # records carrying an ``original_output`` (rewritten by a retry script)
    skipped: int = 0  # lines skipped with a warning (counted, never silent)
    thoughts: int = 0  # records with a non-empty thought field (``model_thought``/``gemini_thought``)
    reader: str = "judge-jsonl@1"  # the reader that read the file
    chosen: str = "given"  # how: "given" (--reader, a runs file) or "by content" (detected)
    reader_options: tuple[tuple[str, str], ...] = ()  # what the reader settled (Source.used), e.g. filter
    about: tuple[tuple[str, str], ...] = ()  # what the file says about its run (Source.about), e.g. model
    side_files: tuple[str, ...] = ()  # files and folders read beside it (Source.side_files)
    extraction_failures: int | None = None  # records whose answer the file's own filter did not find (None: not told)
    #: why the file's log records no extraction failure although its reader tells them in other files
    failures_unrecorded: str | None = None
    source_rule: "SourceRule | None" = None  # its reader's: how the harness counts an item it could not score
    harness: "tuple[HarnessFigure, ...]" = ()  # the harness's own aggregate, read beside the file

    def to_json(self) -> dict:
        out = self.provenance.to_json()
        out.update(
            format=self.format,
            reader=self.reader,
            lines=self.lines,
            records=self.records,
            output_field=self.output_field,
            rewritten=self.rewritten,
            skipped=self.skipped,
            thoughts=self.thoughts,
        )
        if self.reader_options:  # only readers that take options say what they used
            out["reader_options"] = dict(self.reader_options)
        if self.about:  # only files that name their model or task
            out["about"] = dict(self.about)
        if self.extraction_failures is not None:  # only readers that tell them apart
            out["extraction_failures"] = self.extraction_failures
        elif self.failures_unrecorded is not None:
            out["extraction_failures"] = None
            out["extraction_failures_not_recorded"] = self.failures_unrecorded
        if self.harness:
            out["harness"] = [h.to_json() for h in self.harness]
        return out


def extraction_failures(files: Sequence[RunFile]) -> int | None:
    """A run's records whose answer the file's own extraction did not find (read as unparsed); None when no
    file's reader tells them apart, or when one of its files does not record them (:func:`failures_unrecorded`)."""
    if failures_unrecorded(files) is not None:
        return None
    told = [f.extraction_failures for f in files if f.extraction_failures is not None]
    return sum(told) if told else None


def failures_unrecorded(files: Sequence[RunFile]) -> str | None:
    """Why a run's extraction failures are not recorded (the first file whose log cannot tell), else None."""
    return next((f"{f.provenance.path}: {f.failures_unrecorded}" for f in files if f.failures_unrecorded), None)


@dataclass(frozen=True)
class Origins:
    """Where each item of a run was read: index into the run's files and 1-based line."""

    file_index: np.ndarray  # int16, shape (n,)
    line: np.ndarray  # int32, shape (n,)

    def where(self, item: int, files: tuple[RunFile, ...]) -> str:
        """``path:line`` of one item."""
        return f"{files[int(self.file_index[item])].provenance.path}:{int(self.line[item])}"


@dataclass(frozen=True)
class Run:
    """One model version's outputs over a set of items (one file or several pooled).

    ``keys`` are item keys (key fields joined by :data:`KEY_SEP`, compared as
    strings; a run read from files holds them in a :class:`~replicate.judge.keytable.KeyTable`, made into
    the object array on first use), ``gold`` integer reference labels, ``outputs`` the raw texts
    (``None`` where a record had no output), ``labels`` a pre-computed label
    array for formats whose labels are not parsed from text (EXAM), else None.
    """

    name: str
    keys: np.ndarray  # object array of str, shape (n,) (a KeyTable until first read: see columns() below)
    gold: np.ndarray  # int16, shape (n,)
    outputs: Sequence[str | None]  # a tuple, or read on first use (a run from the run cache)
    files: tuple[RunFile, ...]
    labels: np.ndarray | None = None  # int8 with UNPARSED, for pre-labelled formats
    splits: np.ndarray | None = None  # object array: split name per item, or None
    origins: Origins | None = None  # file and line of each item, when read from files
    yields: str = "outputs"  # what its records carry: outputs | labels | verdicts
    decided: str | None = None  # pseudo-parser name of decided labels (e.g. exam-grades)
    label_set: LabelSet | None = None  # the decided labels' set (readers of labels)

    @property
    def reader(self) -> str:
        """The reader(s) that read the run's files (``a + b`` when they differ)."""
        return " + ".join(dict.fromkeys(f.reader for f in self.files)) or "-"

    @property
    def decided_name(self) -> str:
        """The pseudo-parser name its decided labels go under (the reader's, else ``exam-grades``)."""
        return self.decided or "exam-grades"

    def __post_init__(self) -> None:
        n = len(raw_keys(self))
        if len(self.gold) != n or len(self.outputs) != n:
            raise ValueError(f"run {self.name!r}: keys, gold and outputs differ in length")
        if self.labels is not None and len(self.labels) != n:
            raise ValueError(f"run {self.name!r}: labels and keys differ in length")

    def __len__(self) -> int:
        return len(raw_keys(self))

    def label_with(self, parser: Parser | None, *, cached: np.ndarray | None = None) -> "LabelledRun":
        """Apply a parser (or take the file's own labels) to get a :class:`LabelledRun`.

        ``cached`` are labels this parser gave these outputs before (the label
        cache): used instead of parsing the texts again.
        """
        if self.labels is not None:
            labels, parser_name = self.labels, self.decided_name
        else:
            if parser is None:
                raise ValueError(f"run {self.name!r} holds raw outputs: a parser is needed")
            labels = cached if cached is not None else parser.parse_many(self.outputs)
            parser_name = parser.name
        labels = readonly(np.asarray(labels, np.int8))
        label_set = self.label_set if self.labels is not None else getattr(parser, "label_set", None)
        return LabelledRun(
            self.name, as_array(raw_keys(self)), self.gold, labels, parser_name, self.files, self.origins,
            yields=self.yields, label_set=label_set,
        )

    def to_json(self) -> dict:
        return {"name": self.name, "items": len(self), "files": [f.to_json() for f in self.files]}


@dataclass(frozen=True)
class LabelledRun:
    """A run whose outputs have been read into labels by one parser version."""

    name: str
    keys: np.ndarray  # object array of str (a KeyTable until first read)
    gold: np.ndarray
    labels: np.ndarray  # int8, UNPARSED where the parser found no label
    parser: str
    files: tuple[RunFile, ...] = field(default=())
    origins: Origins | None = None  # file and line of each item, when read from files
    yields: str = "outputs"  # outputs | labels | verdicts (see replicate.reading.contract)
    label_set: LabelSet | None = None  # the parser's or reader's label set, when declared
    #: the names of the parts of an item key (``query_id``, ``corpus_id``), when the load told them
    key_names: tuple[str, ...] | None = None
    #: the warnings of the load it came from (:meth:`~replicate.judge.api.Loaded.labelled`): a result's JSON carries them
    diagnostics: Diagnostics | None = field(default=None, compare=False, repr=False)

    @property
    def reader(self) -> str:
        """The reader(s) that read the run's files (``a + b`` when they differ)."""
        return " + ".join(dict.fromkeys(f.reader for f in self.files)) or "-"

    def where(self, item: int) -> str | None:
        """``path:line`` where item ``item`` was read, if known."""
        return None if self.origins is None else self.origins.where(item, self.files)

    @property
    def unparsed(self) -> int:
        return int(np.count_nonzero(self.labels == UNPARSED))

    def __len__(self) -> int:
        return len(raw_keys(self))


# columns given as an array or as a compact Column (keys: a KeyTable; splits: Runs; origins: Blocks), made into
# the array on first read (replicate.judge.keytable.ColumnField): a run read from files keeps no object per item
columns(Run, "keys", "splits")
columns(LabelledRun, "keys")
columns(Origins, "file_index", "line")

_R = TypeVar("_R", "Run", "LabelledRun")


def evolve(run: _R, **changes: object) -> _R:
    """:func:`dataclasses.replace` for a :class:`Run` or :class:`LabelledRun` that keeps its keys as stored
    (a :class:`~replicate.judge.keytable.KeyTable` is not made into strings)."""
    values = {f.name: run.__dict__[f.name] for f in fields(run) if f.init}
    values.update(changes)
    return type(run)(**values)


def decided_column(runs: Sequence[Run]) -> str | None:
    """The column name of runs that all carry decided labels or verdicts (no parser needed), else None.

    Runs read by a reader of labels (qrels, EXAM) or of verdicts (benchmark logs)
    go under their readers' pseudo-parser names (``qrels-grades``,
    ``lm-eval-metric``), each once, joined with `` + ``; the one rule
    ``compare``, ``chain`` and ``verify`` name such runs by.
    """
    if not runs or any(r.labels is None for r in runs):
        return None
    return " + ".join(dict.fromkeys(r.decided_name for r in runs))
