"""Flat JSONL records -> items: a bulk path for clean files, a careful one that names problems."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.judge.keytable import KeysBuilder
from replicate.judge.load.items import BulkKeys, Items
from replicate.judge.load.outputs import KeptOutputs, OutputLabels
from replicate.judge.load.readfile import BLANK, RawFile, parse_line
from replicate.judge.load.records import replay
from replicate.judge.model import RunFile
from replicate.labels import GOLD_MAX, LabelSet
from replicate.reading.jsonl import FieldSpec, check_repeated_fields, checked_record, field_pattern, record_fields
from replicate.reading.stream import CHUNK, chunk_keys, json_chunk, line_chunks, lines_of


def _count_fields(objs: list[dict], names: Sequence[str]) -> int:
    """How many records carry at least one of ``names``."""
    counts = [sum(map(operator.contains, objs, repeat(n))) for n in names]
    if sum(1 for c in counts if c) <= 1:
        return sum(counts)
    return sum(1 for o in objs if any(n in o for n in names))


def has_thought(obj: dict, names: Sequence[str]) -> bool:
    """Whether a record carries a thought: one of ``names`` holding text (not only
    whitespace), or any other non-empty value; ``""``, ``null``, ``[]`` and ``{}`` do not count."""
    return any(_is_thought(obj.get(n)) for n in names)


def _is_thought(value: object) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return value is not None and value != [] and value != {}


def _count_thoughts(objs: list[dict], names: Sequence[str]) -> int:
    """How many records carry a non-empty thought (see :func:`has_thought`)."""
    present = [n for n in names if any(map(operator.contains, objs, repeat(n)))]
    if not present:
        return 0  # the common case, at C speed: no record has the field at all
    if len(present) > 1:
        return sum(1 for o in objs if has_thought(o, names))
    # one field: its texts are counted at C speed (strip, truth), the few other values one by one
    values = list(map(dict.get, objs, repeat(present[0])))
    texts = [v for v in values if type(v) is str]
    others = [v for v in values if v is not None and type(v) is not str]
    return sum(map(bool, map(str.strip, texts))) + sum(map(_is_thought, others))


def bulk_records(
    data: bytes | Iterable[bytes], fields: FieldSpec, *, chunk: int = CHUNK, keep_below: int | None = 0,
    labeller: OutputLabels | None = None, hash_outputs: bool = True, size: int | None = None,
) -> Bulk | None:
    """The common case in bulk, a chunk of lines at a time, streaming.

    ``data`` is a file's bytes or its chunks of whole lines (:meth:`RawFile.chunks`).
    Each chunk is parsed by one orjson call (its lines joined into a JSON
    array) and its fields are taken while its records are still in the CPU
    cache; the keys, gold grades and a hash of each output are kept, and the
    outputs themselves while the lines read stay within ``keep_below`` bytes
    (None: :data:`~replicate.judge.load.outputs.KEEP_OUTPUTS_BELOW`; beyond, they
    are dropped: ``Bulk.outputs`` None, read again when they are used; none kept when ``size``, the file's
    stored bytes, is over it); with ``labeller``, the labels its
    parsers give the outputs, chunk by chunk (so a parser need not read them again); ``hash_outputs`` False:
    no hash of the outputs (``Bulk.hashes`` None: the run's last file, no later item to compare with). Works
    when every line is
    an object with str/int keys, an integral gold grade >= 0 and a str output,
    no line is blank and no key repeats. Returns a :class:`Bulk`, or None when
    anything is unusual so the careful per-line path can name the problem.
    """
    chunks = line_chunks([data], path=Path("-"), size=chunk) if isinstance(data, bytes) else data
    kf = fields.key_fields
    out_field: str | None = None
    keys = BulkKeys()
    golds: list[np.ndarray] = []
    hashes: list[np.ndarray] = []
    parsed: dict[str, list[np.ndarray]] = {}
    n_lines = thoughts = rewritten = 0
    thought_fields = fields.thought_fields
    kept = KeptOutputs(keep_below, size)
    for piece in chunks:
        objs = json_chunk(piece)
        if objs is None:
            return None  # a line blank, not JSON, or holding several values
        if out_field is None:  # the first record decides, as on the careful path
            if not objs or not isinstance(objs[0], dict):
                return None
            out_field = next((f for f in fields.output_fields if f in objs[0]), None)
            if out_field is None:
                return None
            gold_of, output_of = itemgetter(fields.gold_field), itemgetter(out_field)
            patterns = [field_pattern(n) for n in (*kf, fields.gold_field, out_field)]
        try:
            ck = chunk_keys(objs, kf)
            gold_values = list(map(gold_of, objs))
            outputs = list(map(output_of, objs))
        except (KeyError, TypeError):  # a missing field, or a record that is not an object
            return None
        if ck is None or set(map(type, outputs)) != {str}:
            return None  # a key that is not str/int, outputs that are not text
        if any(piece.count(p) > len(objs) for p in patterns):
            return None  # a field written twice in some record (or inside a text): the careful path checks
        gold = _whole_grades(gold_values)
        if gold is None:
            return None
        golds.append(gold)
        keys.extend(ck)
        if hash_outputs:
            hashes.append(np.fromiter(map(hash, outputs), dtype=np.int64, count=len(outputs)))
        kept.add(len(piece), outputs)
        if labeller:
            for name, labels in labeller.of(outputs):
                parsed.setdefault(name, []).append(labels)
        if thought_fields:
            thoughts += _count_thoughts(objs, thought_fields)
        rewritten += _count_fields(objs, (fields.rewritten_field,))
        n_lines += len(objs)
    key_hashes = keys.hashes()
    if key_hashes is None:
        return None  # nothing read, or a key repeats: the careful path names it
    assert out_field is not None
    return Bulk(keys.keys, key_hashes, np.concatenate(golds), np.concatenate(hashes) if hash_outputs else None,
                out_field, n_lines, thoughts,
                rewritten, kept.values, {name: np.concatenate(parts) for name, parts in parsed.items()})


def _whole_grades(values: list) -> np.ndarray | None:
    """Gold grades of a chunk as int16, or None unless every one is a whole number 0..GOLD_MAX (an int, or
    an integral float; bool, str and None are not)."""
    if not set(map(type, values)) <= {int, float}:
        return None
    gold = np.array(values, dtype=np.float64)
    if not (np.all(gold == np.rint(gold)) and np.all((gold >= 0) & (gold <= GOLD_MAX))):
        return None  # also catches NaN and inf
    return gold.astype(np.int16)


class Bulk(NamedTuple):
    """What :func:`bulk_records` read from one file."""

    keys: KeysBuilder
    key_hashes: np.ndarray  # hash() of each key, int64, sorted
    gold: np.ndarray
    hashes: np.ndarray | None  # hash() of each output, int64 (None: not asked for)
    out_field: str
    lines: int
    thoughts: int
    rewritten: int
    outputs: list[str] | None = None  # the outputs, when kept (within the budget)
    parsed: dict[str, np.ndarray] | None = None  # parser name -> labels of the outputs (the labeller's)


def _checked_record(
    obj: object, fields: FieldSpec, out_field: str | None, f: RawFile, lineno: int,
    gold_labels: LabelSet | None = None,
) -> tuple[str, int, str | None, str]:
    """:func:`~replicate.reading.jsonl.checked_record` of a line of ``f``."""
    return checked_record(obj, fields, out_field, f.path, lineno, gold_labels)


def careful_records(
    f: RawFile,
    file_idx: int,
    lines: Iterable[tuple[int, bytes, bool]],
    fields: FieldSpec,
    acc: Items,
    files: list[RawFile],
    diag: Diagnostics,
    split: str,
    gold_labels: LabelSet | None = None,
) -> tuple[int, int, int, int, int, str | None]:
    """Every check, line by line (``lines``: ``(line number, line, torn)``, :func:`~replicate.reading.stream.lines_of`).

    Returns (lines, records, skipped, thoughts, rewritten, field)."""
    out_field: str | None = None
    n_lines = records = skipped = thoughts = rewritten = 0
    taken = record_fields(fields)
    for lineno, line, torn in lines:
        n_lines = lineno
        obj = parse_line(f, lineno, line, lineno, torn, diag)
        if obj is BLANK:
            skipped += 1
            continue
        check_repeated_fields(line, taken, f.path, lineno, diag)
        key, gold, output, out_field = _checked_record(obj, fields, out_field, f, lineno, gold_labels)
        if output is None:
            diag.warn("null-output", f"output field {out_field!r} is null (read as unparsed)", path=f.path, line=lineno)
        if not acc.add(key, gold, output, None, split=split, files=files, file_idx=file_idx, lineno=lineno, diag=diag,
                       reread=out_field):
            skipped += 1
            continue
        records += 1
        if has_thought(obj, fields.thought_fields):
            thoughts += 1
        if fields.rewritten_field in obj:
            rewritten += 1
    return n_lines, records, skipped, thoughts, rewritten, out_field


def load_flat_file(
    f: RawFile, file_idx: int, fields: FieldSpec, acc: Items, files: list[RawFile], diag: Diagnostics, split: str,
    gold_labels: LabelSet | None = None,
) -> RunFile:
    """One flat JSONL file, streamed: the bulk path first, the careful one (a second pass) when it declines."""
    # the bulk path reads numeric gold only; gold of a categorical set is text, read line by line
    numeric = gold_labels is None or gold_labels.is_ordinal
    first = Diagnostics()  # the bulk pass's warnings (a BOM), replayed when it is kept
    out_field: str | None
    fast = bulk_records(f.chunks(first), fields, keep_below=None, labeller=acc.labeller,
                        hash_outputs=not acc.last_file, size=f.stored_size) if numeric else None
    if fast is not None and acc.seen_before(fast.key_hashes):
        fast = None  # a key repeats across files: the careful path says which and where
    if fast is not None:
        replay(first, diag)
        acc.add_bulk(fast.keys, fast.key_hashes, fast.gold, fast.outputs, split, file_idx,
                     reread=(fast.out_field, fast.hashes), parsed=fast.parsed)
        n_lines, records, skipped = fast.lines, len(fast.key_hashes), 0
        thoughts, rewritten, out_field = fast.thoughts, fast.rewritten, fast.out_field
    else:
        n_lines, records, skipped, thoughts, rewritten, out_field = careful_records(
            f, file_idx, lines_of(f.chunks(diag)), fields, acc, files, diag, split, gold_labels
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
