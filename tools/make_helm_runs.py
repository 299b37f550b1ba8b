#!/usr/bin/env python3
"""Generate tests/readers/data/helm/: tiny SYNTHETIC HELM run directories in the exact real layout. Do not edit by hand.

THE DATA ARE SYNTHETIC (tests/support/synth/helm_runs.py holds the verdicts):
  runs/v1/mmlu:subject=anatomy,method=multiple_choice_joint,model=example_model-a   model a, 8 predictions
  runs/v1/mmlu:subject=anatomy,method=multiple_choice_joint,model=example_model-b   model b, 8 predictions
  runs/v1/trials                                                                    model b over two train trials
Six instances (id0, id1 valid; id2-id5 test) and the typos perturbation of id4 and id5.

Regenerate (a test checks that the committed files are exactly this output):
  python tools/make_helm_runs.py [OUT_DIR]      # default: tests/readers/data/helm
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support.synth: the synthetic data
from support.synth.helm_runs import write_fixtures  # noqa: E402

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "tests" / "readers" / "data" / "helm"
    for path in write_fixtures(target):
        print(f"wrote {path}")
