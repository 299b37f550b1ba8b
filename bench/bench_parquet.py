"""Benchmark: peak resident memory and time of reading a large SYNTHETIC lighteval details Parquet file.

Writes (seeded, same bytes every run) a details file in lighteval's flat
layout (the Open LLM Leaderboard v1 shape: ``example``, ``full_prompt``,
``predictions``, ``gold``, ``choices``, ``gold_index``, ``metrics`` struct,
...) of ``--rows`` rows (default 1,000,000; ``--small``: 20,000) in row
groups of ``--row-group`` rows (default 100,000), then runs, each in its own
process after the same imports (peak resident memory is the process's
``VmHWM``, see bench/peak_rss.py):

- plain loop (the straightforward approach the issue names): ``for i in
  range(pf.num_row_groups): table = pf.read_row_group(i)``, summing the
  ``acc`` field of ``metrics`` with pyarrow.compute;
- ours: ``lighteval-details@1``'s records, every one made and checked, not kept;
- ours, loaded: ``load_run`` (records plus the run the commands compare: every
  key, verdict and origin kept, so it grows with the rows).

All three must count the same rows and the same right answers. Exits 1 when
they disagree or when ours (the reader, or ``load_run`` keeping the run) peaks
above 1.2x the plain loop (issue 41: a run keeps its items in columns, about
100 bytes an item, not a Python object per key, verdict and origin).

    python bench/bench_parquet.py [--small] [--rows 1000000] [--row-group 100000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench_memory import measure

IMPORTS = """
import sys
from pathlib import Path
import pyarrow.compute as pc
import pyarrow.parquet as pq
from replicate.diagnostics import Diagnostics
from replicate.judge.load import load_run
from replicate.reading.contract import ReadOptions, Source
from replicate_parsers.lighteval import LIGHTEVAL_DETAILS
"""

PLAIN = IMPORTS + """
pf = pq.ParquetFile(sys.argv[1])
n = right = 0
for i in range(pf.num_row_groups):
    table = pf.read_row_group(i)
    n += table.num_rows
    right += int(pc.sum(pc.struct_field(table.column("metrics"), "acc")).as_py() or 0)
print(n, right)
"""

OURS = IMPORTS + """
src = Source(Path(sys.argv[1]), b"", ReadOptions(extra={"correct_field": "acc"}), Diagnostics(), stream=lambda: iter(()))
n = right = 0
for rec in LIGHTEVAL_DETAILS.records(src):
    n += 1
    right += rec.correct is True
print(n, right)
"""

LOADED = IMPORTS + """
run = load_run("r", sys.argv[1], diagnostics=Diagnostics(), reader="lighteval-details@1",
               options=ReadOptions(extra={"correct_field": "acc"}))
print(len(run.keys), int((run.labels == 1).sum()))
"""

LIMIT = 1.2


def write_details(path: Path, rows: int, row_group: int) -> int:
    """The synthetic file; returns how many rows have acc == 1 (the seeded truth)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    words = np.array("the answer question passage which model choice option first second".split())
    right = 0
    writer = None
    try:
        for start in range(0, rows, row_group):
            n = min(row_group, rows - start)
            idx = np.arange(start, start + n)
            acc = (rng.random(n) < 0.62).astype(np.float64)
            right += int(acc.sum())
            text = [" ".join(words[rng.integers(0, len(words), 20)]) for _ in range(n)]
            cols = {
                "choices": pa.array([[" A", " B", " C", " D"]] * n),
                "cont_tokens": pa.array([[]] * n, pa.list_(pa.int64())),
                "example": pa.array([f"Question {i}: {t}?" for i, t in zip(idx, text)]),
                "full_prompt": pa.array([f"The following are questions.\n\nQuestion {i}: {t}?\nAnswer:" * 3
                                         for i, t in zip(idx, text)]),
                "gold": pa.array([[" B"]] * n),
                "gold_index": pa.array([[1]] * n),
                "input_tokens": pa.array([[]] * n, pa.list_(pa.int64())),
                "instruction": pa.array([""] * n),
                "metrics": pa.StructArray.from_arrays([pa.array(acc), pa.array(acc)], ["acc", "acc_norm"]),
                "num_asked_few_shots": pa.array(np.full(n, 25)),
                "num_effective_few_shots": pa.array(np.full(n, 25)),
                "padded": pa.array([[0, 0, 0, 0]] * n),
                "pred_logits": pa.array([[]] * n, pa.list_(pa.float64())),
                "predictions": pa.array(list(-rng.random((n, 4)) * 5)),
                "specifics": pa.array([{"note": ""}] * n),
                "truncated": pa.array([[0, 0, 0, 0]] * n),
            }
            table = pa.table(cols)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table, row_group_size=row_group)
    finally:
        if writer is not None:
            writer.close()
    return right


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="20,000 rows in row groups of 5,000 (what CI runs)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--row-group", type=int, default=100_000)
    a = ap.parse_args(argv)
    rows, group = (20_000, 5_000) if a.small else (a.rows, a.row_group)
    tmp = Path(tempfile.mkdtemp(prefix="bench-parquet-"))
    try:
        path = tmp / "details_leaderboard|arc:challenge|25_2024-05-01T10-00-00.000000.parquet"
        right = write_details(path, rows, group)
        print(f"details file: {path.stat().st_size / 1e6:.0f} MB, {rows:,} rows in row groups of {group:,} "
              "(synthetic, seeded)")
        env = {**os.environ, "REPLICATE_CACHE_DIR": str(tmp / "cache")}
        results = []
        for name, text in (("plain row-group loop", PLAIN), ("ours: reader records", OURS),
                           ("ours: load_run (kept)", LOADED)):
            script = tmp / f"{name.split()[0].strip(':')}-{len(results)}.py"
            script.write_text(text)
            results.append((name, measure([str(script), str(path)], tmp, env)))
        counts = {name: tuple(map(int, out.split())) for name, (_, _, out) in results}
        if any(c != (rows, right) for c in counts.values()):
            print(f"MISMATCH: expected {rows} rows, {right} right; got {counts}", file=sys.stderr)
            return 1
        print(f"{'approach':24} {'time s':>8} {'peak MB':>8}")
        for name, (sec, peak, _) in results:
            print(f"{name:24} {sec:8.2f} {peak:8.0f}")
        plain, ours, loaded = (r[1] for r in results)
        ratio = ours[1] / plain[1]
        print(f"ours / plain loop: peak memory {ratio:.2f}x (limit {LIMIT}x), time {ours[0] / plain[0]:.2f}x; "
              f"load_run / plain loop: peak memory {loaded[1] / plain[1]:.2f}x")
        kept = loaded[1] / plain[1]
        if ratio > LIMIT or kept > LIMIT:
            print(f"OVER: the reader peaks at {ratio:.2f}x and load_run at {kept:.2f}x the plain loop", file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
