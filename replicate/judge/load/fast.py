"""The loader's fast paths for built-in readers: the same items as their ``records()``, read in bulk.

A reader gives records (:mod:`replicate.reading.contract`); for the file shapes of the
built-in readers named in :data:`FAST_PATHS`, the loader reads a clean file in
bulk instead, a chunk of whole lines per orjson call, streaming, and falls back
to the reader's records (:func:`~replicate.judge.load.records.load_records`)
when anything is unusual, so the reader names the problem. tests/readers/test_contract.py
checks that each gives exactly the items of its reader's records. Plugins need
none of this: their records are the contract.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import itemgetter

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.judge.keytable import KeysBuilder
from replicate.judge.load.flat import load_flat_file
from replicate.judge.load.items import BulkKeys, Items, distinct_hashes
from replicate.judge.load.outputs import KeptOutputs, OutputLabels
from replicate.judge.load.readfile import RawFile
from replicate.judge.load.records import load_records, replay
from replicate.judge.model import KEY_SEP, NO_GOLD, RunFile
from replicate.labels import GOLD_MAX, outside_set
from replicate.reading.contract import Reader, ReadOptions
from replicate.reading.jsonl import FieldSpec, field_pattern
from replicate.reading.stream import chunk_keys, json_chunk

#: The key fields of an UMBRELA record (else query and passage texts).
UMBRELA_IDS = ("qid", "docid")

FastPath = Callable[[Reader, RawFile, int, ReadOptions, Items, list[RawFile], Diagnostics, str], RunFile]


def _fields(options: ReadOptions) -> FieldSpec:
    return options.fields if options.fields is not None else FieldSpec()


def load_jsonl(reader: Reader, f: RawFile, file_idx: int, options: ReadOptions, acc: Items, files: list[RawFile],
               diag: Diagnostics, split: str) -> RunFile:
    """judge-jsonl@1: :func:`~replicate.judge.load.flat.load_flat_file` (its careful path keeps no output either)."""
    return load_flat_file(f, file_idx, _fields(options), acc, files, diag, split, options.gold_labels)


def _bulk_qrels(chunks: Iterable[bytes]) -> tuple[list[str], np.ndarray, list[int], int] | None:
    """(keys, key set, grades, lines) of a clean qrels file, a chunk of lines at a time; None when anything is
    unusual (not UTF-8, a blank line, a line without four columns, a grade that is not 0-127, a repeated key),
    so the line-by-line path names it."""
    keys: list[str] = []
    grades: list[int] = []
    for chunk in chunks:
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            return None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        parts = list(map(str.split, lines))
        if not parts or set(map(len, parts)) != {4}:
            return None
        qids, iters, docids, grade_text = zip(*parts)
        if not set(iters) <= {"0", "Q0"} or not all(map(str.isdigit, grade_text)) or not all(map(str.isascii, grade_text)):
            return None
        if max(map(len, grade_text)) > 3:  # 0-127 in at most 3 digits; int() refuses thousands of them
            return None
        here = list(map(int, grade_text))
        if max(here) > 127:
            return None
        grades.extend(here)
        keys.extend(map(KEY_SEP.join, zip(qids, docids)))
    key_hashes = distinct_hashes(keys) if keys else None
    if key_hashes is None:
        return None
    return keys, key_hashes, grades, len(keys)


def load_qrels(reader: Reader, f: RawFile, file_idx: int, options: ReadOptions, acc: Items, files: list[RawFile],
               diag: Diagnostics, split: str) -> RunFile:
    first = Diagnostics()
    fast = _bulk_qrels(f.chunks(first))
    if fast is None or acc.seen_before(fast[1]):
        return load_records(reader, f, file_idx, options, acc, files, diag, split)
    replay(first, diag)  # its warnings (a BOM), once
    keys, key_hashes, grades, n_lines = fast
    ls = reader.label_set
    assert ls is not None
    for i in np.flatnonzero(np.asarray(grades) > ls.high).tolist():
        diag.warn("label-outside-set", outside_set(grades[i], ls),
                  path=f.path, line=i + 1)
    gold = np.full(len(keys), NO_GOLD, dtype=np.int16)
    acc.add_bulk(keys, key_hashes, gold, [None] * len(keys), split, file_idx, labels=grades)
    return RunFile(f.provenance(), reader.format, n_lines, len(keys), None, reader=reader.name,
                   source_rule=reader.source_rule)


def _repeats_a_field(piece: bytes, n_objects: int, patterns: Iterable[bytes]) -> bool:
    """Whether a key of ``patterns`` (their JSON text, :func:`~replicate.reading.jsonl.field_pattern`) may be
    written twice in one of the ``n_objects`` records of ``piece`` (its text occurs more often than there are
    records): the records' path then refuses or warns it, naming the line."""
    return any(piece.count(p) > n_objects for p in patterns)


