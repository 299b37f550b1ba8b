"""Reading TREC run files and qrels for ``replicate rankings`` (I/O).

A **run file** holds one retrieval system's ranked results, one a line,
``qid Q0 docid rank score tag`` separated by whitespace, as trec_eval reads
them (``q49 Q0 p3659 1 14.2 bm25``). Lines are checked while the file is
streamed; refused, naming file and line (exit 2): a line with other than six
columns, a rank that is not a whole number, a score that is not a finite
number, a docid given twice for one topic (trec_eval refuses those too; the
first line is named), bytes that are not UTF-8, a file with no results.
Blank lines are skipped and counted (``blank-line``), a UTF-8 byte-order mark
too (``bom``). The second and sixth columns are kept as read (the tags are
reported); the order of the results comes from the scores, as in trec_eval
and ir-measures, not from the rank column.

**Qrels** are read by the ``trec-qrels@1`` reader (``qid iter docid grade``,
the rules in docs/readers.md), the same one ``--reader trec-qrels@1`` uses.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from types import MappingProxyType
from typing import Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.provenance import FileProvenance, find_release
from replicate.rankings.model import Qrels, RunFile

COLUMNS = "'qid Q0 docid rank score tag' (e.g. 'q49 Q0 p3659 1 14.2 bm25')"
BOM = b"\xef\xbb\xbf"


def _number(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _is_int(token: str) -> bool:
    t = token[1:] if token[:1] in ("-", "+") else token
    return t.isascii() and t.isdigit()


def read_run_file(path: str | os.PathLike[str], diagnostics: Diagnostics, *, name: str | None = None) -> RunFile:
    """One run file, checked line by line as it is streamed (see the module docstring)."""
    p = Path(path)
    digest = hashlib.sha256()
    results: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    tags: dict[str, None] = {}
    n = 0
    try:
        fh = p.open("rb")
    except OSError as exc:
        raise BadInput(f"cannot read the run file: {exc.strerror or exc}", path=p) from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            digest.update(raw)
            if lineno == 1 and raw.startswith(BOM):
                diagnostics.warn("bom", "UTF-8 byte-order mark (ignored)", path=p, line=1)
                raw = raw[len(BOM):]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise BadInput("not valid UTF-8", path=p, line=lineno) from None
            tokens = line.split()
            if not tokens:
                diagnostics.warn("blank-line", "blank line (skipped)", path=p, line=lineno)
                continue
            if len(tokens) != 6:
                raise BadInput(f"expected 6 whitespace-separated columns {COLUMNS}, got {len(tokens)}: "
                               f"{line.strip()[:60]!r}", path=p, line=lineno)
            qid, _, docid, rank, score_text, tag = tokens
            if not _is_int(rank):
                raise BadInput(f"rank {rank!r} is not a whole number", path=p, line=lineno)
            score = _number(score_text)
            if score is None:
                raise BadInput(f"score {score_text!r} is not a finite number", path=p, line=lineno)
            seen = first_line.setdefault((qid, docid), lineno)
            if seen != lineno:
                raise BadInput(f"docid {docid!r} is retrieved twice for topic {qid!r} (first at line {seen}); "
                               f"trec_eval refuses a run with duplicates", path=p, line=lineno)
            results.setdefault(qid, {})[docid] = score
            tags.setdefault(tag)
            n += 1
    if n == 0:
        raise BadInput("the run file holds no results", path=p)
    prov = FileProvenance(str(p), p.stat().st_size, digest.hexdigest(), find_release(p))
    frozen = MappingProxyType({q: MappingProxyType(d) for q, d in results.items()})
    return RunFile(name or p.stem, prov, frozen, n, tuple(tags))


def run_paths(given: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The run files named: each path a file, or a directory standing for its files (sorted; hidden ones skipped)."""
    out: list[Path] = []
    for g in given:
        p = Path(g)
        if p.is_dir():
            inside = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not inside:
                raise BadInput("the directory holds no run files", path=p)
            out.extend(inside)
        elif p.exists():
            out.append(p)
        else:
            raise BadInput("no such file", path=p)
    return out


def read_runs(paths: Sequence[str | os.PathLike[str]], diagnostics: Diagnostics) -> list[RunFile]:
    """Every run file (see :func:`run_paths`), each named after its file; two files of one name are refused."""
    files = run_paths(paths)
    names: dict[str, Path] = {}
    for f in files:
        if f.stem in names:
            raise UsageError(f"two run files are named {f.stem!r} (the system's name): {names[f.stem]} and {f}")
        names[f.stem] = f
    return [read_run_file(f, diagnostics) for f in files]


def read_qrels(path: str | os.PathLike[str], diagnostics: Diagnostics) -> Qrels:
    """A TREC qrels file through the ``trec-qrels@1`` reader (its rules and warnings)."""
    from replicate.judge.load import load_run
    from replicate.judge.model import KEY_SEP

    name = Path(str(path).removesuffix(".gz")).stem  # qrels.txt and qrels.txt.gz are both "qrels"
    run = load_run(name, Path(path), reader="trec-qrels@1", diagnostics=diagnostics, gold=True)
    assert run.labels is not None
    judgments: dict[str, dict[str, int]] = {}
    for key, grade in zip(run.keys.tolist(), run.labels.tolist()):
        qid, _, docid = key.partition(KEY_SEP)
        judgments.setdefault(qid, {})[docid] = int(grade)
    frozen = MappingProxyType({q: MappingProxyType(d) for q, d in judgments.items()})
    return Qrels(run.files[0].provenance, frozen, run.reader)
