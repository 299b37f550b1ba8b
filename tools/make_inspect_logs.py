#!/usr/bin/env python3
"""Generate tests/readers/data/inspect/: tiny SYNTHETIC inspect_ai logs in the exact real layout. Do not edit by hand.

THE DATA ARE SYNTHETIC (tests/support/synth/inspect_logs.py holds the scores):
  old.eval, new.eval  six samples each, scorers "match" (C/I) and "model_graded_fact" (C/P/I)
  old.json            old.eval's samples as a .json log
  epochs.eval         the new model over two epochs, scorer "match" only
  passages-old.eval, passages-new.eval  40 samples, five to a passage (metadata.passage), scorer "match"

Regenerate (a test checks that the committed files are exactly this output):
  python tools/make_inspect_logs.py [OUT_DIR]      # default: tests/readers/data/inspect
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from support.synth.inspect_logs import write_fixtures  # noqa: E402

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "tests" / "readers" / "data" / "inspect"
    for path in write_fixtures(target):
        print(f"wrote {path}")
