"""Benchmark: reading ~450k UMBRELA judge outputs with the built-in parsers.

Straightforward approach (what the released scripts do): for every output,
``re.search``/``re.findall`` with the pattern text and re.IGNORECASE, no
pre-checks, no reuse of identical outputs. Ours: ``Parser.parse_many`` (reads
each distinct text once) over the precompiled patterns and literal pre-checks of
parsers/umbrela.py. Both run on the same generated outputs in the same run; the
labels must agree exactly.

    python bench/bench_parsers.py            # 22 runs x 20,646 items = 454,212 outputs
    python bench/bench_parsers.py --small    # 5,000 outputs, a few seconds
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

# the straightforward readings, transcribed from the rule texts
from replicate_parsers.umbrela_reference import NAIVE

ITEMS_PER_RUN = 20_646
RUNS = 22

# -- data -------------------------------------------------------------------------------

_WORDS = (
    "the passage query relevant answer partially describes mentions topic user intent source "
    "trustworthy however because evidence directly question information details about"
).split()


def _reasoning(rng: random.Random, length: int) -> str:
    words, size = [], 0
    while size < length:
        w = rng.choice(_WORDS)
        if rng.random() < 0.03:
            w = str(rng.randint(0, 2024))
        if rng.random() < 0.08:
            w += "."
        words.append(w)
        size += len(w) + 1
    return " ".join(words)


def make_outputs(n: int, *, seed: int = 0) -> list[str]:
    """n judge outputs in the shapes of the release: mostly short and repeated, some long.

    About 190 bytes per output on average (the real release: ~115 MB of records
    for 20 x 20,646 items, query texts and ids included).
    """
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        g = rng.randint(0, 3)
        r = rng.random()
        if r < 0.70:
            out.append(f"##final score: {g}")
        elif r < 0.80:
            out.append(f"M: {rng.randint(0, 3)}  \nT: {rng.randint(0, 3)}  \nO: {g}  \n##final score: {g}")
        elif r < 0.85:
            out.append(f"##M: {rng.randint(0, 3)}  \n##T: {rng.randint(0, 3)}  \n##O: {g}")
        elif r < 0.88:
            out.append(rng.choice([f"{g}", f"1: {g}", f"{g}\n{g}\n{g}", "", f"Final score: {g}.5"]))
        elif r < 0.96:
            end = rng.choice([f"Final score: {g}", f"O: {g}", f"Answer: {g}", f"**Final Score:** {g}"])
            out.append(_reasoning(rng, rng.randint(200, 1200)) + "\n\n" + end)
        else:
            end = rng.choice([f"Final score: {g}", f"Overall (O) = {g}", f"O: {g}"])
            out.append(_reasoning(rng, rng.randint(1200, 4000)) + "\n" + end)
    return out


# -- measurement ------------------------------------------------------------------------


def run(n: int, *, seed: int = 0) -> list[dict]:
    from replicate.parsing import PARSERS, UNPARSED

    texts = make_outputs(n, seed=seed)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    results = []
    for name, naive in NAIVE.items():
        t0 = time.perf_counter()
        plain = [naive(t) for t in texts]
        t_naive = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours = PARSERS.get(name).parse_many(texts)
        t_ours = time.perf_counter() - t0
        expected = np.array([UNPARSED if v is None else v for v in plain], dtype=np.int8)
        if not np.array_equal(expected, ours):
            bad = int(np.flatnonzero(expected != ours)[0])
            raise AssertionError(f"{name}: disagreement on output {bad}: {texts[bad]!r}")
        results.append(
            {"parser": name, "outputs": n, "mb": mb, "naive_s": t_naive, "ours_s": t_ours, "ratio": t_naive / t_ours}
        )
    # the corrected reading has no straightforward counterpart; time it per text vs parse_many
    checked = PARSERS.get("umbrela-checked@1")
    t0 = time.perf_counter()
    plain = [checked(t) for t in texts]
    t_naive = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = checked.parse_many(texts)
    t_ours = time.perf_counter() - t0
    assert ours.tolist() == [UNPARSED if v is None else v for v in plain]
    results.append(
        {"parser": checked.name, "outputs": n, "mb": mb, "naive_s": t_naive, "ours_s": t_ours, "ratio": t_naive / t_ours}
    )
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="5,000 outputs instead of 22 x 20,646")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    n = 5_000 if args.small else RUNS * ITEMS_PER_RUN
    for r in run(n, seed=args.seed):
        print(
            f"{r['parser']:<20} {r['outputs']:>8,} outputs ({r['mb']:.0f} MB): "
            f"straightforward {r['naive_s']:.2f} s ({r['outputs'] / r['naive_s']:,.0f}/s), "
            f"parse_many {r['ours_s']:.2f} s ({r['outputs'] / r['ours_s']:,.0f}/s), ratio {r['ratio']:.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
