"""Choosing a file's reader by its content (never by its name alone).

Every installed reader's ``sniff`` looks at the head of the file (gzip undone,
a UTF-8 BOM removed) and answers ``yes``, ``maybe`` or ``no`` (see
:mod:`replicate.reading.contract`). The one ``yes`` is chosen; with no ``yes``, the one
``maybe``; otherwise the file's shape is ambiguous or unknown, and the error
lists the readers that could apply. An empty (or blank) file holds no record
whatever its reader: it keeps the reader of the run's previous file (the
default ``judge-jsonl@1`` for the first) and is warned as empty.

A directory given as a run file (a HELM run directory) is read through the
file in it that a reader names in :attr:`~replicate.reading.contract.Reader.run_files`
(:func:`directory_file`); that file's content then chooses its reader as usual.
"""

from __future__ import annotations

from pathlib import Path

from replicate.command_input import is_stdio
from replicate.errors import BadInput
from replicate.judge.load.readfile import RawFile
from replicate.reading.contract import MATCHES, READERS, Reader, ReadOptions, first_line
from replicate.reading.parquet import NEEDS_PYARROW, have_pyarrow, is_parquet

#: The reader of an empty file that is the first of its run.
DEFAULT_READER = "judge-jsonl@1"


def file_head(f: RawFile) -> bytes:
    """What ``sniff`` sees of ``f``, opened to be sniffed (:attr:`~replicate.judge.load.readfile.RawFile.sniffed`)."""
    assert f.sniffed is not None, "open the file with sniff=True to choose its reader by content"
    return f.sniffed


def sniff_all(head: bytes, options: ReadOptions) -> dict[str, str]:
    """Every installed reader's answer for ``head`` (a reader whose sniff fails answers ``no``)."""
    out: dict[str, str] = {}
    for r in READERS:
        try:
            answer = r.sniff(head, options)
        except Exception:  # a broken plugin must not stop other readers from being tried
            answer = "no"
        out[r.name] = answer if answer in MATCHES else "no"
    return out


def _shown(head: bytes) -> str:
    line = first_line(head) or b""
    text = line[:60].decode("utf-8", "replace")
    return text + ("..." if len(line) > 60 else "")


def choose_reader(f: RawFile, options: ReadOptions, *, previous: Reader | None = None, gold: bool = False) -> Reader:
    """The reader of ``f`` by content (:func:`reader_of` its head)."""
    return reader_of(file_head(f), f.path, options, previous=previous, gold=gold)


def reader_of(head: bytes, path: Path, options: ReadOptions, *, previous: Reader | None = None, gold: bool = False) -> Reader:
    """The reader of the file at ``path`` by its ``head`` (what ``sniff`` sees, :attr:`RawFile.sniffed`; see
    the module doc); BadInput when none or several fit.

    Readers of gold alone (:attr:`Reader.gold_only`) are candidates only for a gold file (``gold``).
    """
    if first_line(head) is None:
        return previous if previous is not None else READERS.get(DEFAULT_READER)
    answers = sniff_all(head, options)
    if not gold:
        answers = {n: ("no" if READERS.get(n).gold_only else a) for n, a in answers.items()}
    yes = [n for n, a in answers.items() if a == "yes"]
    maybe = [n for n, a in answers.items() if a == "maybe"]
    if len(yes) == 1:
        return READERS.get(yes[0])
    if len(maybe) == 1 and not yes:
        return READERS.get(maybe[0])
    hint = "name one with --reader (see 'replicate readers list')"
    if yes:
        problem = f"ambiguous shape: several readers recognise this file: {', '.join(yes)}; {hint}"
    elif maybe:
        problem = f"ambiguous shape: no reader recognises this file for sure, several could apply: {', '.join(maybe)}; {hint}"
    elif is_parquet(head) and not have_pyarrow():
        problem = f"a Parquet file: {NEEDS_PYARROW}"
    else:
        listing = "; ".join(f"{r.name} ({r.description})" for r in READERS) or "none installed"
        problem = (f"unknown shape: no installed reader recognises this file (first line: {_shown(head)!r}); "
                   f"readers: {listing}; {hint}")
    raise BadInput(problem, path=path)


def directory_file(path: Path, given: Reader | None) -> Path:
    """``path``, or for a directory the file in it that ``given`` (else any installed reader) reads it through.

    A directory no reader names a file of (or, with ``given``, none of its
    :attr:`~replicate.reading.contract.Reader.run_files`) is :class:`BadInput` listing what was looked for.
    """
    if is_stdio(path) or not path.is_dir():
        return path
    readers = [given] if given is not None else [r for r in READERS if r.run_files and r.directory_default]
    found = {r.name: next((path / n for n in r.run_files if (path / n).is_file()), None) for r in readers}
    hits = {p for p in found.values() if p is not None}
    if len(hits) == 1:
        return hits.pop()
    if len(hits) > 1:
        listing = ", ".join(f"{n} ({p.name})" for n, p in found.items() if p is not None)
        raise BadInput(f"is a directory that several readers read: {listing}; name one with --reader", path=path)
    wanted = "; ".join(f"{r.name}: {' or '.join(r.run_files)}" for r in readers if r.run_files)
    if given is not None and not given.run_files:
        raise BadInput(f"is a directory, not a file: reader {given.name} reads files (give the file)", path=path)
    held = sorted(p.name for p in path.iterdir())
    shown = ", ".join(held[:8]) + (f" and {len(held) - 8} more" if len(held) > 8 else "") if held else "nothing"
    raise BadInput(
        f"is a directory holding none of the files a reader reads a directory through ({wanted or 'no reader does'}); "
        f"it holds: {shown}",
        path=path,
    )
