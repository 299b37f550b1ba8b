"""Seeded correlated judges over clustered items, for the interval and McNemar tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from replicate.judge.model import KEY_SEP, LabelledRun


def runs_over(queries: int, per_query: int, n_runs: int, *, seed: int, skip: dict[int, int] | None = None):
    """Correlated judges over clustered items (labels 0/1, gold 0); run r lacks its last skip[r] items."""
    rng = np.random.default_rng(seed)
    n = queries * per_query
    keys = np.array([f"q{i // per_query}{KEY_SEP}d{i}" for i in range(n)], dtype=object)
    gold = np.zeros(n, np.int16)
    hard = rng.normal(0, 1, queries)[np.arange(n) // per_query] + rng.normal(0, 1, n)
    out = []
    for r in range(n_runs):
        right = rng.normal(0.3, 1, n) > hard
        labels = np.where(right, 0, 1).astype(np.int8)
        drop = (skip or {}).get(r, 0)
        sl = slice(0, n - drop)
        out.append(LabelledRun(f"r{r}", keys[sl], gold[sl], labels[sl], "toy@1"))
    return out


def write_judge_files(folder: Path, runs) -> list[str]:
    """Each run as a judge JSONL file (query_id, corpus_id, gold 0, umbrela-style output): the paths."""
    out = []
    for run in runs:
        path = folder / f"{run.name}.jsonl"
        with open(path, "w") as fh:
            for key, lab in zip(run.keys.tolist(), run.labels.tolist()):
                q, d = key.split(KEY_SEP)
                fh.write(json.dumps({"query_id": q, "corpus_id": d, "original_qrel_score": 0,
                                     "model_output": f"##final score: {lab}"}) + "\n")
        out.append(str(path))
    return out
