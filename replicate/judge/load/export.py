"""Writing per-item labels (``replicate parse --labels``)."""

from __future__ import annotations

from pathlib import Path

import orjson

from replicate.command_input import is_stdio, write_stdout
from replicate.errors import BadInput
from replicate.judge.load import FieldSpec
from replicate.judge.model import KEY_SEP, NO_GOLD, LabelledRun
from replicate.labels import label_name
from replicate.outfile import Outputs


def labels_output(force: bool = False) -> Outputs:
    """The rule and writer of 'replicate parse --labels' files."""
    return Outputs("parse", "labels", force=force)


def label_rows(labelled: LabelledRun, *, key_fields: tuple[str, ...]) -> list[dict]:
    """One dict per item: the key fields (as strings), ``label`` (int or None) and ``gold`` (None: no gold); for a
    label set that names its labels (A, B, tie) also ``label_name`` and ``gold_name`` (None: unparsed, or no gold).

    Every part of the key is written, under ``key_fields`` (a ValueError when a key has another number of parts).
    """
    ls = labelled.label_set
    named = ls is not None and bool(ls.names)
    rows = []
    for key, label, gold in zip(labelled.keys.tolist(), labelled.labels.tolist(), labelled.gold.tolist()):
        parts = key.split(KEY_SEP)
        if len(parts) != len(key_fields):
            raise ValueError(f"item key {' / '.join(parts)} has {len(parts)} parts; the key is named "
                             f"{', '.join(key_fields)}")
        row = dict(zip(key_fields, parts))
        row["label"] = None if label < 0 else label
        row["gold"] = None if gold == NO_GOLD else gold
        if named:
            row["label_name"] = None if label < 0 else label_name(label, ls)
            row["gold_name"] = None if gold < 0 else label_name(gold, ls)
        rows.append(row)
    return rows


def write_labels(path: str | Path, labelled: LabelledRun, *, fields: FieldSpec, force: bool = False) -> int:
    """Write ``label_rows`` as JSONL to ``path`` (``-``: standard output); returns the number of rows.

    An existing file is replaced only when it is an earlier 'replicate parse --labels' output or with
    ``force`` (:class:`replicate.outfile.Outputs`), whole or not at all."""
    key_fields = tuple(labelled.key_names or fields.key_fields)  # the reader's names for its key, one naming per reader
    try:
        rows = label_rows(labelled, key_fields=key_fields)
    except ValueError as exc:
        raise BadInput(f"cannot write labels: {exc}", path=path) from None
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    if is_stdio(path):
        write_stdout(data)
        return len(rows)
    labels_output(force).write(path, data)
    return len(rows)
