"""Synthetic AlpacaEval annotations and df_gamed.csv in AlpacaEval's layouts (seeded; no real data).

Used by test_lc.py and by tools/alpacaeval_lc_reference.py, which runs AlpacaEval's own
``get_length_controlled_winrate`` on the same files to record the reference figures the tests hold ours to.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np


def write(folder: Path, *, n: int, seed: int, weighted: bool, nulls: int = 3) -> tuple[Path, Path]:
    """(annotations.json, df_gamed.csv) in ``folder``: a model m against gpt4_1106_preview on ``n`` instructions,
    the first ``nulls`` annotations without a preference; two gamed baselines (verbose, concise) in df_gamed."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, n)
    base_len = rng.integers(200, 2000, n)
    gamed = []
    for name, scale in (("gpt4_1106_preview_verbose", 1.6), ("gpt4_1106_preview_concise", 0.5)):
        glen = (base_len * scale * rng.uniform(0.8, 1.2, n)).astype(int)
        delta = base_len - glen
        std = delta / delta.std(ddof=1)
        p = 1 / (1 + np.exp(-(-0.3 * np.tanh(std) + 0.7 * difficulty + rng.normal(0, 0.5, n))))
        gamed += [[name, i, repr(float(p[i])), repr(float(std[i])), repr(float(difficulty[i])), "False"] for i in range(n)]
    model_len = (base_len * rng.uniform(0.5, 2.5, n)).astype(int)
    p = 1 / (1 + np.exp(-(0.4 + 0.9 * np.tanh((model_len - base_len) / 800) - 0.5 * difficulty + rng.normal(0, 0.7, n))))
    rows = []
    for i in range(n):
        pref = None if i < nulls else 1 + (float(p[i]) if weighted else float(rng.random() < p[i]))
        rows.append({"dataset": "synthetic", "instruction": f"Instruction {i}?", "output_1": "b" * int(base_len[i]),
                     "generator_1": "gpt4_1106_preview", "output_2": "é" * int(model_len[i]), "generator_2": "m",
                     "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": pref, "raw_completion": "x"})
    annotations = folder / "annotations.json"
    annotations.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    df_gamed = folder / "df_gamed.csv"
    with df_gamed.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "index", "preference", "std_delta_len", "instruction_difficulty", "not_gamed_baseline"])
        w.writerows(gamed)
    return annotations, df_gamed
