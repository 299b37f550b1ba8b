"""Verdicts read from benchmark logs -> rows of the trials table, and the summary of an import (pure).

``replicate import`` reads files with a reader whose records are correctness
verdicts (``lm-eval-samples@1``, ``inspect-log@1``, plugins) and writes the
trials table ``replicate items`` reads: one row per (model, item, trial). This
module holds the part without I/O: which model, benchmark and trial each
verdict belongs to, its category, the checks across files, and the summary.
The reading and the writing are in :mod:`replicate.trials.importing`.

- **model**: ``--model`` when given (once for every file, or once per file in
  the order of the files), else what the file says (``Source.about``: an
  inspect log's ``eval.model``); a file that names none needs ``--model``.
- **benchmark**: ``--benchmark``, else the file's task (an inspect log's
  ``eval.task``, an lm-eval samples file's name); else ``--benchmark`` is needed.
- **trial**: the record's own trial (an inspect log's epoch, kept as it is:
  epochs 1 and 2 are trials 1 and 2); for a file whose records carry none (an
  lm-eval samples file holds one verdict per document), the file's position
  among the files of the same model and benchmark, from 0: three samples files
  of one model (three runs) are trials 0, 1 and 2.
- **category**: a right verdict is ``correct``, a wrong one ``wrong``; an
  unscored verdict (null metric or score, a sample that errored) carries no
  verdict and becomes ``unscored_as`` (default ``api_error``, which leaves
  p̂'s denominator as an API error does); it is counted, never dropped. A
  verdict whose answer the log's own filter did not find (lm-eval's
  ``[invalid]``: :attr:`~replicate.reading.contract.Record.no_answer`) is a
  ``format_failure``, counted as an extraction failure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from replicate.errors import BadInput, Message, Param, UsageError
from replicate.output import Format, FormatArg, table
from replicate.provenance import FileProvenance
from replicate.trials.load import CATEGORIES

#: Categories an unscored verdict may be counted as (anything but correct).
UNSCORED_AS: tuple[str, ...] = tuple(c for c in CATEGORIES if c != "correct")
DEFAULT_UNSCORED = "api_error"
#: The category of a trial whose answer the log's own extraction did not find (lm-eval's ``[invalid]``).
NO_ANSWER_AS = "format_failure"


@dataclass(frozen=True, slots=True)
class Verdict:
    """One record of a verdict reader: the item, where it was read, the verdict and its trial (or None)."""

    item: str
    line: int
    correct: bool | None
    trial: int | None
    no_answer: bool = False  # the log's own extraction found no answer (lm-eval's [invalid])


@dataclass(frozen=True)
class VerdictFile:
    """What one file gave: its verdicts, the reader that read them and what the file says about itself."""

    provenance: FileProvenance
    reader: str
    chosen: str  # "given" (--reader) or "by content"
    verdicts: Sequence[Verdict]
    reader_options: Mapping[str, str] = field(default_factory=dict)
    about: Mapping[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.provenance.path


@dataclass(frozen=True)
class ImportedFile:
    """One file as imported: where it came from, how it was read and what it gave."""

    provenance: FileProvenance
    reader: str
    chosen: str
    reader_options: Mapping[str, str]
    model: str
    model_from: str  # "--model" or "the file"
    benchmark: str
    benchmark_from: str
    trials: str  # "the file's own" or "file order: trial N"
    rows: int
    unscored: int
    extraction_failures: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            **self.provenance.to_json(),
            "reader": self.reader,
            "reader_chosen": self.chosen,
            "reader_options": dict(self.reader_options),
            "model": self.model,
            "model_from": self.model_from,
            "benchmark": self.benchmark,
            "benchmark_from": self.benchmark_from,
            "trials": self.trials,
            "rows": self.rows,
            "unscored": self.unscored,
            "extraction_failures": self.extraction_failures,
        }


@dataclass(frozen=True)
class Cell:
    """One model x benchmark of the written table: items, trials per item and rows per category."""

    model: str
    benchmark: str
    items: int
    k_min: int
    k_max: int
    categories: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "benchmark": self.benchmark, "items": self.items,
                "trials_per_item": {"min": self.k_min, "max": self.k_max}, "categories": dict(self.categories)}


@dataclass(frozen=True)
class ImportReport:
    """What ``replicate import`` wrote and from what."""

    out: str | None
    rows: int
    models: tuple[str, ...]
    items: int  # distinct (benchmark, item) pairs
    cells: tuple[Cell, ...]
    unscored: int
    unscored_as: str
    files: tuple[ImportedFile, ...]
    extraction_failures: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "rows": self.rows,
            "models": list(self.models),
            "items": self.items,
            "cells": [c.to_json() for c in self.cells],
            "unscored": {"trials": self.unscored, "written_as": self.unscored_as},
            "extraction_failures": {"trials": self.extraction_failures, "written_as": NO_ANSWER_AS},
            "inputs": [f.to_json() for f in self.files],
        }


def check_unscored_as(category: str) -> str:
    if category not in UNSCORED_AS:
        raise UsageError(Message(Param("unscored_as"), f" must be one of {', '.join(UNSCORED_AS)}; got {category!r}"))
    return category


def _named(given: str | None, about: Mapping[str, str], key: str, param: str, f: VerdictFile, why: str) -> tuple[str, str]:
    if given is not None:
        if not given.strip():
            raise UsageError(Message(Param(param), " must not be empty"))
        return given, f"--{param}"
    found = about.get(key)
    if found:
        return found, "the file"
    raise UsageError(Message(f"{f.path}: the file does not name its {why} ({f.reader}); pass ", Param(param)))


def models_per_file(model: str | Sequence[str] | None, n_files: int) -> list[str | None]:
    """One model name (or None) per file: one name for every file, or one per file in order."""
    if model is None or isinstance(model, str):
        return [model] * n_files
    names: list[str | None] = list(model)
    if len(names) == 1:
        return names * n_files
    if len(names) != n_files:
        raise UsageError(Message(Param("model"), f" is given {len(names)} times for {n_files} files: give it once "
                                 "(every file) or once per file, in the order of the files"))
    return names


def trial_rows(
    files: Sequence[VerdictFile],
    *,
    model: str | Sequence[str] | None = None,
    benchmark: str | None = None,
    unscored_as: str = DEFAULT_UNSCORED,
) -> tuple[list[dict[str, Any]], list[ImportedFile]]:
    """Rows of the trials table (file order) and what each file gave. Pure.

    Refused: a file whose records carry a trial on some lines and none on
    others, the same bytes given twice for one model and benchmark, and a
    (model, benchmark, item, trial) given twice (naming both places).
    """
    check_unscored_as(unscored_as)
    models = models_per_file(model, len(files))
    rows: list[dict[str, Any]] = []
    imported: list[ImportedFile] = []
    seen: dict[tuple[str, str, str, int], tuple[str, int]] = {}
    next_trial: Counter[tuple[str, str]] = Counter()
    digests: dict[tuple[str, str, str], str] = {}
    for f, given_model in zip(files, models):
        m, m_from = _named(given_model, f.about, "model", "model", f, "model")
        b, b_from = _named(benchmark, f.about, "task", "benchmark", f, "benchmark (task)")
        twin = (m, b, f.provenance.sha256)
        if twin in digests:
            raise BadInput(f"holds the same bytes as {digests[twin]} (sha256 {f.provenance.sha256[:12]}...): "
                           f"its trials of {m} on {b} would be counted twice", path=f.path)
        digests[twin] = f.path
        own = [v.trial is not None for v in f.verdicts]
        if any(own) and not all(own):
            v = f.verdicts[own.index(False) if own[0] else own.index(True)]
            raise BadInput("some records carry a trial and others none: the trials of this file are unclear",
                           path=f.path, line=v.line)
        fixed: int | None = None
        if not any(own):
            fixed = next_trial[(m, b)]
            next_trial[(m, b)] += 1
        n_unscored = n_failed = 0
        start = len(rows)
        for v in f.verdicts:
            trial = fixed if fixed is not None else v.trial
            assert trial is not None
            where = (m, b, v.item, trial)
            if where in seen:
                p, line = seen[where]
                raise BadInput(f"model {m!r}, benchmark {b!r}, item {v.item!r}, trial {trial} is given again "
                               f"(first at {p}:{line})", path=f.path, line=v.line)
            seen[where] = (f.path, v.line)
            if v.no_answer:
                n_failed += 1
                category = NO_ANSWER_AS
            elif v.correct is None:
                n_unscored += 1
                category = unscored_as
            else:
                category = "correct" if v.correct else "wrong"
            rows.append({"model": m, "item": v.item, "trial": trial, "benchmark": b, "category": category,
                         "reader": f.reader})
        imported.append(ImportedFile(
            f.provenance, f.reader, f.chosen, f.reader_options, m, m_from, b, b_from,
            "the file's own" if fixed is None else f"file order: trial {fixed}", len(rows) - start, n_unscored,
            n_failed,
        ))
    return rows, imported


def summarise(rows: Sequence[Mapping[str, Any]], files: Sequence[ImportedFile], *, out: str | None,
              unscored_as: str) -> ImportReport:
    """The report of an import: per model and benchmark, the items, trials per item and categories. Pure."""
    per_item: Counter[tuple[str, str, str]] = Counter()
    cats: dict[tuple[str, str], Counter[str]] = {}
    for r in rows:
        per_item[(r["model"], r["benchmark"], str(r["item"]))] += 1
        cats.setdefault((r["model"], r["benchmark"]), Counter())[r["category"]] += 1
    ks: dict[tuple[str, str], list[int]] = {}
    for (m, b, _), k in per_item.items():
        ks.setdefault((m, b), []).append(k)
    cells = tuple(
        Cell(m, b, len(ks[(m, b)]), min(ks[(m, b)]), max(ks[(m, b)]),
             {c: cats[(m, b)][c] for c in CATEGORIES if cats[(m, b)][c]})
        for m, b in sorted(ks)
    )
    items = len({(b, i) for _, b, i in per_item})
    return ImportReport(out, len(rows), tuple(sorted({m for m, _ in ks})), items, cells,
                        sum(f.unscored for f in files), unscored_as, tuple(files),
                        sum(f.extraction_failures for f in files))


def render_import(rep: ImportReport, fmt: FormatArg) -> str:
    """Per model and benchmark: items, trials per item, rows per category; then the files read. Pure."""
    f = Format(fmt)
    shown = [c for c in CATEGORIES if any(c in cell.categories for cell in rep.cells)]
    body = [[c.model, c.benchmark, c.items, str(c.k_min) if c.k_min == c.k_max else f"{c.k_min}-{c.k_max}",
             *(c.categories.get(k, 0) for k in shown)] for c in rep.cells]
    out = [table(body, ["model", "benchmark", "items", "trials per item", *shown], f).rstrip("\n"), ""]
    where = "standard output" if rep.out == "-" else rep.out
    out.append(f"{rep.rows} rows ({len(rep.models)} model(s), {rep.items} item(s)) written to {where}")
    if rep.unscored:
        out.append(f"unscored: {rep.unscored} trial(s) without a verdict, written as {rep.unscored_as}")
    else:
        out.append("unscored: none")
    if rep.extraction_failures:
        out.append(f"extraction failures: {rep.extraction_failures} trial(s) whose answer the log's own filter did "
                   f"not find (lm-eval's [invalid]), written as {NO_ANSWER_AS}")
    out.append("")
    files = [[fi.provenance.path, fi.reader + (" (by content)" if fi.chosen == "by content" else ""),
              ", ".join(f"{k}={v}" for k, v in fi.reader_options.items()) or "-",
              fi.model + (" (--model)" if fi.model_from == "--model" else ""),
              fi.benchmark + (" (--benchmark)" if fi.benchmark_from == "--benchmark" else ""),
              fi.trials, fi.rows, fi.provenance.sha256] for fi in rep.files]
    out.append(table(files, ["file", "reader", "reader options", "model", "benchmark", "trials", "rows", "sha256"],
                     f).rstrip("\n"))
    return "\n".join(out) + "\n"
