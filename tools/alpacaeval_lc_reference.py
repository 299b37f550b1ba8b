"""Record AlpacaEval's own length-controlled win rate on the synthetic files of tests/pairwise/lc_synthetic.py.

Not run by the tests or CI: it needs alpaca_eval (and scikit-learn, patsy, pandas), which replicate does not
depend on. Run it in a separate environment with those installed, from the repository's root:

    python tools/alpacaeval_lc_reference.py

It prints, for each case in tests/pairwise/test_lc.py's REFERENCE, AlpacaEval's length_controlled_winrate,
lc_standard_error, chosen C and weights; the tests hold ours to them (AlpacaEval's liblinear stops at a
tolerance of 1e-4, ours at the optimum). AlpacaEval downloads df_gamed.csv from its Hub dataset; here its
download function is pointed at the synthetic file instead.
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CASES = {"weighted-120": dict(n=120, seed=1, weighted=True), "discrete-60": dict(n=60, seed=5, weighted=False),
         "discrete-805": dict(n=805, seed=3, weighted=False)}


def main() -> None:
    import logging

    import pandas as pd
    from alpaca_eval.metrics import glm_winrate

    from tests.pairwise.lc_synthetic import write

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    fits = []
    original = glm_winrate.fit_LogisticRegressionCV

    def capture(*args, **kwargs):
        fits.append(original(*args, **kwargs))
        return fits[-1]

    glm_winrate.fit_LogisticRegressionCV = capture
    out = {}
    for name, case in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            annotations, df_gamed = write(Path(tmp), **case)
            glm_winrate.hf_hub_download = lambda path=str(df_gamed), **_: path
            metrics = glm_winrate.get_length_controlled_winrate(pd.read_json(annotations), save_weights_dir=None)
            out[name] = {"length_controlled_winrate": float(metrics["length_controlled_winrate"]),
                         "lc_standard_error": float(metrics["lc_standard_error"]), "C": float(fits[-1].C_[0]),
                         "weights": [float(w) for w in fits[-1].coef_[0]]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
