"""Synthetic trials tables with known truth, for tests, benchmarks and worked examples.

Each model has a true pass rate per item; each trial is an independent draw.
Failures are spread over the failure categories; ``api_error_rate`` turns some
trials into API errors (which leave the denominator).
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np
import orjson

FAILURES = ("wrong", "format_failure", "refusal", "truncation")


def synthetic_rows(
    rates: Mapping[str, Sequence[float] | np.ndarray],
    *,
    k: int | Mapping[str, int] = 50,
    benchmark: str | Sequence[str] = "bench",
    seed: int = 0,
    api_error_rate: float = 0.0,
    loose_bonus: float | None = None,
    metadata: Mapping[str, Sequence] | None = None,
    item_prefix: str = "q",
) -> list[dict]:
    """Rows of a trials table.

    ``rates[model][i]`` is the true pass rate of item ``i``; ``k`` trials per item
    (one number, or one per model); ``benchmark`` one name or one per item;
    ``loose_bonus`` adds a ``correct_loose`` reading that also accepts a failed
    trial with that probability; ``metadata[column][i]`` is copied to every row
    of item ``i``.
    """
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    for model, r in rates.items():
        r = np.asarray(r, dtype=np.float64)
        n_items = r.shape[0]
        kk = k[model] if isinstance(k, Mapping) else k
        ok = rng.random((n_items, kk)) < r[:, None]
        api = rng.random((n_items, kk)) < api_error_rate
        fail_kind = rng.integers(0, len(FAILURES), size=(n_items, kk))
        loose_extra = rng.random((n_items, kk)) < (loose_bonus or 0.0)
        for i in range(n_items):
            bench = benchmark if isinstance(benchmark, str) else benchmark[i]
            meta = {c: v[i] for c, v in (metadata or {}).items()}
            for j in range(kk):
                if api[i, j]:
                    cat = "api_error"
                elif ok[i, j]:
                    cat = "correct"
                else:
                    cat = FAILURES[fail_kind[i, j]]
                row = {
                    "model": model,
                    "item": f"{item_prefix}{i:04d}",
                    "trial": j,
                    "benchmark": bench,
                    "category": cat,
                }
                if loose_bonus is not None:
                    row["correct_loose"] = None if cat == "api_error" else bool(
                        cat == "correct" or loose_extra[i, j]
                    )
                row.update(meta)
                rows.append(row)
    return rows


def write_jsonl(rows: Sequence[dict], path: str | os.PathLike[str]) -> None:
    with open(path, "wb") as fh:
        fh.write(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def write_csv(rows: Sequence[dict], path: str | os.PathLike[str]) -> None:
    import csv

    cols: list[str] = []
    for r in rows:
        for c in r:
            if c not in cols:
                cols.append(c)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: ("" if r.get(c) is None else str(r[c]).lower() if isinstance(r.get(c), bool) else r[c]) for c in cols})


def add_usage(
    rows: Sequence[dict],
    *,
    completion: Mapping[str, float],
    reasoning: Mapping[str, float] | None = None,
    prompt: float = 200.0,
    null_rate: float = 0.0,
    seed: int = 0,
) -> list[dict]:
    """``rows`` with ``prompt_tokens``, ``completion_tokens`` and ``reasoning_tokens`` added, as ``replicate score`` writes them.

    Per trial: prompt tokens by item (``prompt`` plus a per-item offset), completion tokens drawn
    around ``completion[model]`` (a wrong answer 30% longer), reasoning tokens around
    ``reasoning[model]`` inside the completion (null for a model not in ``reasoning``). An
    API error reports no usage; another trial reports none with probability ``null_rate``.
    """
    rng = np.random.default_rng(seed)
    out = []
    for r in rows:
        r = dict(r)
        m = r["model"]
        silent = r["category"] == "api_error" or rng.random() < null_rate
        offset = sum(map(ord, str(r["item"]))) % 97
        reason = None
        if not silent and reasoning is not None and m in reasoning:
            reason = int(rng.poisson(reasoning[m]))
        longer = 1.0 if r["category"] == "correct" else 1.3
        comp = None if silent else int(rng.poisson(completion[m] * longer)) + (reason or 0)
        r.update(prompt_tokens=None if silent else int(prompt) + offset, completion_tokens=comp,
                 reasoning_tokens=reason)
        out.append(r)
    return out
