"""Snapshot drift within a collection: the model versions a provider actually served. Pure.

A request names a model (``gpt-4o``); the response names the snapshot that
answered (``gpt-4o-2024-08-06``) and often a ``system_fingerprint``. The
trials table carries both (columns ``snapshot`` and ``system_fingerprint``).
A model whose trials were answered by more than one snapshot or fingerprint
mixes versions, the very change a version audit measures: ``score`` and
``items`` flag it with the trials per value, and ``items --by-snapshot``
splits such a model into one pseudo-model per snapshot (``model@snapshot``).
Trials without a value (API errors, servers that send none) are not counted.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Iterable, Mapping

import numpy as np

from replicate.errors import Message, Param, UsageError

PROVENANCE_COLUMNS = ("snapshot", "system_fingerprint")


def snapshot_changes(rows: Iterable[tuple[str, Any, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """Per model with more than one snapshot or fingerprint: trials per value of each column.

    ``rows``: (model, snapshot, system_fingerprint) per trial. Models served by
    one snapshot and one fingerprint are left out.
    """
    seen: dict[str, dict[str, Counter[str]]] = {}
    for model, snap, fp in rows:
        d = seen.get(model)
        if d is None:
            d = seen[model] = {c: Counter() for c in PROVENANCE_COLUMNS}
        if isinstance(snap, str) and snap:
            d["snapshot"][snap] += 1
        if isinstance(fp, str) and fp:
            d["system_fingerprint"][fp] += 1
    return {
        m: {c: dict(sorted(cnt.items())) for c, cnt in d.items()}
        for m, d in sorted(seen.items())
        if any(len(cnt) > 1 for cnt in d.values())
    }


def describe_change(model: str, change: Mapping[str, Mapping[str, int]]) -> str:
    """One line: which snapshots / fingerprints answered ``model``, with trials each."""
    parts = []
    for col, label in (("snapshot", "snapshots"), ("system_fingerprint", "fingerprints")):
        values = change.get(col) or {}
        if len(values) > 1:
            parts.append(f"{len(values)} {label} (" + ", ".join(f"{v} {n}" for v, n in values.items()) + ")")
    return f"model {model} was answered by " + " and ".join(parts) + " within one collection"


def table_snapshot_changes(table: Any) -> dict[str, dict[str, dict[str, int]]]:
    """:func:`snapshot_changes` of a :class:`~replicate.trials.load.TrialsTable` (empty without the columns),
    counted from the columns' codes: trials per (model, value) in one ``bincount`` per column."""
    cols = [c for c in PROVENANCE_COLUMNS if c in table.metadata_columns]
    if not cols:
        return {}
    out: dict[str, dict[str, dict[str, int]]] = {}
    per = {c: _per_model(table, c) if c in cols else {} for c in PROVENANCE_COLUMNS}
    for m, model in enumerate(table.models):
        d = {c: per[c].get(m, {}) for c in PROVENANCE_COLUMNS}
        if any(len(v) > 1 for v in d.values()):
            out[model] = {c: dict(sorted(v.items())) for c, v in d.items()}
    return dict(sorted(out.items()))


def _per_model(table: Any, column: str) -> dict[int, dict[str, int]]:
    """Trials per model code and value of ``column`` (non-empty strings only, as :func:`snapshot_changes`)."""
    meta = table.column_codes(column)
    n = len(meta.values)
    counts = np.bincount(table.model.astype(np.int64) * (n + 1) + meta.codes + 1,
                         minlength=len(table.models) * (n + 1)).reshape(len(table.models), n + 1)
    out: dict[int, dict[str, int]] = {}
    for m, c in zip(*np.nonzero(counts[:, 1:])):
        v = meta.values[int(c)]
        if isinstance(v, str) and v:
            out.setdefault(int(m), {})[v] = int(counts[m, c + 1])
    return out


def split_by_snapshot(table: Any) -> Any:
    """The table with each model served by several snapshots split into ``model@snapshot`` models.

    A model with one snapshot keeps its name. A trial with no snapshot (an API
    error) of a split model goes to ``model@unknown``.
    """
    if "snapshot" not in table.metadata_columns:
        raise UsageError(Message(Param("by_snapshot"), ": the trials table has no 'snapshot' column (score the "
                                 "archive with this version of 'replicate score', which writes it)"))
    meta = table.column_codes("snapshot")
    per_model = _per_model(table, "snapshot")
    split = {m for m, ss in per_model.items() if len(ss) > 1}
    if not split:
        return table
    # One name per (model, snapshot code) pair that occurs; code -1 (no snapshot) is the last column.
    n = len(meta.values)
    pair = table.model.astype(np.int64) * (n + 1) + np.where(meta.codes < 0, n, meta.codes)
    pairs, inverse = np.unique(pair, return_inverse=True)

    def name(p: int) -> str:
        m, c = divmod(p, n + 1)
        s = meta.values[c] if c < n else None
        return f"{table.models[m]}@{s if isinstance(s, str) and s else 'unknown'}" if m in split else table.models[m]

    names = [name(p) for p in pairs.tolist()]
    models = tuple(sorted(set(names)))
    index = {nm: i for i, nm in enumerate(models)}
    code = np.array([index[nm] for nm in names], dtype=np.int32)[inverse.ravel()]
    code.flags.writeable = False
    return dataclasses.replace(table, models=models, model=code)
