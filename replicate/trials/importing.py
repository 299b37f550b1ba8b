"""``replicate import``: benchmark logs in, the trials table ``replicate items`` reads out (I/O).

Each file is read by a reader whose records are correctness verdicts (named
with ``reader``, else chosen by content as every command does); its verdicts
become rows as :mod:`replicate.trials.import_rows` says; the table is written
whole or not at all, and an existing ``out`` is replaced only when it is an
earlier 'replicate import' output or with ``force`` (:mod:`replicate.outfile`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param, UsageError
from replicate.reading.contract import READERS, Reader, ReadOptions, Source
from replicate.trials.import_rows import (
    DEFAULT_UNSCORED,
    ImportReport,
    Verdict,
    VerdictFile,
    check_unscored_as,
    summarise,
    trial_rows,
)


def _verdict_readers() -> str:
    return ", ".join(r.name for r in READERS if r.yields == "verdicts") or "none installed"


def _check_reader(r: Reader, path: Path) -> None:
    if r.yields != "verdicts":
        raise BadInput(
            f"{r.name} reads {r.yields} (not correctness verdicts): 'replicate import' writes a trials table "
            f"from readers of verdicts ({_verdict_readers()}); a K-trial collection is scored with 'replicate score'",
            path=path,
        )


def read_verdicts(path: str | Path, *, reader: str | None, options: ReadOptions, diagnostics: Diagnostics) -> VerdictFile:
    """Every verdict of one file, with the reader used, what it settled and what the file says about itself."""
    from replicate.judge.load.detect import choose_reader, directory_file
    from replicate.judge.load.readfile import read_file, strip_bom

    p = directory_file(Path(path), READERS.get(reader) if reader is not None else None)  # a HELM run directory
    f = read_file(p, sniff=reader is None)
    r = READERS.get(reader) if reader is not None else choose_reader(f, options)
    _check_reader(r, p)
    src = Source(f.path, strip_bom(f, diagnostics), options, diagnostics)
    verdicts: list[Verdict] = []
    for rec in r.records(src):
        key = rec.key
        if not isinstance(key, tuple) or not key or not all(type(k) is str for k in key):
            raise src.bad(f"reader gave a key that is not a non-empty tuple of strings: {key!r}", rec.line)
        if rec.correct is not None and type(rec.correct) is not bool:
            raise src.bad(f"reader gave a verdict that is not True/False/None: {rec.correct!r}", rec.line)
        if rec.trial is not None and (type(rec.trial) is not int or rec.trial < 0):
            raise src.bad(f"reader gave a trial that is not a whole number >= 0: {rec.trial!r}", rec.line)
        verdicts.append(Verdict("/".join(key), rec.line, rec.correct, rec.trial, rec.no_answer is True))
    if not verdicts:
        raise BadInput(f"no verdict read ({r.name}): the file holds no scored sample", path=p)
    return VerdictFile(f.provenance(), r.name, "given" if reader is not None else "by content", verdicts,
                       dict(src.used), dict(src.about))


def import_trials(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    reader: str | None = None,
    model: str | Sequence[str] | None = None,
    benchmark: str | None = None,
    options: ReadOptions | None = None,
    unscored_as: str = DEFAULT_UNSCORED,
    force: bool = False,
    diagnostics: Diagnostics | None = None,
) -> ImportReport:
    """Read ``paths`` with a verdict reader and write the trials table ``out`` (``.jsonl``, ``.jsonl.gz``, ``.csv``;
    ``-`` writes JSONL to standard output). ``model``/``benchmark`` override what the files say about themselves."""
    from replicate.scoring.pipeline import check_out, write_trials

    diag = diagnostics if diagnostics is not None else Diagnostics()
    if not paths:
        raise UsageError(Message("no files given (", Param("files"), ")"))
    out_path = Path(out)
    check_out(out_path, command="import", force=force)
    check_unscored_as(unscored_as)
    if reader is not None:
        READERS.get(reader)  # an unknown name is refused before any file is read
    opts = options if options is not None else ReadOptions()
    files = [read_verdicts(p, reader=reader, options=opts, diagnostics=diag) for p in paths]
    rows, imported = trial_rows(files, model=model, benchmark=benchmark, unscored_as=unscored_as)
    for f in imported:
        if f.unscored:
            diag.warn("unscored-written", f"{f.unscored} of {f.rows} trial(s) carry no verdict: written as {unscored_as}",
                      path=f.provenance.path)
    write_trials(rows, out_path, command="import", force=force)
    return summarise(rows, imported, out=str(out_path), unscored_as=unscored_as)
