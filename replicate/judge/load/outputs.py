"""A run's raw outputs without holding them: read again from the files, streaming, when they are used.

A judge file is mostly its raw outputs; a run of a large file (over
:data:`KEEP_OUTPUTS_BELOW`) keeps its items' keys, gold and
where each was read, and :class:`StreamedOutputs` reads the outputs again,
one chunk of lines at a time, each time they are iterated (a parser reading
them into labels). A reader without a bulk path hands its outputs over in
records, and those are kept (:meth:`OutputParts.append`). A file whose bytes
changed since it was read is an error (its sha256 is checked at the end of
each pass).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, overload

import numpy as np
import orjson

from replicate.errors import BadInput
from replicate.parsing import PARSE_CACHE_CHARS, UNPARSED, Parser
from replicate.reading.stream import InputStream, json_chunk, line_chunks, lines_of, without_bom

#: A file's outputs are kept from the first pass while its lines read stay within this many bytes (32 MiB);
#: a larger file's are read again when a parser reads them. Reading a judge file's JSON twice costs about as
#: much as parsing its outputs, so a release of many small files (the common case) reads each once, and
#: memory stays bounded by this much per file beyond its keys and hashes.
KEEP_OUTPUTS_BELOW = 32 * 2**20


class KeptOutputs:
    """A file's outputs from its one pass while the lines read stay within ``budget`` bytes
    (:data:`KEEP_OUTPUTS_BELOW` when None); past it ``values`` is None and they are read again when used."""

    def __init__(self, budget: int | None = None, size: int | None = None) -> None:
        self.budget = KEEP_OUTPUTS_BELOW if budget is None else budget
        # a file stored larger than the budget (``size``, its bytes on disk; None: not known) keeps none from
        # the start: outputs kept for a while and then dropped leave the memory they held in pieces
        self.values: list[str] | None = [] if self.budget > 0 and (size is None or size <= self.budget) else None
        self._seen = 0

    def add(self, nbytes: int, outputs: list[str]) -> None:
        """The outputs of a chunk of ``nbytes`` bytes of lines."""
        self._seen += nbytes
        if self.values is None:
            return
        if self._seen > self.budget:
            self.values = None  # over the budget: dropped, read again when parsed
        else:
            self.values.extend(outputs)


class OutputLabels:
    """The labels ``parsers`` give outputs as a bulk path reads them, a chunk at a time, so that a run's
    outputs need not be read a second time to be parsed. Each distinct text is read once while the texts
    remembered hold at most :data:`~replicate.parsing.PARSE_CACHE_CHARS` characters (per parser), as
    :meth:`~replicate.parsing.Parser.parse_many` does: the labels are the parser's, text by text."""

    def __init__(self, parsers: Sequence[Parser]) -> None:
        self.parsers = tuple(parsers)
        self._seen: list[dict[str, int]] = [{} for _ in self.parsers]
        self._room = [PARSE_CACHE_CHARS for _ in self.parsers]

    def __bool__(self) -> bool:
        return bool(self.parsers)

    def of(self, outputs: list[str]) -> list[tuple[str, np.ndarray]]:
        """(parser name, int8 labels of ``outputs``) for each parser."""
        out = []
        for k, parser in enumerate(self.parsers):
            seen = self._seen[k]
            distinct: dict[str, int | None] = dict.fromkeys(outputs)
            for text in distinct:
                label = seen.get(text)
                if label is None:
                    value = parser(text)
                    label = UNPARSED if value is None else value
                    if self._room[k] > 0:
                        seen[text] = label
                        self._room[k] -= len(text) or 1
                distinct[text] = label
            out.append((parser.name, np.fromiter(map(distinct.__getitem__, outputs), dtype=np.int8, count=len(outputs))))
        return out


@dataclass
class _Part:
    file_idx: int
    values: list[str | None] | None = None  # outputs kept (records of a reader without a bulk path)
    lines: list[int] | None = None  # lines re-read (line-by-line items); None with values None: every line
    count: int = 0


