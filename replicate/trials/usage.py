"""Token usage per trial, read from a trials table's usage columns and checked (pure).

``replicate score`` writes ``prompt_tokens``, ``completion_tokens`` and
``reasoning_tokens`` per trial, as the provider's ``usage`` reported them
(null where it reported none). Reasoning tokens are part of the completion
tokens (OpenAI's ``completion_tokens_details.reasoning_tokens``), so

- ``total = prompt + completion`` (reasoning is not added again), null when
  either is null;
- a trial reporting more reasoning than completion tokens is bad input.

A null is "not reported", never 0: it is kept as NaN and counted. An
``api_error`` trial has no response, so its usage must be null (bad input
otherwise); error trials are left out of every cost figure, as out of p̂.

Values: an integer; an integral float such as ``12.0`` (as pandas writes an
integer column holding nulls) and the text of a count such as ``"12"`` (as
CSV holds every value, and JSON may) are read as that count; empty text is
null. Bad input names the file and line: a negative count, a fraction, other
text, true/false, a list or an object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from replicate.errors import BadInput
from replicate.trials.load import API_ERROR, TrialsTable, readonly, short_repr

#: The usage columns of a trials table, and the kinds of tokens counted from them.
COLUMNS: dict[str, str] = {"prompt": "prompt_tokens", "completion": "completion_tokens",
                           "reasoning": "reasoning_tokens"}
KINDS: tuple[str, ...] = ("prompt", "completion", "reasoning", "total")
#: Above this a count is not a token count (and no longer exact as a float): bad input.
MAX_TOKENS = 2**53


@dataclass(frozen=True, eq=False)
class Usage:
    """Tokens per row of a trials table for each of :data:`KINDS` (float, NaN = not reported; read-only).

    ``columns``: the usage columns the table has at all (a released table of answers may have none).
    """

    tokens: dict[str, np.ndarray]
    columns: tuple[str, ...]

    @property
    def reported(self) -> bool:
        """Whether any non-error trial reports any usage."""
        return any(bool((~np.isnan(v)).any()) for v in self.tokens.values())


def _value(v: object) -> float | None | str:
    """A token count as a float (None for null), or the words saying why it is not one."""
    if v is None:
        return None
    t = type(v)
    if t is int:
        if not -MAX_TOKENS <= v <= MAX_TOKENS:  # type: ignore[operator]
            return f"is not a plausible token count: {short_repr(v)}"
        n = float(v)  # type: ignore[arg-type]
    elif t is float:
        f = float(v)  # type: ignore[arg-type]
        if not math.isfinite(f) or not f.is_integer():
            return f"is not an integer: {short_repr(v)}"
        n = f
    elif t is str:
        s = str(v).strip()
        if not s:
            return None
        try:
            n = float(int(s))
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                return f"is not an integer: {short_repr(v)}"
            if not math.isfinite(f) or not f.is_integer():
                return f"is not an integer: {short_repr(v)}"
            n = f
    else:
        return f"is not an integer: {short_repr(v)}"
    if n < 0:
        return f"must be >= 0, got {short_repr(v)}"
    if n > MAX_TOKENS:
        return f"is not a plausible token count: {short_repr(v)}"
    return n


def _column(table: TrialsTable, name: str, error: np.ndarray) -> np.ndarray:
    """The counts of one usage column (NaN where null), each distinct value read once; the first bad row named."""
    meta = table.column_codes(name)
    read = [_value(v) for v in meta.values]
    why = {c: x for c, x in enumerate(read) if isinstance(x, str)}
    count = np.array([np.nan if x is None or isinstance(x, str) else x for x in read] + [np.nan])  # code -1: NaN
    out = count[meta.codes]
    bad = np.flatnonzero(np.isin(meta.codes, list(why))) if why else np.zeros(0, dtype=np.int64)
    reported = np.flatnonzero(error & ~np.isnan(out))
    if bad.size and (not reported.size or bad[0] <= reported[0]):
        r = int(bad[0])
        raise BadInput(f"column {name!r} {why[int(meta.codes[r])]}", path=table.path, line=int(table.line[r]))
    if reported.size:
        r = int(reported[0])
        raise BadInput(
            f"an api_error trial reports usage ({name} = {short_repr(meta.values[meta.codes[r]])}): an API error "
            "has no response to count tokens of; make the usage null or the category what the response was",
            path=table.path, line=int(table.line[r]),
        )
    return out


def read_usage(table: TrialsTable) -> Usage:
    """The usage of every trial of ``table``; :class:`BadInput` (file:line) for a value that is not a count."""
    error = table.category == API_ERROR
    columns = tuple(c for c in COLUMNS.values() if c in table.metadata_columns)
    raw = {kind: (_column(table, col, error) if col in columns else np.full(table.n_rows, np.nan))
           for kind, col in COLUMNS.items()}
    over = np.flatnonzero(raw["reasoning"] > raw["completion"])  # NaN compares False
    if over.size:
        r = int(over[0])
        raise BadInput(
            f"reasoning_tokens ({int(raw['reasoning'][r])}) exceeds completion_tokens ({int(raw['completion'][r])}): "
            "the trials table counts reasoning tokens as part of the completion tokens, as the provider's usage does",
            path=table.path, line=int(table.line[r]),
        )
    tokens = {**raw, "total": raw["prompt"] + raw["completion"]}
    return Usage({k: readonly(tokens[k]) for k in KINDS}, columns)
