"""The rows of a trials table as ``replicate score`` builds them, held as codes.

A scored trial keeps one small integer per column (:class:`ScoredRows`): the item's index, the
category's, a code into the distinct combinations of model, trial, correct_loose, snapshot and
system_fingerprint, and one into the distinct values of each token count; what a row takes from its item (benchmark,
scorer, scorer_package, the metadata columns) is taken from the item when the row is written. So
scoring an archive of 1.5 M trials holds about 20 bytes a trial, not a dict of 13 or more values.
:meth:`ScoredRows.rows` gives the rows back as the dicts the table is written from, in the order
they were added.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, Callable

import numpy as np

#: The columns every trials table has, in this order.
CORE_COLUMNS = ("model", "item", "trial", "benchmark", "category", "correct_loose", "scorer",
                "prompt_tokens", "completion_tokens", "reasoning_tokens", "snapshot", "system_fingerprint")


_PLAIN = frozenset({str, int, bool, type(None)})


class Codes:
    """The distinct values of one column, in the order first seen, and one code a row (``array('i')``).

    Values are told apart as JSON tells them apart: ``1``, ``1.0`` and ``true`` are three values,
    and so are ``0.0`` and ``-0.0``."""

    __slots__ = ("index", "values", "codes")

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []
        self.codes = array("i")

    def add(self, value: Any) -> None:
        t = type(value)
        if t is str or t is int or value is None:
            key = value
        elif t is tuple and _PLAIN.issuperset(types := tuple(map(type, value))):
            key = (value, types)  # with their types, true and 1 stay apart
        else:
            key = (t, repr(value))
        code = self.index.get(key)
        if code is None:
            code = self.index[key] = len(self.values)
            self.values.append(value)
        self.codes.append(code)

    def decoded(self, keep: np.ndarray | None = None) -> list[Any]:
        """Every row's value (of the rows ``keep`` selects)."""
        codes = np.frombuffer(self.codes, dtype=np.int32) if len(self.codes) else np.zeros(0, np.int32)
        if keep is not None:
            codes = codes[keep]
        values = self.values
        return [values[c] for c in codes.tolist()]


