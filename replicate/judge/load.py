"""Reading released judge files into :class:`~replicate.judge.model.Run` values (I/O).

Two formats:

- **flat JSONL** (``.jsonl`` or ``.jsonl.gz``): one JSON object per item, e.g.
  ``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 0.0,
  "model_output": "##final score: 1"}``. Which fields hold the key, the gold
  grade and the raw output is a :class:`FieldSpec`.
- **grouped EXAM** (``.jsonl.gz``): each line ``[query_id, [paragraph, ...]]``;
  each paragraph is one item whose label is already decided by its exam grades
  (see :func:`exam_label`).

Each file is read once (gzip is recognised by its magic bytes). Every record is
checked; what is wrong is either an error (:class:`BadInput` naming file and
line) or a counted warning in the :class:`Diagnostics` (``--strict`` makes those
errors too). Nothing is dropped silently. The rules:

Errors (exit 2): a line that is not JSON or not valid UTF-8; a torn last line
(the file ends mid-record); an array or scalar where an object is due; a
missing key, gold or output field; a key that is not a string or an integer; a
gold grade that is not a non-negative integer (2.5, -1, "abc", null); a
duplicate key with different content (within a file or across a run's files);
a truncated or corrupt gzip; a run with no records.

Counted warnings (code): a blank line (``blank-line``); a UTF-8 byte-order mark
(``bom``); an empty file (``empty-file``); a duplicate key with the same gold
and output (``duplicate-identical``, first kept); a ``null`` output
(``null-output``, read as unparsed); an EXAM paragraph without graded
questions (``exam-no-questions``, unparsed).
"""

from __future__ import annotations

import gc
import gzip
import hashlib
import operator
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import orjson

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.model import KEY_SEP, Run, RunFile, readonly
from replicate.parsing import UNPARSED
from replicate.provenance import FileProvenance, find_release

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
FORMATS = ("auto", "jsonl", "exam")
#: Mean line length (bytes) above which the bulk path parses line by line.
_LONG_LINES = 300
_SAMPLE = 1 << 16
#: Largest gold grade the int16 gold array holds.
_GOLD_MAX = np.iinfo(np.int16).max


@dataclass(frozen=True)
class FieldSpec:
    """Which fields of a flat JSONL record hold what.

    ``key_fields`` identify an item (values compared as strings: the number
    19335 and the string "19335" are the same key); ``gold_field`` holds the
    reference grade; the first of ``output_fields`` present in a file's first
    record is that file's output field. ``thought_fields`` and
    ``rewritten_field`` are only counted and reported.
    """

    key_fields: tuple[str, ...] = ("query_id", "corpus_id")
    gold_field: str = "original_qrel_score"
    output_fields: tuple[str, ...] = ("model_output", "gemini_output")
    thought_fields: tuple[str, ...] = ("model_thought", "gemini_thought")
    rewritten_field: str = "original_output"

    def __post_init__(self) -> None:
        for name in ("key_fields", "output_fields", "thought_fields"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
        if not self.key_fields:
            raise ValueError("key_fields must name at least one field")
        if not self.output_fields:
            raise ValueError("output_fields must name at least one field")
        for name in ("key_fields", "output_fields", "thought_fields"):
            if not all(isinstance(f, str) and f for f in getattr(self, name)):
                raise ValueError(f"{name} must be non-empty field names")

    def to_json(self) -> dict:
        return {
            "key_fields": list(self.key_fields),
            "gold_field": self.gold_field,
            "output_fields": list(self.output_fields),
        }


# -- small checks shared by both paths ---------------------------------------------------


def key_text(value: Any) -> str | None:
    """A key field's value as the string it is compared by (None if not a str/int)."""
    t = type(value)
    if t is str:
        return value
    if t is int:
        return str(value)
    return None


def gold_int(value: Any) -> int | None:
    """A gold grade as an int: 2 and 2.0 give 2; 2.5, -1, "2", true, null give None.

    Grades are non-negative: a negative one could not be told apart from the
    unparsed marker (-1) in label arithmetic.
    """
    t = type(value)
    if t is int:
        v = value
    elif t is float and value.is_integer():
        v = int(value)
    else:
        return None
    return v if 0 <= v <= _GOLD_MAX else None


def exam_label(covered: int, total: int) -> int | None:
    """round(3 x covered / total) exactly as Python's ``round`` does it (ties to even).

    The released EXAM analysis computed ``round(3 * covered / total)`` in
    Python, so a tie goes to the even grade: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2. Done
    in integer arithmetic so no float error can move a tie. None when total is 0.
    """
    if total <= 0:
        return None
    q, r = divmod(3 * covered, total)
    twice = 2 * r
    if twice > total or (twice == total and q % 2 == 1):
        q += 1
    return q


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, dict):
        return "a JSON object"
    if value is None:
        return "null"
    return f"a JSON {type(value).__name__} ({orjson.dumps(value).decode()[:40]})"