def _bulk_umbrela(
    chunks: Iterable[bytes], labeller: OutputLabels, size: int | None = None,
) -> tuple[KeysBuilder, np.ndarray, np.ndarray, int, list[str] | None, dict[str, np.ndarray]] | None:
    """(keys, their hashes, hashes of the predictions, lines, the predictions while within
    :data:`~replicate.judge.load.outputs.KEEP_OUTPUTS_BELOW`) of a clean file, a chunk of lines per orjson call,
    streaming, and the labels ``labeller``'s parsers give the predictions; None when anything is unusual (a
    blank line, a null or non-text prediction, a missing field, a repeated key), so the line-by-line path
    names it. Predictions not kept are read again when used."""
    keys = BulkKeys()
    hashes: list[np.ndarray] = []
    parsed: dict[str, list[np.ndarray]] = {}
    kept = KeptOutputs(None, size)  # ``size``: the file's stored bytes (none kept when over the budget)
    n_lines = 0
    names: tuple[str, ...] | None = None
    prediction = itemgetter("prediction")
    taken = tuple(map(field_pattern, (*UMBRELA_IDS, "query", "passage", "prediction")))
    for piece in chunks:
        objs = json_chunk(piece)
        if not objs or not isinstance(objs[0], dict):
            return None
        if names is None:
            names = UMBRELA_IDS if all(k in objs[0] for k in UMBRELA_IDS) else ("query", "passage")
        if _repeats_a_field(piece, len(objs), taken):
            return None
        try:
            ck = chunk_keys(objs, names)
            outputs = list(map(prediction, objs))
        except (KeyError, TypeError):
            return None
        if ck is None or set(map(type, outputs)) != {str}:
            return None
        keys.extend(ck)
        hashes.append(np.fromiter(map(hash, outputs), dtype=np.int64, count=len(outputs)))
        kept.add(len(piece), outputs)
        for name, labels in labeller.of(outputs):
            parsed.setdefault(name, []).append(labels)
        n_lines += len(objs)
    key_hashes = keys.hashes()
    if key_hashes is None:
        return None
    return (keys.keys, key_hashes, np.concatenate(hashes), n_lines, kept.values,
            {name: np.concatenate(parts) for name, parts in parsed.items()})


def load_umbrela(reader: Reader, f: RawFile, file_idx: int, options: ReadOptions, acc: Items, files: list[RawFile],
                  diag: Diagnostics, split: str) -> RunFile:
    first = Diagnostics()
    fast = _bulk_umbrela(f.chunks(first), acc.labeller, f.stored_size)
    if fast is not None and not acc.seen_before(fast[1]):
        replay(first, diag)  # its warnings (a BOM), once
        keys, key_hashes, hashes, n_lines, kept, parsed = fast
        acc.add_bulk(keys, key_hashes, np.full(len(keys), NO_GOLD, dtype=np.int16), kept, split, file_idx,
                     reread=("prediction", hashes), parsed=parsed)
        return RunFile(f.provenance(), "umbrela", n_lines, len(key_hashes), None, reader=reader.name,
                   source_rule=reader.source_rule)
    return load_records(reader, f, file_idx, options, acc, files, diag, split)


def _bulk_gold(chunks: Iterable[bytes], fields: FieldSpec) -> tuple[list[str], np.ndarray, np.ndarray, int] | None:
    """(keys, their hashes, gold, lines) of the common case in bulk, a chunk of lines per orjson call, streaming.

    Works when every line is an object with str/int keys and a whole-number
    grade, no line is blank, the last line ends and no key repeats; otherwise
    None, so the careful per-line path names the problem (or maps text gold).
    """
    kf = fields.key_fields
    gold_of = itemgetter(fields.gold_field)
    taken = tuple(map(field_pattern, (*kf, fields.gold_field)))
    keys: list[str] = []
    golds: list = []
    n_lines = 0
    ends = True
    for piece in chunks:
        ends = piece.endswith(b"\n")
        objs = json_chunk(piece)
        if objs is None:
            return None  # a line blank, not JSON, or holding several values
        if _repeats_a_field(piece, len(objs), taken):
            return None
        try:
            ck = chunk_keys(objs, kf)
            golds.extend(map(gold_of, objs))
        except (KeyError, TypeError):  # a missing field, or a record that is not an object
            return None
        if ck is None:
            return None
        keys.extend(ck)
        n_lines += len(objs)
    if not ends or not keys or not set(map(type, golds)) <= {int, float}:
        return None  # a torn last line, text gold (mapped through a label set), null, bool
    gold = np.array(golds, dtype=np.float64)
    if not (np.all(gold == np.rint(gold)) and np.all((gold >= 0) & (gold <= GOLD_MAX))):
        return None
    key_hashes = distinct_hashes(keys)
    if key_hashes is None:
        return None
    return keys, key_hashes, gold.astype(np.int16), n_lines


def load_gold(reader: Reader, f: RawFile, file_idx: int, options: ReadOptions, acc: Items, files: list[RawFile],
              diag: Diagnostics, split: str) -> RunFile:
    first = Diagnostics()
    fast = _bulk_gold(f.chunks(first), _fields(options))
    if fast is None or acc.seen_before(fast[1]):
        return load_records(reader, f, file_idx, options, acc, files, diag, split)
    replay(first, diag)  # its warnings (a BOM), once
    keys, key_hashes, gold, n_lines = fast
    acc.add_bulk(keys, key_hashes, gold, [None] * len(keys), split, file_idx)
    return RunFile(f.provenance(), reader.format, n_lines, len(keys), None, reader=reader.name,
                   source_rule=reader.source_rule)


#: The fast path of each built-in reader that has one, by reader name.
FAST_PATHS: dict[str, FastPath] = {
    "judge-jsonl@1": load_jsonl,
    "trec-qrels@1": load_qrels,
    "umbrela-judge@1": load_umbrela,
    "gold-jsonl@1": load_gold,
}
