"""verify over runs whose readers decided their labels or verdicts: one column, and no label figures.

The runs are one lm-eval samples file read with two filters (test_lm_eval.py
holds the per-document verdicts by hand): strict-match 1 1 0 0 1 0,
flexible-extract 1 1 1 1 1 0, so strict -> flex has both 3, only_old 0,
only_new 2, neither 1 with strict-match's three "[invalid]" (docs 2, 3, 5: no answer
extracted, unparsed) counted wrong (unparsed = "wrong"), as lm-eval scores them. Verdict runs
have no labels: change rate and MAE are not computable, and no parser reads them.
"""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

LM_A = ROOT / "tests" / "readers" / "data" / "lm_eval" / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl"
LM = "lm-eval-samples@1"

CLAIMS = f'''[study]
title = "one lm-eval log, two filters"

[runs]
strict = {{ files = ["a.jsonl"], reader = "{LM}", filter = "strict-match" }}
flex = {{ files = ["a.jsonl"], reader = "{LM}", filter = "flexible-extract" }}

[[claims]]
id = "gained"
metric = "cells.only_new"
old = "strict"
new = "flex"
value = "2"
unit = "count"
unparsed = "wrong"

[[claims]]
id = "backward"
metric = "backward_rate"
old = "strict"
new = "flex"
value = "33.3"
unit = "percent"
unparsed = "wrong"

[[claims]]
id = "churn"
metric = "change_rate"
old = "strict"
new = "flex"
value = "0.0"
unit = "percent"

[[claims]]
id = "mae"
metric = "mae"
run = "flex"
value = "0.17"
unit = "ratio"
'''


def _verify(tmp_path, *flags):
    shutil.copy(LM_A, tmp_path / "a.jsonl")
    (tmp_path / "claims.toml").write_text(CLAIMS, encoding="utf-8")
    res = CliRunner().invoke(app, ["verify", str(tmp_path / "claims.toml"), "--root", str(tmp_path), "--no-plots",
                                   "--out", str(tmp_path / "note.md"), "-f", "json", *flags])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), (tmp_path / "note.md").read_text(encoding="utf-8")


def test_one_column_named_by_the_reader_and_label_figures_not_computable(tmp_path):
    out, note = _verify(tmp_path)
    assert [p["name"] for p in out["parsers"]] == ["lm-eval-metric"]
    assert out["decided_labels"] is True and out["gating_parser"] == "lm-eval-metric"
    claims = {c["id"]: c for c in out["claims"]}
    assert claims["gained"]["verdict"] == {"lm-eval-metric": "match"}
    # backward = only_new / N = 2/6 = 33.33%
    assert claims["backward"]["verdict"] == {"lm-eval-metric": "match"}
    for cid, why in (("churn", "change_rate needs labels"), ("mae", "mae needs labels")):
        assert claims[cid]["verdict"] == {"lm-eval-metric": "not_computable"}, claims[cid]
        assert why in json.dumps(claims[cid])
    assert "so no parser reads them and each claim is recomputed once" in " ".join(note.split())
    rerun = [line for line in note.splitlines() if line.startswith("replicate verify ")]
    assert len(rerun) == 1 and "--parser" not in rerun[0]


def test_a_parser_given_for_decided_runs_changes_nothing(tmp_path):
    plain, _ = _verify(tmp_path)
    given, note = _verify(tmp_path, "-p", "umbrela-strict@1", "-p", "umbrela-fallback@1")
    assert [p["name"] for p in given["parsers"]] == ["lm-eval-metric"]
    assert given["claims"] == plain["claims"]
    assert "umbrela-strict@1" not in note
