#!/usr/bin/env python3
"""Generate fixtures/trials-path/trials.jsonl.gz: a SYNTHETIC three-version K-trial study whose items move
(regress then recover, improve then regress, drift), with a loose reading and passage/difficulty metadata,
for the worked examples of docs/items.md. Do not edit it by hand.

THE DATA ARE SYNTHETIC (tests/support/synth/trials_path.py holds the true pass rates and the seed).

Regenerate (a test checks that the committed table is exactly this output):
  python tools/make_trials_path.py [OUT_DIR]      # default: fixtures/trials-path
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from support.synth.trials_path import write_path_study  # noqa: E402

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "fixtures" / "trials-path"
    print(f"wrote {write_path_study(target)}")
