"""Flat JSONL records -> items: a bulk path for clean files, a careful one that names problems."""

from __future__ import annotations

import operator
from itertools import repeat
from operator import itemgetter
from typing import Sequence

import numpy as np
import orjson

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param
from replicate.judge.load.fields import GOLD_MAX, FieldSpec, describe, key_text
from replicate.judge.load.readfile import BLANK, Items, RawFile, parse_line, split_lines, strip_bom
from replicate.judge.model import KEY_SEP, RunFile
from replicate.labels import LabelSet, gold_code, gold_problem

#: Bytes of lines the bulk path parses per orjson call (small enough to stay in the CPU cache).
_CHUNK = 1 << 18


def _output_field(f: RawFile, obj: dict, fields: FieldSpec, lineno: int) -> str:
    for name in fields.output_fields:
        if name in obj:
            return name
    raise BadInput(
        Message(f"record has no output field: looked for {', '.join(map(repr, fields.output_fields))} "
                "(set the output field name, e.g. ", Param("output_fields"), "; a file of gold alone goes with ",
                Param("gold"), ")"),
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


def _chunk_keys(objs: list, kf: Sequence[str], key_of) -> list[str] | None:
    """The item keys of a chunk of records (None if a key value is neither str nor int).

    Raises KeyError/TypeError for a missing key field or a record that is not an object.
    """
    if len(kf) == 1:
        return _keys_of(list(map(key_of, objs)))
    join = KEY_SEP.join
    try:
        return list(map(join, map(key_of, objs)))
    except TypeError:  # a key that is not a str (numeric ids): convert, or decline
        parts = [_keys_of(list(map(itemgetter(k), objs))) for k in kf]
        return None if any(p is None for p in parts) else list(map(join, zip(*parts)))


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


def _newlines(piece: bytes) -> int:
    """How many newline bytes ``piece`` holds (numpy: ~10x faster than ``bytes.count``)."""
    return int(np.count_nonzero(np.frombuffer(piece, dtype=np.uint8) == 10))


def _chunks(body: bytes, size: int):
    """``body`` in pieces of about ``size`` bytes, each ending at a line end (newline dropped)."""
    n, start = len(body), 0
    while start < n:
        end = body.find(b"\n", start + size)
        if end < 0:
            end = n
        yield body[start:end]
        start = end + 1


def bulk_records(data: bytes, fields: FieldSpec, *, chunk: int = _CHUNK):
    """The common case in bulk, a chunk of lines at a time.

    Each chunk of about ``chunk`` bytes is parsed by one orjson call (its lines
    joined into a JSON array) and its fields are taken while its records are
    still in the CPU cache; that is what makes this faster than parsing the
    whole file first. Works when every line is an object with str/int keys,
    an integral gold grade >= 0 and a str output, no line is blank and no key
    repeats. Returns (keys, key set, gold, outputs, output field, lines,
    thoughts, rewritten), or None when anything is unusual so the careful
    per-line path can name the problem.
    """
    body = data[:-1] if data.endswith(b"\n") else data
    kf = fields.key_fields
    key_of = itemgetter(*kf)
    out_field: str | None = None
    keys: list[str] = []
    golds: list = []
    outputs: list = []
    n_lines = thoughts = rewritten = 0
    thought_fields = fields.thought_fields
    loads, newlines = orjson.loads, _newlines
    add_keys, add_golds, add_outputs = keys.extend, golds.extend, outputs.extend
    for piece in _chunks(body, chunk):
        lines_here = newlines(piece) + 1
        try:
            objs = loads(b"[" + piece.replace(b"\n", b",") + b"]")
        except orjson.JSONDecodeError:
            return None
        if len(objs) != lines_here:
            return None  # a line held several values (or none)
        if out_field is None:  # the first record decides, as on the careful path
            if not isinstance(objs[0], dict):
                return None
            out_field = next((f for f in fields.output_fields if f in objs[0]), None)
            if out_field is None:
                return None
            gold_of, output_of = itemgetter(fields.gold_field), itemgetter(out_field)
        try:
            ck = _chunk_keys(objs, kf, key_of)
            add_golds(map(gold_of, objs))
            add_outputs(map(output_of, objs))
        except (KeyError, TypeError):  # a missing field, or a record that is not an object
            return None
        if ck is None:
            return None
        add_keys(ck)
        if thought_fields:
            thoughts += _count_thoughts(objs, thought_fields)
        rewritten += _count_fields(objs, (fields.rewritten_field,))
        n_lines += lines_here
    if not keys or set(map(type, outputs)) != {str} or not set(map(type, golds)) <= {int, float}:
        return None  # nothing read, outputs that are not text, gold that is bool/str/None
    gold = np.array(golds, dtype=np.float64)
    if not (np.all(gold == np.rint(gold)) and np.all((gold >= 0) & (gold <= GOLD_MAX))):
        return None  # also catches NaN and inf
    keyset = set(keys)
    if len(keyset) != len(keys):
        return None  # a key repeats: the careful path names it
    gold = gold.astype(np.int16)
    return keys, keyset, gold, outputs, out_field, n_lines, thoughts, rewritten


def _checked_record(
    obj: object, fields: FieldSpec, out_field: str | None, f: RawFile, lineno: int,
    gold_labels: LabelSet | None = None,
) -> tuple[str, int, str | None, str]:
    """(key, gold, output, output field) of one parsed line, or a BadInput naming what is wrong.

    ``out_field`` None: this is the file's first record, which decides the output field.
    ``gold_labels``: the label set gold is read against (:func:`~replicate.labels.gold_code`).
    """

    def bad(message: str) -> BadInput:
        return BadInput(message, path=f.path, line=lineno)

    if not isinstance(obj, dict):
        raise bad(f"expected a JSON object, got {describe(obj)}")
    parts = []
    for name in fields.key_fields:
        if name not in obj:
            raise bad(f"record lacks key field {name!r}")
        text = key_text(obj[name])
        if text is None:
            raise bad(f"key field {name!r} must be a string or an integer, got {describe(obj[name])}")
        parts.append(text)
    gf = fields.gold_field
    if gf not in obj:
        raise bad(f"record lacks gold field {gf!r}")
    gold = gold_code(obj[gf], gold_labels)
    if gold is None:
        if gold_labels is not None and (gold_labels.names or not gold_labels.is_ordinal):
            raise bad(f"gold field {gf!r}: {gold_problem(obj[gf], gold_labels)}")
        raise bad(f"gold field {gf!r} must be a non-negative integer grade (2 or 2.0, at most {GOLD_MAX}), got {describe(obj[gf])}")
    if out_field is None:
        out_field = _output_field(f, obj, fields, lineno)
    if out_field not in obj:
        raise bad(f"record lacks output field {out_field!r}")
    output = obj[out_field]
    if output is not None and not isinstance(output, str):
        raise bad(f"output field {out_field!r} must be a string, got {describe(output)}")
    return KEY_SEP.join(parts), gold, output, out_field


def careful_records(
    f: RawFile,
    file_idx: int,
    lines: list[bytes],
    torn: bool,
    fields: FieldSpec,
    acc: Items,
    files: list[RawFile],
    diag: Diagnostics,
    split: str,
    gold_labels: LabelSet | None = None,
) -> tuple[int, int, int, int, str | None]:
    """Every check, line by line. Returns (records, skipped, thoughts, rewritten, field)."""
    out_field: str | None = None
    records = skipped = thoughts = rewritten = 0
    n_lines = len(lines)
    for lineno, line in enumerate(lines, 1):
        obj = parse_line(f, lineno, line, n_lines, torn, diag)
        if obj is BLANK:
            skipped += 1
            continue
        key, gold, output, out_field = _checked_record(obj, fields, out_field, f, lineno, gold_labels)
        if output is None:
            diag.warn("null-output", f"output field {out_field!r} is null (read as unparsed)", path=f.path, line=lineno)
        if not acc.add(key, gold, output, None, split=split, files=files, file_idx=file_idx, lineno=lineno, diag=diag):
            skipped += 1
            continue
        records += 1
        if has_thought(obj, fields.thought_fields):
            thoughts += 1
        if fields.rewritten_field in obj:
            rewritten += 1
    return records, skipped, thoughts, rewritten, out_field


def load_flat_file(
    f: RawFile, file_idx: int, fields: FieldSpec, acc: Items, files: list[RawFile], diag: Diagnostics, split: str,
    gold_labels: LabelSet | None = None,
) -> RunFile:
    data = strip_bom(f, diag)
    # the bulk path reads numeric gold only; gold of a categorical set is text, read line by line
    numeric = gold_labels is None or gold_labels.is_ordinal
    fast = bulk_records(data, fields) if data and numeric else None
    if fast is not None and acc.seen_before(fast[1]):
        fast = None  # a key repeats across files: the careful path says which and where
    if fast is not None:
        keys, keyset, gold, outputs, out_field, n_lines, thoughts, rewritten = fast
        acc.add_bulk(keys, keyset, gold, outputs, split, file_idx)
        records, skipped = len(keys), 0
    else:
        lines, torn = split_lines(f, data, diag)
        n_lines = len(lines)
        records, skipped, thoughts, rewritten, out_field = careful_records(
            f, file_idx, lines, torn, fields, acc, files, diag, split, gold_labels
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


