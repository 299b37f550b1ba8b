"""A SYNTHETIC three-version K-trial study whose items move, for the worked examples of docs/items.md.

Three versions, ``v1 -> v2 -> v3``, asked K = 20 times on 120 items of an
instruction-following benchmark (``ifeval``, with a strict and a loose reading,
as IFBench's verifier gives) and 120 items of ``math`` (strict only). The truth
is set per item (ten in every block of twenty, by position):

- 3 of 20 **regress then recover** (0.85 -> 0.2 -> 0.85) and 2 **improve then
  regress** (0.2 -> 0.85 -> 0.2): the direct edge v1 -> v3 hides them;
- 3 **improve on the first step and stay** (0.2 -> 0.8 -> 0.8);
- 1 **drifts** (0.25 -> 0.5 -> 0.75): small steps, a large direct move;
- the rest stay at one rate drawn from [0.3, 0.7].

On ``ifeval`` the loose reading also accepts a failed trial with chance 0.3.
Every item carries ``passage`` (four consecutive items share one: a cluster)
and ``difficulty`` (easy, medium, hard) as metadata. The rows are drawn with a
seeded generator and say nothing about any real model.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import orjson

from support.synth.trials import synthetic_rows

SEED = 20261206
K = 20
MODELS = ("v1", "v2", "v3")
N = 120
TABLE = "trials.jsonl.gz"


def rates(seed: int = SEED) -> dict[str, np.ndarray]:
    """Per model: the true pass rate of each of the N items of a benchmark (one draw per benchmark)."""
    rng = np.random.default_rng(seed)
    base = np.round(rng.uniform(0.3, 0.7, N), 2)
    a, b, c = base.copy(), base.copy(), base.copy()
    for i in range(N):
        k = i % 20
        if k < 3:
            a[i], b[i], c[i] = 0.85, 0.2, 0.85
        elif k < 5:
            a[i], b[i], c[i] = 0.2, 0.85, 0.2
        elif k < 8:
            a[i], b[i], c[i] = 0.2, 0.8, 0.8
        elif k == 8:
            a[i], b[i], c[i] = 0.25, 0.5, 0.75
    return {"v1": a, "v2": b, "v3": c}


def rows(seed: int = SEED) -> list[dict]:
    out = []
    for j, (bench, loose) in enumerate((("ifeval", 0.3), ("math", None))):
        meta = {"passage": [f"{bench}-p{i // 4:02d}" for i in range(N)],
                "difficulty": [("easy", "medium", "hard")[(i * 7) % 3] for i in range(N)]}
        part = synthetic_rows(rates(seed + j), k=K, benchmark=bench, seed=seed + 10 + j, loose_bonus=loose,
                              metadata=meta, item_prefix=f"{bench}-")
        out += part
    return out


def write_path_study(target: str | Path) -> Path:
    """Write the table under ``target``; returns its path."""
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    body = b"".join(orjson.dumps(r) + b"\n" for r in rows())
    path = target / TABLE
    path.write_bytes(gzip.compress(body, compresslevel=9, mtime=0))
    return path