class ScoredRows:
    """Rows of the trials table, one per scored trial, as codes (see the module docstring).

    ``tail_of(item)`` gives what a row of ``item`` has after the core columns (scorer_package, the
    metadata columns), in order; ``scorer_of(item)`` its scorer's name.
    """

    def __init__(self, items: Iterable[Any], *, categories: Sequence[str], scorer_of: Callable[[Any], str],
                 tail_of: Callable[[Any], Mapping[str, Any]]) -> None:
        self.items = list(items)
        self.item_index = {it.id: n for n, it in enumerate(self.items)}
        self.categories = tuple(categories)
        self.category_index = {c: n for n, c in enumerate(self.categories)}
        self.scorer_of = scorer_of
        self.tail_of = tail_of
        self.item = array("i")
        self.category = array("b")
        #: (model, trial, correct_loose, snapshot, system_fingerprint): few distinct combinations, one code a row
        self.combo = Codes()
        self.prompt_tokens, self.completion_tokens, self.reasoning_tokens = Codes(), Codes(), Codes()
        self.dropped: list[int] = []  # rows taken back (:meth:`drop`)
        self._tails: dict[int, Mapping[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.item) - len(self.dropped)

    def add(self, model: Any, item: Any, trial: int, category: str, loose: Any, usage: Mapping[str, Any],
            snapshot: Any, fingerprint: Any) -> int:
        """Add a row; its index (for :meth:`drop`)."""
        self.item.append(self.item_index[item.id])
        self.category.append(self.category_index[category])
        self.combo.add((model, trial, loose, snapshot, fingerprint))
        self.prompt_tokens.add(usage.get("prompt_tokens"))
        self.completion_tokens.add(usage.get("completion_tokens"))
        self.reasoning_tokens.add(usage.get("reasoning_tokens"))
        return len(self.item) - 1

    def drop(self, rows: Sequence[int]) -> None:
        """Take rows back (the records they came from were superseded)."""
        self.dropped.extend(rows)

    def _keep(self) -> np.ndarray | None:
        if not self.dropped:
            return None
        keep = np.ones(len(self.item), dtype=bool)
        keep[np.asarray(self.dropped, dtype=np.int64)] = False
        return keep

    def _column(self, arr: array, keep: np.ndarray | None) -> np.ndarray:
        out = np.frombuffer(arr, dtype=np.int32 if arr.typecode == "i" else np.int8) if len(arr) else \
            np.zeros(0, np.int32)
        return out if keep is None else out[keep]

    def _tail(self, n: int) -> Mapping[str, Any]:
        tail = self._tails.get(n)
        if tail is None:
            tail = self._tails[n] = self.tail_of(self.items[n])
        return tail

    def rows(self, batch: int = 1 << 14) -> Iterator[dict[str, Any]]:
        """The rows as dicts: the core columns, then the item's tail (decoded ``batch`` rows at a time)."""
        keep = self._keep()
        item, category = self._column(self.item, keep), self._column(self.category, keep)
        coded = [(c.values, self._column(c.codes, keep)) for c in (
            self.combo, self.prompt_tokens, self.completion_tokens, self.reasoning_tokens)]
        items, cats, scorer_of, tail = self.items, self.categories, self.scorer_of, self._tail
        for start in range(0, len(item), batch):
            part = slice(start, start + batch)
            cols = [[values[c] for c in codes[part].tolist()] for values, codes in coded]
            for i, c, (m, t, lo, sn, fp), pt, ct, rt in zip(item[part].tolist(), category[part].tolist(), *cols):
                it = items[i]
                row = {"model": m, "item": it.id, "trial": t, "benchmark": it.benchmark, "category": cats[c],
                       "correct_loose": lo, "scorer": scorer_of(it), "prompt_tokens": pt, "completion_tokens": ct,
                       "reasoning_tokens": rt, "snapshot": sn, "system_fingerprint": fp}
                row.update(tail(i))
                yield row

    def columns(self) -> list[str]:
        """The table's columns: the core ones, then each new tail column in the order of the rows."""
        keep = self._keep()
        item = self._column(self.item, keep)
        columns = list(CORE_COLUMNS)
        if len(item):
            firsts = np.unique(item, return_index=True)[1]
            for n in item[np.sort(firsts)].tolist():
                columns.extend(k for k in self._tail(n) if k not in columns)
        return columns

    def _models(self) -> tuple[list[Any], np.ndarray]:
        """The distinct models (as :class:`Codes` tells values apart) and each combination's model."""
        models = Codes()
        for combo in self.combo.values:
            models.add(combo[0])
        return models.values, np.frombuffer(models.codes, dtype=np.int32) if len(models.codes) else \
            np.zeros(0, np.int32)

    def counts(self) -> tuple[dict[Any, dict[str, int]], dict[str, int]]:
        """Trials per model (in the order first seen) and category; trials per scorer name."""
        keep = self._keep()
        models, model_of = self._models()
        model = model_of[self._column(self.combo.codes, keep)]
        category = self._column(self.category, keep)
        item = self._column(self.item, keep)
        counts: dict[Any, dict[str, int]] = {}
        if len(model):
            k = len(self.categories)
            cells = np.bincount(model.astype(np.int64) * k + category, minlength=len(models) * k)
            firsts = np.unique(model, return_index=True)[1]
            for m in model[np.sort(firsts)].tolist():
                counts[models[m]] = {c: int(cells[m * k + j]) for j, c in enumerate(self.categories)}
        used: dict[str, int] = {}
        per_item = np.bincount(item, minlength=len(self.items)) if len(item) else np.zeros(0, np.int64)
        for n in np.flatnonzero(per_item).tolist():
            name = self.scorer_of(self.items[n])
            used[name] = used.get(name, 0) + int(per_item[n])
        return counts, used

    def provenance(self) -> Iterator[tuple[Any, Any, Any]]:
        """(model, snapshot, system_fingerprint) of every row (grouped: their order is not the rows')."""
        combos = self._column(self.combo.codes, self._keep())
        per = np.bincount(combos, minlength=len(self.combo.values)) if len(combos) else np.zeros(0, np.int64)
        values = self.combo.values
        return chain.from_iterable(repeat((values[c][0], values[c][3], values[c][4]), int(per[c]))
                                   for c in np.flatnonzero(per).tolist())
