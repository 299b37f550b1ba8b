#!/usr/bin/env python3
"""Generate fixtures/example/: a small SYNTHETIC judge release. Do not edit its files by hand.

THE DATA ARE SYNTHETIC. No file under fixtures/example/ is real model output,
real relevance judgements or real query text: everything is drawn from a seeded
random generator (replicate/examples/judge_release.py) to imitate the layout and the odd
reply shapes of a real released UMBRELA-style judge study. Figures computed on
it say nothing about any real model.

Layout (like the real release):
  results/<model>_annotations.jsonl       DL 2019-like split
  results_2020/<model>_annotations.jsonl  DL 2020-like split
  runs.toml                               the version line (and one repeat)
  exam/<name>.jsonl.gz + exam/runs.toml   two tiny grouped-EXAM runs

The exact parameters (versions, accuracies, reply styles, splits, seed) are
EXAMPLE_VERSIONS / EXAMPLE_SPLITS / EXAMPLE_SEED in replicate/examples/judge_release.py,
so `replicate demo` can rebuild the same release when the package is installed
without this folder.

Regenerate (tests check that the committed files are exactly this output):
  python tools/make_example.py [OUT_DIR]      # default: fixtures/example
"""

from __future__ import annotations

import sys
from pathlib import Path

from replicate.examples.judge_release import write_example  # the seeded spec lives there

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "fixtures" / "example"
    write_example(target)
    print(f"wrote {target}")