# -- reading bytes -------------------------------------------------------------------------


@dataclass
class _File:
    path: Path
    raw: bytes
    data: bytes
    digest: Future | None = None  # sha256 of ``raw``, computed beside the parsing

    def provenance(self) -> FileProvenance:
        digest = self.digest.result() if self.digest is not None else hashlib.sha256(self.raw).hexdigest()
        return FileProvenance(str(self.path), len(self.raw), digest, find_release(self.path))


_HASHER: ThreadPoolExecutor | None = None
#: Files at least this large are hashed on a worker thread while they are parsed
#: (hashlib releases the GIL), so provenance costs no extra wall time.
_HASH_IN_THREAD = 1 << 20


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _start_hash(raw: bytes) -> Future | None:
    global _HASHER
    if len(raw) < _HASH_IN_THREAD:
        return None
    if _HASHER is None:
        _HASHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="replicate-sha256")
    return _HASHER.submit(_sha256_hex, raw)


def _read(path: Path) -> _File:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BadInput("no such file", path=path) from None
    except IsADirectoryError:
        raise BadInput("is a directory, not a file", path=path) from None
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror}", path=path) from None
    data = raw
    if raw[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(raw)
        except EOFError:
            raise BadInput(
                "truncated gzip: the compressed stream ends early (incomplete download?)", path=path
            ) from None
        except (gzip.BadGzipFile, zlib.error, OSError) as exc:
            raise BadInput(f"corrupt gzip: {exc}", path=path) from None
    elif path.name.endswith(".gz"):
        raise BadInput("name ends in .gz but the file is not gzip-compressed", path=path)
    return _File(path, raw, data, _start_hash(raw))


def _strip_bom(f: _File, diag: Diagnostics) -> bytes:
    """The file's text bytes without a leading BOM (warned); an empty file is warned too."""
    data = f.data
    if data.startswith(BOM):
        diag.warn("bom", "file starts with a UTF-8 byte-order mark (ignored)", path=f.path, line=1)
        data = data[len(BOM) :]
    if not data:
        diag.warn("empty-file", "file is empty: no records", path=f.path)
    return data


def _lines(f: _File, data: bytes, diag: Diagnostics) -> tuple[list[bytes], bool]:
    """The lines of ``data`` (without the newline) and whether the last one is unterminated."""
    if not data:
        return [], False
    lines = data.split(b"\n")
    torn = True
    if lines[-1] == b"":
        lines.pop()
        torn = False
    return lines, torn


def _bad_json(f: _File, lineno: int, line: bytes, exc: Exception, *, last_torn: bool) -> BadInput:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as ue:
        return BadInput(f"not valid UTF-8 (byte {ue.start + 1} of the line)", path=f.path, line=lineno)
    if last_torn:
        return BadInput(
            "torn last line: the file ends in the middle of a record (truncated file?)",
            path=f.path,
            line=lineno,
        )
    shown = line[:60].decode("utf-8", "replace")
    more = "..." if len(line) > 60 else ""
    return BadInput(f"not JSON ({exc}): {shown}{more}", path=f.path, line=lineno)


def _parse_line(f: _File, lineno: int, line: bytes, n_lines: int, torn: bool, diag: Diagnostics) -> Any:
    """One line as a JSON value, or ``_BLANK`` for a blank line (warned)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if not line.strip():
            diag.warn("blank-line", "blank line (skipped)", path=f.path, line=lineno)
            return _BLANK
        raise _bad_json(f, lineno, line, exc, last_torn=torn and lineno == n_lines) from None


_BLANK = object()


# -- flat JSONL ----------------------------------------------------------------------------


@dataclass
class _Acc:
    """Items accumulated over the files of one run.

    Where each item came from is kept cheaply: items read by the bulk path
    form a block of one file with line = position in the block + 1; items
    read line by line record their line in ``lines``.
    """

    keys: list[str]
    gold: list[int]
    outputs: list[str | None]
    labels: list[int]
    splits: list[str]
    lines: dict[int, tuple[int, int]]  # item -> (file index, line), line-by-line items
    blocks: list[tuple[int, int, int]]  # (first item, end item, file index), bulk items
    keyset: set[str]  # the keys of bulk-read files (built by the bulk path anyway)
    _index: dict[str, int] | None = None

    @classmethod
    def empty(cls) -> "_Acc":
        return cls([], [], [], [], [], {}, [], set())

    @property
    def index(self) -> dict[str, int]:
        """Key -> item position, built on first use (only the line-by-line path needs it)."""
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys)}
        return self._index

    def add_bulk(self, keys: list[str], keyset: set[str], gold: np.ndarray, outputs: list[str], split: str, file_idx: int) -> None:
        start, n = len(self.keys), len(keys)
        self.keys.extend(keys)
        self.gold.extend(gold.tolist())
        self.outputs.extend(outputs)
        self.splits.extend([split] * n)
        self.blocks.append((start, start + n, file_idx))
        self.keyset |= keyset
        if self._index is not None:
            self._index.update(zip(keys, range(start, start + n)))

    def seen_before(self, keyset: set[str]) -> bool:
        if not self.keys:
            return False
        if self._index is not None:
            return not self._index.keys().isdisjoint(keyset)
        return not self.keyset.isdisjoint(keyset)

    def where(self, item: int) -> tuple[int, int]:
        if item in self.lines:
            return self.lines[item]
        for start, end, file_idx in self.blocks:
            if start <= item < end:
                return file_idx, item - start + 1
        raise KeyError(item)  # pragma: no cover - every item is in one of the two


def _output_field(f: _File, obj: dict, fields: FieldSpec, lineno: int) -> str:
    for name in fields.output_fields:
        if name in obj:
            return name
    raise BadInput(
        f"record has no output field: looked for {', '.join(map(repr, fields.output_fields))} "
        f"(set the output field name, e.g. --output-field)",
        path=f.path,
        line=lineno,
    )


def _keys_of(values: list) -> list[str] | None:
    """Key field values as strings (ints converted); None if any is neither str nor int."""
    types = set(map(type, values))
    if types <= {str}:
        return values
    if types <= {str, int}:
        return [v if type(v) is str else str(v) for v in values]
    return None


def _count_fields(objs: list[dict], names: Sequence[str]) -> int:
    """How many records carry at least one of ``names``."""
    counts = [sum(map(operator.contains, objs, repeat(n))) for n in names]
    if sum(1 for c in counts if c) <= 1:
        return sum(counts)
    return sum(1 for o in objs if any(n in o for n in names))


def _fast_flat(data: bytes, fields: FieldSpec):
    """The common case in bulk: the whole file parsed by one orjson call.

    Works when every line is an object with str/int keys, an integral gold
    grade and a str output, no line is blank and no key repeats. Returns
    (keys, key set, gold, outputs, output field, lines, thoughts, rewritten), or None
    when anything is unusual so the careful per-line path can name the problem.
    """
    body = data[:-1] if data.endswith(b"\n") else data
    sample = body[:_SAMPLE]
    try:
        if len(sample) > _LONG_LINES * (sample.count(b"\n") + 1):
            # long lines: one orjson call per line costs less than copying the text
            lines = body.split(b"\n")
            n_lines = len(lines)
            objs = list(map(orjson.loads, lines))
        else:
            # short lines: the whole file as one JSON array, one orjson call
            n_lines = body.count(b"\n") + 1
            objs = orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        return None
    if len(objs) != n_lines or set(map(type, objs)) != {dict}:
        return None
    out_field = next((n for n in fields.output_fields if n in objs[0]), None)
    if out_field is None:
        return None
    try:
        parts = [_keys_of(list(map(itemgetter(k), objs))) for k in fields.key_fields]
        gold_raw = list(map(itemgetter(fields.gold_field), objs))
        outputs = list(map(itemgetter(out_field), objs))
    except KeyError:
        return None
    if any(p is None for p in parts) or set(map(type, outputs)) != {str}:
        return None
    keys = parts[0] if len(parts) == 1 else list(map(KEY_SEP.join, zip(*parts)))
    keyset = set(keys)
    if len(keyset) != len(keys):
        return None
    gold_types = set(map(type, gold_raw))
    if not gold_types <= {int, float}:  # bool, str, None, ... -> careful path
        return None
    gold = np.asarray(gold_raw, dtype=np.float64)
    if not (np.all(gold == np.rint(gold)) and np.all((gold >= 0) & (gold <= _GOLD_MAX))):
        return None  # also catches NaN and inf
    thoughts = _count_fields(objs, fields.thought_fields) if fields.thought_fields else 0
    rewritten = _count_fields(objs, (fields.rewritten_field,))
    return keys, keyset, gold.astype(np.int16), outputs, out_field, n_lines, thoughts, rewritten


def _careful_flat(
    f: _File,
    file_idx: int,
    lines: list[bytes],
    torn: bool,
    fields: FieldSpec,
    acc: _Acc,
    files: list[_File],
    diag: Diagnostics,
    split: str,
) -> tuple[int, int, int, int, str | None]:
    """Every check, line by line. Returns (records, skipped, thoughts, rewritten, field)."""
    out_field: str | None = None
    records = skipped = thoughts = rewritten = 0
    n_lines = len(lines)
    kf, gf = fields.key_fields, fields.gold_field
    for lineno, line in enumerate(lines, 1):
        obj = _parse_line(f, lineno, line, n_lines, torn, diag)
        if obj is _BLANK:
            skipped += 1
            continue
        if not isinstance(obj, dict):
            raise BadInput(f"expected a JSON object, got {_describe(obj)}", path=f.path, line=lineno)
        parts = []
        for name in kf:
            if name not in obj:
                raise BadInput(f"record lacks key field {name!r}", path=f.path, line=lineno)
            text = key_text(obj[name])
            if text is None:
                raise BadInput(
                    f"key field {name!r} must be a string or an integer, got {_describe(obj[name])}",
                    path=f.path,
                    line=lineno,
                )
            parts.append(text)
        key = KEY_SEP.join(parts)
        if gf not in obj:
            raise BadInput(f"record lacks gold field {gf!r}", path=f.path, line=lineno)
        gold = gold_int(obj[gf])
        if gold is None:
            raise BadInput(
                f"gold field {gf!r} must be a non-negative integer grade (2 or 2.0), got {_describe(obj[gf])}",
                path=f.path,
                line=lineno,
            )
        if out_field is None:
            out_field = _output_field(f, obj, fields, lineno)
        if out_field not in obj:
            raise BadInput(f"record lacks output field {out_field!r}", path=f.path, line=lineno)
        output = obj[out_field]
        if output is None:
            diag.warn("null-output", f"output field {out_field!r} is null (read as unparsed)", path=f.path, line=lineno)
        elif not isinstance(output, str):
            raise BadInput(
                f"output field {out_field!r} must be a string, got {_describe(output)}", path=f.path, line=lineno
            )
        prev = acc.index.get(key)
        if prev is not None:
            pf, pl = acc.where(prev)
            first = f"{files[pf].path}:{pl}"
            shown = key.replace(KEY_SEP, " / ")
            if acc.gold[prev] == gold and acc.outputs[prev] == output:
                diag.warn(
                    "duplicate-identical",
                    f"duplicate item {shown} (same gold and output as {first}; first kept)",
                    path=f.path,
                    line=lineno,
                )
                skipped += 1
                continue
            raise BadInput(
                f"duplicate item {shown} with different content (first at {first})", path=f.path, line=lineno
            )
        acc.index[key] = len(acc.keys)
        acc.keys.append(key)
        acc.gold.append(gold)
        acc.outputs.append(output)
        acc.splits.append(split)
        acc.lines[len(acc.keys) - 1] = (file_idx, lineno)
        records += 1
        if any(t in obj for t in fields.thought_fields):
            thoughts += 1
        if fields.rewritten_field in obj:
            rewritten += 1
    return records, skipped, thoughts, rewritten, out_field


def _load_flat(
    f: _File, file_idx: int, fields: FieldSpec, acc: _Acc, files: list[_File], diag: Diagnostics, split: str
) -> RunFile:
    data = _strip_bom(f, diag)
    fast = _fast_flat(data, fields) if data else None
    if fast is not None and acc.seen_before(fast[1]):
        fast = None  # a key repeats across files: the careful path says which and where
    if fast is not None:
        keys, keyset, gold, outputs, out_field, n_lines, thoughts, rewritten = fast
        acc.add_bulk(keys, keyset, gold, outputs, split, file_idx)
        records, skipped = len(keys), 0
    else:
        lines, torn = _lines(f, data, diag)
        n_lines = len(lines)
        records, skipped, thoughts, rewritten, out_field = _careful_flat(
            f, file_idx, lines, torn, fields, acc, files, diag, split
        )
    return RunFile(
        provenance=f.provenance(),
        format="jsonl",
        lines=n_lines,
        records=records,
        output_field=out_field,
        rewritten=rewritten,
        skipped=skipped,
        thoughts=thoughts,
    )


# -- grouped EXAM --------------------------------------------------------------------------


def _exam_covered(grade: Any) -> tuple[int, int] | None:
    """(covered, total) from one ``exam_grades`` entry; None if it has neither form."""
    if not isinstance(grade, dict):
        return None
    right, wrong = grade.get("correctAnswered"), grade.get("wrongAnswered")
    if isinstance(right, list) or isinstance(wrong, list):
        right = right if isinstance(right, list) else []
        wrong = wrong if isinstance(wrong, list) else []
        return len(right), len(right) + len(wrong)
    ratings = grade.get("self_ratings")
    if isinstance(ratings, list):
        values = []
        for r in ratings:
            v = r.get("self_rating") if isinstance(r, dict) else r
            if type(v) not in (int, float):
                return None
            values.append(v)
        return sum(1 for v in values if v >= 4), len(values)
    return None


def _load_exam(
    f: _File, file_idx: int, acc: _Acc, files: list[_File], diag: Diagnostics, split: str
) -> RunFile:
    lines, torn = _lines(f, _strip_bom(f, diag), diag)
    records = skipped = 0
    n_lines = len(lines)
    for lineno, line in enumerate(lines, 1):
        value = _parse_line(f, lineno, line, n_lines, torn, diag)
        if value is _BLANK:
            skipped += 1
            continue
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], list)):
            raise BadInput(
                f"expected an EXAM line [query_id, [paragraph, ...]], got {_describe(value)}",
                path=f.path,
                line=lineno,
            )
        qid = key_text(value[0])
        if qid is None:
            raise BadInput(f"query id must be a string or an integer, got {_describe(value[0])}", path=f.path, line=lineno)
        for pos, para in enumerate(value[1], 1):
            where = f"paragraph {pos}"
            if not isinstance(para, dict) or key_text(para.get("paragraph_id")) is None:
                raise BadInput(f"{where}: expected an object with a 'paragraph_id'", path=f.path, line=lineno)
            pid = key_text(para["paragraph_id"])
            where = f"paragraph {pid!r}"
            try:
                judgment = para["paragraph_data"]["judgments"][0]
                rel = judgment["relevance"]
            except (KeyError, IndexError, TypeError):
                raise BadInput(
                    f"{where}: lacks paragraph_data.judgments[0].relevance", path=f.path, line=lineno
                ) from None
            gold = gold_int(rel)
            if gold is None:
                raise BadInput(f"{where}: relevance must be a non-negative integer grade, got {_describe(rel)}", path=f.path, line=lineno)
            grades = para.get("exam_grades")
            if not isinstance(grades, list) or not grades:
                raise BadInput(f"{where}: lacks exam_grades[0]", path=f.path, line=lineno)
            cov = _exam_covered(grades[0])
            if cov is None:
                raise BadInput(
                    f"{where}: exam_grades[0] has neither correctAnswered/wrongAnswered lists nor numeric self_ratings",
                    path=f.path,
                    line=lineno,
                )
            label = exam_label(*cov)
            if label is None:
                diag.warn("exam-no-questions", f"{where}: no exam questions graded (unparsed)", path=f.path, line=lineno)
                label = UNPARSED
            key = qid + KEY_SEP + pid
            prev = acc.index.get(key)
            if prev is not None:
                pf, pl = acc.where(prev)
                first = f"{files[pf].path}:{pl}"
                shown = key.replace(KEY_SEP, " / ")
                if acc.gold[prev] == gold and acc.labels[prev] == label:
                    diag.warn("duplicate-identical", f"duplicate item {shown} (same as {first}; first kept)", path=f.path, line=lineno)
                    skipped += 1
                    continue
                raise BadInput(f"duplicate item {shown} with different content (first at {first})", path=f.path, line=lineno)
            acc.index[key] = len(acc.keys)
            acc.keys.append(key)
            acc.gold.append(gold)
            acc.outputs.append(None)
            acc.labels.append(label)
            acc.splits.append(split)
            acc.lines[len(acc.keys) - 1] = (file_idx, lineno)
            records += 1
    return RunFile(
        provenance=f.provenance(),
        format="exam",
        lines=len(lines),
        records=records,
        output_field=None,
        skipped=skipped,
    )


# -- format detection and the public entry point ---------------------------------------------


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
) -> Run:
    """Read one run (one file, or several pooled, e.g. DL 2019 + DL 2020).

    ``format`` is ``auto`` (a file whose first line is a JSON array is grouped
    EXAM, anything else flat JSONL), ``jsonl`` or ``exam``. Items keep file
    order; an item key seen twice in the run (within or across files) is a
    warning when gold and output agree, else an error. The split of each item
    is its file's parent directory name.
    """
    if format not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise UsageError(f"run {name!r} names no files")
    acc = _Acc.empty()
    files: list[_File] = []
    run_files: list[RunFile] = []
    # Parsed records are acyclic: pause the cyclic collector while hundreds of
    # thousands of them are made (it would otherwise scan them again and again).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        _read_all(paths, format, fields, acc, files, run_files, diagnostics)
    finally:
        if gc_was_enabled:
            gc.enable()
    return _finish(name, paths, acc, run_files)


def _read_all(paths, format, fields, acc, files, run_files, diagnostics) -> None:
    for i, path in enumerate(paths):
        f = _read(path)
        files.append(f)
        fmt = detect_format(f.data) if format == "auto" else format
        split = path.parent.name
        if fmt == "exam":
            rf = _load_exam(f, i, acc, files, diagnostics, split)
        else:
            rf = _load_flat(f, i, fields, acc, files, diagnostics, split)
        run_files.append(rf)


def _finish(name: str, paths: list[Path], acc: _Acc, run_files: list[RunFile]) -> Run:
    kinds = {rf.format for rf in run_files if rf.records}
    if len(kinds) > 1:
        listing = ", ".join(f"{rf.provenance.path} ({rf.format})" for rf in run_files)
        raise BadInput(f"run {name!r} mixes EXAM-graded and raw-output files: {listing}")
    if not acc.keys:
        raise BadInput(f"run {name!r} has no records", path=", ".join(str(p) for p in paths))
    n = len(acc.keys)
    keys = np.empty(n, dtype=object)
    keys[:] = acc.keys
    labels = None
    if kinds == {"exam"}:
        labels = readonly(np.asarray(acc.labels, dtype=np.int8))
    splits = np.empty(n, dtype=object)
    splits[:] = acc.splits
    return Run(
        name=name,
        keys=readonly(keys),
        gold=readonly(np.asarray(acc.gold, dtype=np.int16)),
        outputs=tuple(acc.outputs),
        files=tuple(run_files),
        labels=labels,
        splits=readonly(splits),
    )


def load_runs_iter(
    specs: Iterable[tuple[str, Sequence[Path]]], *, fields: FieldSpec, diagnostics: Diagnostics
) -> list[Run]:
    """Load several (name, paths) pairs with one diagnostics collector."""
    return [load_run(name, paths, fields=fields, diagnostics=diagnostics) for name, paths in specs]
