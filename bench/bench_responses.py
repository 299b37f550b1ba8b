"""Benchmark: reading released responses (responses@1) and joining them to items, beside the straightforward script.

Writes, into a temp dir, SYNTHETIC files in the shape of IFBench's released
``sample_output.jsonl`` (seeded, so every run writes the same bytes): N items
with prompts of a few hundred characters, and one ``{"prompt", "response"}``
line per item, a tenth of the prompts with a trailing space (joined once
whitespace is normalised), default 100,000 lines.

Times, best of three:

- straightforward: read bytes, orjson.loads per line, look the prompt up in a
  dict of the items' prompts (then the stripped prompt), item -> response;
- ours: the ``responses@1`` reader over the file (every check: fields, types,
  duplicate prompts, line numbers) and :func:`replicate.scoring.responses.join_responses`
  with the items' :class:`PromptIndex` (exact, normalised, ambiguous, unmatched).

Both must give the same item -> response mapping (exit 1 otherwise). Prints
each time and the ratio ours / straightforward. The target for JSONL readers
is within 2x of bare orjson: the reader alone is about that; the join, which
also builds each trial's record for the scorers, adds about half as much again.

    python bench/bench_responses.py [--small]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import orjson

from replicate.diagnostics import Diagnostics
from replicate.reading.contract import READERS, ReadOptions, Source
from replicate.scoring.responses import FileJoin, PromptIndex, join_responses

WORDS = ["include", "keyword", "paragraph", "respond", "answer", "exactly", "sentence", "words", "bullet", "title"]


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def write(path: Path, n: int, rng: random.Random) -> dict[str, str]:
    prompts = {f"i{k}": f"Prompt {k}: " + " ".join(rng.choice(WORDS) for _ in range(60)) for k in range(n)}
    with open(path, "wb") as fh:
        for k, (_, p) in enumerate(prompts.items()):
            sent = p + " " if k % 10 == 0 else p
            fh.write(orjson.dumps({"prompt": sent, "response": " ".join(rng.choice(WORDS) for _ in range(80))}) + b"\n")
    return prompts


def plain(path: Path, prompts: dict[str, str]) -> dict[str, str]:
    exact = {p: i for i, p in prompts.items()}
    stripped = {p.strip(): i for i, p in prompts.items()}
    out: dict[str, str] = {}
    for line in path.read_bytes().splitlines():
        row = orjson.loads(line)
        iid = exact.get(row["prompt"]) or stripped.get(row["prompt"].strip())
        if iid is not None:
            out[iid] = row["response"]
    return out


def ours(path: Path, prompts: dict[str, str]) -> dict[str, str]:
    diag = Diagnostics()
    reader = READERS.get("responses@1")
    src = Source(path, path.read_bytes(), ReadOptions(), diag)
    recs = [(r.line, r.key[0], r.output) for r in reader.records(src)]
    join = FileJoin(str(path), "m", 0, "prompt")
    trials = join_responses(recs, PromptIndex.of(prompts), list(prompts), join, diag=diag)
    return {t["item"]: t["text"] for _, t in trials}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a tenth of the size (quick check)")
    args = ap.parse_args(argv)
    n = 10_000 if args.small else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "responses.jsonl"
        prompts = write(path, n, random.Random(20251202))
        t_plain, ref = best(lambda: plain(path, prompts))
        t_ours, got = best(lambda: ours(path, prompts))
        if ref != got or len(got) != n:  # type: ignore[arg-type]
            print("MISMATCH: the two approaches join differently")
            return 1
        mb = path.stat().st_size / 1e6
        print(f"{'reader':<12} {'lines':>8} {'MB':>7} {'straightforward s':>18} {'ours s':>8} {'ratio':>6}")
        print(f"{'responses@1':<12} {n:>8} {mb:>7.1f} {t_plain:>18.3f} {t_ours:>8.3f} {t_ours / t_plain:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
