"""Seeded SYNTHETIC retrieval runs over the topics and documents of a qrels, for ``replicate rankings``.

THE RUNS ARE SYNTHETIC: no retrieval system produced them. System ``k`` of
``n`` has a quality ``q_k`` evenly spaced from ``low`` to ``high``; for each
topic it scores every judged document ``q_k * grade + noise`` (standard normal
noise) and ``extra`` unjudged documents (``x<topic>-<i>``) ``noise`` alone, and
returns the ``depth`` best as TREC run lines (``qid Q0 docid rank score tag``).
Better systems put relevant documents higher, with chance swaps between systems
of close quality: a known ordering to compare qrels against.

    python -m replicate.examples.trec_runs QRELS OUT_DIR [--systems 12] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from replicate.outfile import write_file


def synthetic_runs(
    judgments: Mapping[str, Mapping[str, int]],
    *,
    n_systems: int = 12,
    depth: int = 20,
    extra: int = 10,
    low: float = 0.1,
    high: float = 1.5,
    seed: int = 0,
) -> dict[str, list[str]]:
    """System name -> its run lines (no newline), deterministic in ``seed``; topics in sorted order."""
    rng = np.random.default_rng(seed)
    qualities = np.linspace(low, high, n_systems)
    runs: dict[str, list[str]] = {}
    for k, q in enumerate(qualities):
        name = f"sys{k + 1:02d}"
        lines: list[str] = []
        for qid in sorted(judgments):
            docs = sorted(judgments[qid])
            grades = np.array([judgments[qid][d] for d in docs], dtype=np.float64)
            names = docs + [f"x{qid}-{i}" for i in range(extra)]
            scores = np.concatenate([q * grades, np.zeros(extra)]) + rng.standard_normal(len(names))
            top = np.argsort(-scores, kind="stable")[:depth]
            lines += [f"{qid} Q0 {names[i]} {r + 1} {scores[i]:.4f} {name}" for r, i in enumerate(top)]
        runs[name] = lines
    return runs


def read_judgments(path: str | Path) -> dict[str, dict[str, int]]:
    """A plain qrels file (``qid iter docid grade``; gzip undone) as ``{qid: {docid: grade}}``, for the generator only."""
    from replicate.reading.stream import InputStream

    out: dict[str, dict[str, int]] = {}
    for line in InputStream(path).read().decode("utf-8").splitlines():
        if line.strip():
            qid, _, docid, grade = line.split()
            out.setdefault(qid, {})[docid] = int(grade)
    return out


def write_runs(runs: Mapping[str, list[str]], out_dir: str | Path) -> list[Path]:
    """One ``<system>.txt`` per run under ``out_dir`` (created); returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, lines in runs.items():
        p = out / f"{name}.txt"
        write_file(p, ("\n".join(lines) + "\n").encode("utf-8"))
        paths.append(p)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write seeded synthetic TREC runs over a qrels' topics and documents.")
    ap.add_argument("qrels")
    ap.add_argument("out_dir")
    ap.add_argument("--systems", type=int, default=12)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    runs = synthetic_runs(read_judgments(args.qrels), n_systems=args.systems, depth=args.depth, seed=args.seed)
    for p in write_runs(runs, args.out_dir):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