@dataclass
class OutputParts:
    """Where each item's raw output is, in item order: kept, or on a line of a file to be read again."""

    parts: list[_Part] = field(default_factory=list)
    #: file index -> the output field of a file whose outputs are read again
    fields: dict[int, str] = field(default_factory=dict)

    def _last(self, file_idx: int, kept: bool, every: bool) -> _Part:
        p = self.parts[-1] if self.parts else None
        if p is None or p.file_idx != file_idx or (p.values is not None) != kept or (p.lines is None) != every:
            p = _Part(file_idx, [] if kept else None, None if every or kept else [])
            self.parts.append(p)
        return p

    def append(self, file_idx: int, output: str | None) -> None:
        p = self._last(file_idx, True, False)
        assert p.values is not None
        p.values.append(output)
        p.count += 1

    def extend(self, file_idx: int, outputs: Sequence[str | None]) -> None:
        p = self._last(file_idx, True, False)
        assert p.values is not None
        p.values.extend(outputs)
        p.count += len(outputs)

    def reread_all(self, file_idx: int, n: int, out_field: str) -> None:
        """The next ``n`` items are every record of file ``file_idx`` (lines 1..n), field ``out_field``."""
        self.fields[file_idx] = out_field
        self._last(file_idx, False, True).count += n

    def reread_line(self, file_idx: int, line: int, out_field: str) -> None:
        self.fields[file_idx] = out_field
        p = self._last(file_idx, False, False)
        assert p.lines is not None
        p.lines.append(line)
        p.count += 1

    def __len__(self) -> int:
        return sum(p.count for p in self.parts)


def _file_outputs(path: Path, sha256: str, kept: bytes | None, out_field: str, parts: list[_Part]) -> Iterator[str | None]:
    """The outputs of one file's re-read parts (in line order), checking the file is unchanged (``kept``: its
    bytes when held in memory, as standard input and pipes are)."""
    stream = InputStream(path, data=kept)
    want_all = all(p.lines is None for p in parts)
    wanted = set() if want_all else {line for p in parts for line in (p.lines or ())}
    take = itemgetter(out_field)
    chunks = line_chunks(without_bom(stream.blocks(), path), path=path)
    if want_all:
        for chunk in chunks:
            objs = json_chunk(chunk)
            if objs is None:  # the bulk path read every line as a record: this file changed
                raise _changed(path)
            try:
                yield from map(take, objs)
            except (KeyError, TypeError):
                raise _changed(path) from None
    else:
        for lineno, line, _torn in lines_of(chunks):
            if lineno in wanted:
                try:
                    yield orjson.loads(line)[out_field]
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    raise _changed(path) from None
    if stream.sha256 != sha256:
        raise _changed(path)


def _changed(path: Path) -> BadInput:
    return BadInput("the file changed while it was being read (rerun the command)", path=path)


class _Rereadable(Sequence):
    """A sequence of outputs read again on each iteration; indexing keeps them all (kept in ``_kept``)."""

    _kept: tuple[str | None, ...] | None

    @overload
    def __getitem__(self, i: int) -> str | None: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str | None]: ...
    def __getitem__(self, i: Any) -> Any:
        if self._kept is None:
            self._kept = tuple(self)
        return self._kept[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]


class StreamedOutputs(_Rereadable):
    """The raw outputs of a run, read again from its files on each iteration (see module doc).

    Iterating streams; indexing reads every output once and keeps them (a
    command that shows a few texts).
    """

    def __init__(self, out: OutputParts, files: Sequence[tuple[Path, str, bytes | None]]) -> None:
        self._out = out
        self._files = list(files)  # (path, sha256, bytes held in memory or None) per file index
        self._n = len(out)
        self._kept: tuple[str | None, ...] | None = None

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str | None]:
        if self._kept is not None:
            yield from self._kept
            return
        parts = self._out.parts
        i = 0
        while i < len(parts):
            p = parts[i]
            if p.values is not None:
                yield from p.values
                i += 1
                continue
            j = i
            while j < len(parts) and parts[j].values is None and parts[j].file_idx == p.file_idx:
                j += 1
            path, sha, kept = self._files[p.file_idx]
            n = 0
            for value in _file_outputs(path, sha, kept, self._out.fields[p.file_idx], parts[i:j]):
                n += 1
                yield value
            if n != sum(q.count for q in parts[i:j]):
                raise _changed(path)
            i = j



class SelectedOutputs(_Rereadable):
    """The outputs at ``idx`` (ascending) of a streamed sequence: each iteration streams the whole again."""

    def __init__(self, parent: Sequence[str | None], idx: Sequence[int]) -> None:
        self._parent, self._idx = parent, list(idx)
        self._kept: tuple[str | None, ...] | None = None

    def __len__(self) -> int:
        return len(self._idx)

    def __iter__(self) -> Iterator[str | None]:
        if self._kept is not None:
            yield from self._kept
            return
        want = iter(self._idx)
        nxt = next(want, None)
        for i, value in enumerate(self._parent):
            if nxt is None:
                break
            if i == nxt:
                yield value
                nxt = next(want, None)



def select(outputs: Sequence[str | None], idx: Sequence[int]) -> Sequence[str | None]:
    """``outputs`` at the ascending positions ``idx``: a tuple, or streamed when ``outputs`` is."""
    if isinstance(outputs, (StreamedOutputs, SelectedOutputs)):
        return SelectedOutputs(outputs, idx)
    return tuple(outputs[i] for i in idx)
