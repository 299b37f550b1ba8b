#!/usr/bin/env python3
"""Generate fixtures/trials-study/: a small SYNTHETIC K-trial migration study. Do not edit its files by hand.

THE DATA ARE SYNTHETIC: every trial is drawn from a seeded random generator
(tests/support/synth/trials_study.py, which holds the true pass rates and the
seed) and says nothing about any real model.

Layout:
  release/trials.jsonl.gz  the released trials table (3 models x 180 items x K = 10)
  claims.toml              the study's printed figures (three planted wrong)
  items.jsonl              the items, for a fresh collection
  sim.toml                 a `replicate sim-server` config with the study's true pass rates
  collect.toml             the collection config for `replicate collect`

Regenerate (a test checks that the committed files are exactly this output):
  python tools/make_trials_example.py [OUT_DIR]      # default: fixtures/trials-study
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from support.synth.trials_study import write_study  # noqa: E402

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "fixtures" / "trials-study"
    write_study(target)
    print(f"wrote {target}")
