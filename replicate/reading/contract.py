"""Readers: released files in, the project's records out.

A reader is a :class:`Reader` registered under a canonical versioned name such
as ``trec-qrels@1`` in the ``replicate.readers`` entry-point group (the same
registry mechanism as parsers and scorers; built-ins ship from
``parsers/replicate_parsers/readers.py`` through the same entry points third
parties use). ``docs/writing-a-reader.md`` shows a complete plugin package.

The contract
------------

A reader offers two functions:

``sniff(head: bytes, options: ReadOptions) -> Match``
    Look at the first bytes of a file (gzip already undone, a UTF-8 BOM
    removed) and say whether it is of this reader's shape: ``"yes"`` (the
    fields this reader needs are there), ``"maybe"`` (the broad kind is right,
    e.g. a JSON object, but its fields are missing: reading it will name what
    is wrong) or ``"no"``. Without ``--reader`` the reader answering ``"yes"``
    is chosen (exactly one must); with no ``"yes"``, the only ``"maybe"``; any
    other outcome is an error listing the readers that could apply. Sniffing
    decides by content, never by file name.

``records(source: Source) -> Iterable[Record]``
    Every item of one file, in file order. A :class:`Record` carries the item's
    ``key`` (a tuple of strings, compared as strings), the 1-based ``line`` it
    was read from, and what the file says about it, in one of three forms
    (:attr:`Reader.yields`):

    - ``"outputs"``: ``output``, a raw judge output text that a parser turns
      into a label (``None``: no output, read as unparsed);
    - ``"labels"``: ``label``, a label already decided in the file (a qrels
      grade, a number or string the tool stored): an int grade or a category
      name of the reader's :attr:`Reader.label_set` (``None``: unparsed);
    - ``"verdicts"``: ``correct``, a correctness verdict without label or
      gold (a benchmark log's ``acc == 1``).

    ``gold`` is the reference label when the file carries one (else ``None``:
    gold then comes from ``--gold``). ``trial`` numbers repeats/epochs of one
    item for K-trial data (``None`` for single-label runs): a reader gives
    every trial it finds, and a run (one reading per item) refuses a file
    whose records carry several trials, naming the reader's
    :attr:`Reader.trial_option` that picks one (``replicate import`` reads
    them all into a trials table). Problems are raised
    with :meth:`Source.bad` (a :class:`~replicate.errors.BadInput` naming file
    and line) or counted with :meth:`Source.warn`; fields a reader does not
    know are ignored, never fatal. A reader that takes options
    (:meth:`ReadOptions.get`) says what it settled in :attr:`Source.used`
    (``source.used["filter"] = "strict-match"``), kept in each file's provenance.
    A reader whose file names its model or task puts them in :attr:`Source.about`
    (``source.about["model"] = "openai/gpt-4o"``).

Provenance (path, size, sha256, the fetched release) is recorded by the
loader for every file; the reader's name goes beside the parser in every
output. Readers of decided labels name the pseudo-parser shown where a parser
name goes (:attr:`Reader.decided`), e.g. ``exam-grades`` or ``qrels-grades``:
no ``--parser`` is needed for them.

Reading is I/O at the edge: a reader gets bytes and returns records; it keeps
no state between files and a released version never changes behaviour.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Mapping

from replicate.errors import BadInput
from replicate.labels import LabelSet
from replicate.reading.stream import first_line, line_chunks, lines_of  # noqa: F401  (first_line: the sniffing helper, public here too)
from replicate.registry import Registry, VersionedName

if TYPE_CHECKING:  # pragma: no cover
    from replicate.diagnostics import Diagnostics
    from replicate.reading.jsonl import FieldSpec

Match = Literal["yes", "maybe", "no"]
Yields = Literal["outputs", "labels", "verdicts"]
YIELDS: tuple[str, ...] = ("outputs", "labels", "verdicts")
MATCHES: tuple[str, ...] = ("yes", "maybe", "no")

#: The reader options a command line (``--filter``, ``--correct-field``, ``--inspect-scorer``,
#: ``--score-map``, ``--epoch``) or a runs file entry can set, by their
#: :meth:`ReadOptions.get` names.
READER_OPTIONS: tuple[str, ...] = ("filter", "correct_field", "scorer", "score_map", "epoch")

#: How many bytes of a file :func:`sniff` functions see.
HEAD_BYTES = 1 << 16


@dataclass(frozen=True, slots=True)
class SourceRule:
    """How the harness that wrote a reader's files counts an item it could not score (:attr:`Reader.source_rule`).

    ``unparsed`` is the unparsed policy that reproduces the harness's own aggregate: ``wrong`` (lm-eval
    scores an answer its filter could not extract 0) or ``intersect`` (inspect_ai leaves an unscored
    sample out of its metrics); ``says`` is that rule in words, printed beside every figure that departs
    from it. The commands take it as the default of ``--unparsed``.
    """

    unparsed: Literal["intersect", "wrong"]
    says: str

    def __post_init__(self) -> None:
        if self.unparsed not in ("intersect", "wrong"):
            raise ValueError(f"a source rule's unparsed policy is intersect or wrong; got {self.unparsed!r}")


@dataclass(frozen=True, slots=True)
class HarnessFigure:
    """A figure the harness itself wrote beside the per-item file (its aggregate), to set against the recomputed one.

    ``metric`` names it as the harness does (``exact_match,strict-match``; ``accuracy`` of scorer ``match``),
    ``printed`` is the value as written (its precision is the precision it is matched at), ``where`` the
    file (and place in it) it was read from. ``value`` is ``printed`` read as a number.
    """

    metric: str
    printed: str
    where: str

    @property
    def value(self) -> float:
        return float(self.printed)

    def to_json(self) -> dict:
        return {"metric": self.metric, "printed": self.printed, "value": self.value, "where": self.where}


@dataclass(frozen=True, slots=True)
class Record:
    """One item read from a file (see the module doc for the three forms)."""

    key: tuple[str, ...]
    line: int
    output: str | None = None
    label: int | str | None = None
    correct: bool | None = None
    gold: int | str | None = None
    trial: int | None = None
    #: The file's own extraction found no answer (lm-eval's ``[invalid]``): ``correct`` is None, and the
    #: record is counted as an extraction failure (``replicate import`` writes it as ``format_failure``).
    no_answer: bool = False


@dataclass(frozen=True)
class ReadOptions:
    """What the command line (or a runs file) tells readers.

    ``fields`` is the flat-JSONL field spec (``--key-field``, ``--gold-field``,
    ``--output-field``); ``extra`` holds reader-specific options by name (e.g.
    a benchmark log's filter or metric), which a reader reads with
    :meth:`get` and ignores when they are not its own. ``gold_labels`` is the
    label set gold values are read against (the parser's, when the command
    names one): a gold stored as text (``"tie"``, ``"A>B"``, ``"3"``) is mapped
    through it by :func:`replicate.labels.gold_code`.
    """

    fields: "FieldSpec | None" = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    gold_labels: LabelSet | None = None

    def get(self, name: str, default: Any = None) -> Any:
        return self.extra.get(name, default)

    def overridden(self, extra: Mapping[str, Any]) -> "ReadOptions":
        """These options with ``extra`` (a run's own reader options) winning over :attr:`extra`."""
        if not extra:
            return self
        return ReadOptions(self.fields, {**self.extra, **extra}, self.gold_labels)


@dataclass
class Source:
    """One file as a reader sees it: its bytes (gzip undone, BOM removed) and where problems go."""

    path: Path
    data: bytes
    options: ReadOptions
    diagnostics: "Diagnostics"
    skipped: int = 0  # lines skipped with a warning (see :meth:`skip`)
    #: What the reader settled for this file (an option it was given or chose itself, e.g. a log's
    #: filter and metric): kept in the file's provenance as ``reader_options``.
    used: dict[str, str] = field(default_factory=dict)
    #: For a file that is not read line by line (a zip log): how many units (samples) it holds,
    #: reported as the file's ``lines`` instead of its newline count.
    lines_total: int | None = None
    #: What the file says about the run it records, when it says so: ``model`` (the model's
    #: name) and ``task`` (the benchmark or task). ``replicate import`` takes them as the
    #: defaults of ``--model`` and ``--benchmark``.
    about: dict[str, str] = field(default_factory=dict)
    #: Other files (and folders) the reader looked at beside this one (a results file, a run spec):
    #: named in the run's provenance; a run that has any is not kept in the run cache (its key
    #: covers the run's own files only).
    side_files: list[Path] = field(default_factory=list)
    #: For a reader that can tell: how many records are unparsed because the file's own extraction
    #: found no answer (lm-eval's ``[invalid]``), counted apart from other unparsed records. None: not told.
    extraction_failures: int | None = None
    #: For a reader that can tell extraction failures in some files but not in this one: why this file's
    #: log does not record them (an lm-eval filter that marks no ``[invalid]``); shown as "not recorded".
    failures_unrecorded: str | None = None
    #: The harness's own aggregate of this file, when it is on disk (the lm-eval results file beside the
    #: samples, an inspect log's header, HELM's stats.json): shown beside the recomputed figure.
    harness: list[HarnessFigure] = field(default_factory=list)
    #: For a reader that streams (:attr:`Reader.streams`): the file's blocks (gzip undone, BOM removed), read
    #: by :meth:`chunks` instead of :attr:`data` (then empty), so the file is never held whole.
    stream: Callable[[], Iterable[bytes]] | None = field(default=None, repr=False, kw_only=True)
    #: Lines seen by :meth:`chunks` so far, and whether the last one lacked its newline.
    lines_seen: int = field(default=0, kw_only=True)
    ended_torn: bool = field(default=False, kw_only=True)

    def bad(self, message: str, line: int | None = None) -> BadInput:
        """A :class:`BadInput` naming this file and ``line`` (raise it)."""
        return BadInput(message, path=self.path, line=line)

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        """Count a warning about this file (``--strict`` makes it an error)."""
        self.diagnostics.warn(code, message, path=self.path, line=line)

    def skip(self, code: str, message: str, line: int | None = None) -> None:
        """Skip a line with a counted warning (a blank line, a comment): never silently."""
        self.warn(code, message, line)
        self.skipped += 1

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """``(line number, line)`` for every line, ``\\r\\n`` and ``\\n`` endings removed.

        A last line without a newline is yielded too; readers whose records
        must end with a newline check :attr:`torn`. A line longer than
        :func:`~replicate.command_input.max_line_bytes` is refused (:func:`~replicate.reading.stream.line_chunks`).
        """
        for i, line, _torn in lines_of(self.chunks()):
            yield i, line[:-1] if line.endswith(b"\r") else line

    def chunks(self) -> Iterator[bytes]:
        """The file in chunks of whole lines (:func:`~replicate.reading.stream.line_chunks`: a line's length
        bounded), streamed when the loader gave :attr:`stream`; counts :attr:`lines_seen`."""
        blocks = self.stream() if self.stream is not None else [self.data]
        for chunk in line_chunks(blocks, path=self.path):
            self.lines_seen += chunk.count(b"\n")
            self.ended_torn = not chunk.endswith(b"\n")
            if self.ended_torn:
                self.lines_seen += 1
            yield chunk

    @property
    def torn(self) -> bool:
        """True when the file does not end with a newline (its last line may be cut short)."""
        return bool(self.data) and not self.data.endswith(b"\n")


SniffFn = Callable[[bytes, ReadOptions], Match]
RecordsFn = Callable[[Source], Iterable[Record]]


@dataclass(frozen=True, slots=True)
class Reader:
    """A named, versioned reading of one file shape into records.

    ``yields`` says which form its records take; ``label_set`` is the set of
    decided labels (``yields == "labels"``); ``key_names`` name the parts of
    an item key (for display and exported label files); ``has_gold`` says
    whether its records carry gold; ``decided`` is the pseudo-parser name shown
    for decided labels. ``details`` is the full text shown by ``readers show``.
    ``format`` is a short word for the file kind, kept in each file's
    provenance. ``trial_option`` names the reader option (a :meth:`ReadOptions.get`
    name, e.g. ``epoch``) that keeps one trial of a file whose records carry
    several. ``options`` names the reader options it reads (None: not declared);
    a runs file that sets another one on a run of this reader is refused. ``gold_only``:
    its files hold gold and no judge's reading (``gold-jsonl@1``), so they are
    read as ``--gold`` only and a run of one is refused. ``run_files`` names the
    files it reads when a command is given a directory (a HELM run directory),
    the first present being read (without ``--reader``, only by readers whose
``directory_default`` is True). (The loader reads the files of some built-in readers in bulk,
    giving the same items as their records: :mod:`replicate.judge.load.fast`; a reader has no part in it.)
    ``parsers``: the parsers that read its outputs, suggested when none is named.
    """

    name: str
    description: str
    sniff: SniffFn
    records: RecordsFn
    yields: Yields = "outputs"
    label_set: LabelSet | None = None
    key_names: tuple[str, ...] = ("query_id", "corpus_id")
    has_gold: bool = True
    decided: str | None = None
    format: str = ""
    details: str = ""
    trial_option: str | None = field(default=None, kw_only=True)
    options: tuple[str, ...] | None = field(default=None, kw_only=True)
    gold_only: bool = field(default=False, kw_only=True)
    run_files: tuple[str, ...] = field(default=(), kw_only=True)
    #: False: a directory is read through :attr:`run_files` only when this reader is named (``--reader``),
    #: so a directory another reader also reads (a HELM run) stays that reader's when none is named.
    directory_default: bool = field(default=True, kw_only=True)
    #: True: ``records()`` reads the source only through :meth:`Source.lines`, :meth:`Source.chunks` or
    #: the toolkit's ``json_objects``/``json_values`` (never :attr:`Source.data`), so the loader streams the
    #: file instead of reading it whole.
    streams: bool = field(default=False, kw_only=True)
    #: The parsers that read this reader's outputs (``yields == "outputs"``), the usual one first: named
    #: when a command over its files is given no ``--parser`` (a suggestion; the parser stays the user's choice).
    parsers: tuple[str, ...] = field(default=(), kw_only=True)
    #: How the harness that wrote these files counts an item it could not score: the default of ``--unparsed``
    #: for runs of this reader, and what a user's other choice is printed as departing from (None: no harness rule).
    source_rule: SourceRule | None = field(default=None, kw_only=True)
    #: The field of each sample holding its metadata (``"metadata."``, ``"doc."``) when ``--cluster PREFIX.FIELD``
    #: may group items by one of its fields: the reader then appends that field's value to every key (reader
    #: option ``cluster_by``, set by the command line for every run alike).
    cluster_prefix: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        VersionedName.parse(self.name)  # raises ValueError on a bad name
        if "\n" in self.description:
            raise ValueError(f"reader {self.name}: description must be one line")
        if self.yields not in YIELDS:
            raise ValueError(f"reader {self.name}: yields must be one of {', '.join(YIELDS)}; got {self.yields!r}")
        if self.yields == "labels":
            if self.label_set is None:
                raise ValueError(f"reader {self.name}: a reader of decided labels declares its label_set")
            if not self.decided:
                object.__setattr__(self, "decided", f"{VersionedName.parse(self.name).base}-labels")
        if not self.format:
            object.__setattr__(self, "format", VersionedName.parse(self.name).base)
        for parser in self.parsers:
            VersionedName.parse(parser)  # raises ValueError on a bad name
        if self.parsers and self.yields != "outputs":
            raise ValueError(f"reader {self.name}: only a reader of outputs names parsers (it yields {self.yields})")
        unknown = sorted(set(self.options or ()) - set(READER_OPTIONS))
        if unknown:
            raise ValueError(f"reader {self.name}: unknown option(s) {', '.join(unknown)}; known: {', '.join(READER_OPTIONS)}")

    @property
    def version(self) -> VersionedName:
        return VersionedName.parse(self.name)


def reader(
    name: str,
    description: str,
    *,
    sniff: SniffFn,
    yields: Yields = "outputs",
    label_set: LabelSet | None = None,
    key_names: tuple[str, ...] = ("query_id", "corpus_id"),
    has_gold: bool = True,
    decided: str | None = None,
    format: str = "",
) -> Callable[[RecordsFn], Reader]:
    """Decorator turning ``def records(source) -> Iterable[Record]`` into a :class:`Reader`.

    The function's docstring becomes the reader's catalogue entry.
    """

    def wrap(func: RecordsFn) -> Reader:
        return Reader(
            name, description, sniff, func, yields, label_set, key_names, has_gold, decided, format,
            inspect.cleandoc(func.__doc__ or ""),
        )

    return wrap



#: Every reader installed, discovered through the ``replicate.readers`` entry points.
READERS: Registry[Reader] = Registry("replicate.readers", "reader")
