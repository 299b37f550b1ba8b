"""Which definition a printed number used: the alternatives a mismatching claim lists (never a match)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from replicate.printed import Verdict
from replicate.verify.alternatives import FAMILIES, MAX_RECOMPUTATIONS
from replicate.verify.api import verify_runs
from replicate.verify.claims_file import parse_claims

from .test_agreement_claims import _claim, _vectors, _verify
from .test_recompute import DIGIT, GOLD, NEW, OLD, make_run, registered  # noqa: F401  (a fixture)


def test_families_are_a_declared_table():
    assert [f.name for f in FAMILIES] == ["metric", "binarize", "unparsed", "out_of_scale", "parser", "unit"]
    assert all(f.doc for f in FAMILIES) and MAX_RECOMPUTATIONS == 1024


def _printed(x: float, places: int) -> str:
    return str(Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-places)))


def test_alpha_printed_under_the_name_kappa_is_found(tmp_path):
    krippendorff = pytest.importorskip("krippendorff")
    metrics = pytest.importorskip("sklearn.metrics")
    x, g = _vectors("h2oloo-zeroshot1")
    alpha = krippendorff.alpha(np.vstack([x >= 1, g >= 1]).astype(float), level_of_measurement="ordinal")
    kappa = metrics.cohen_kappa_score(x >= 1, g >= 1)
    text = _printed(alpha, 4)
    assert text != _printed(kappa, 4)  # the planted number is alpha's, not kappa's
    res, v = _verify(tmp_path, _claim("planted", "agreement.cohen_kappa", text, run="h2oloo-zeroshot1", binarize=1),
                     _claim("right", "agreement.cohen_kappa", _printed(kappa, 4), run="h2oloo-zeroshot1", binarize=1))
    r = res["planted"]
    assert r.verdict(r.primary) is Verdict.mismatch  # an explanation is not a match
    found = r.to_json()["alternatives"]
    alphas = [a for a in found if a["metric"] == "agreement.krippendorff_alpha" and a["settings"]["binarize"] == 1
              and a["settings"]["level"] == "ordinal" and len(a["settings"]) == 2]
    assert alphas and alphas[0]["value"] == pytest.approx(alpha, abs=1e-12)
    assert all(a["metric"] != "agreement.cohen_kappa" or a["settings"] != {"weights": "none", "binarize": 1}
               for a in found)
    assert res["right"].to_json()["alternatives"] == []
    from replicate.verify.note import render_note

    note = " ".join(render_note(v).split())
    assert (f"printed as Cohen's kappa, binarized at 1 = {text}; reproduced by "
            f"Krippendorff's alpha, nominal / ordinal / interval / ratio, binarized at 1 = {alpha:.6f}") in note
    assert "(the verdict stays mismatch)" in note and note.count("reproduced by") == 1


def test_regression_printed_over_old_correct_items(registered):  # noqa: F811
    data = {"runs": {"old": ["old.jsonl"], "new": ["new.jsonl"]},
            "claims": [{"id": "reg", "metric": "regression_rate", "old": "old", "new": "new", "value": "66.7",
                        "unit": "percent"},
                       {"id": "ok", "metric": "regression_rate", "old": "old", "new": "new", "value": "44.4",
                        "unit": "percent"}]}
    v = verify_runs(parse_claims(data, path="c.toml"), {"old": make_run("old", GOLD, OLD),
                                                        "new": make_run("new", GOLD, NEW)},
                    parsers=[DIGIT.name], date="2026-01-01")
    reg, ok = v.runs.results
    assert reg.verdict(DIGIT.name) is Verdict.mismatch
    found = reg.to_json()["alternatives"]
    # by hand (test_recompute): only_old 4, both 2 -> 4/6 = 66.67% over the items old got right
    assert found[0] == {"metric": "regression_share_of_old_correct", "settings": {}, "value": pytest.approx(4 / 6)}
    # under unparsed = wrong the same 4/6 (old's unparsed item is not among its correct ones): not listed again
    assert [a for a in found if a["metric"] == "regression_share_of_old_correct"] == found[:1]
    assert ok.to_json()["alternatives"] == [] and ok.alternatives is None


def _edge_claims(*claims):
    data = {"runs": {"old": ["old.jsonl"], "new": ["new.jsonl"]},
            "claims": [{"id": f"c{i}", "old": "old", "new": "new", **c} for i, c in enumerate(claims)]}
    v = verify_runs(parse_claims(data, path="c.toml"), {"old": make_run("old", GOLD, OLD),
                                                        "new": make_run("new", GOLD, NEW)},
                    parsers=[DIGIT.name], date="2026-01-01")
    return v.runs.results


def test_a_fraction_printed_as_a_percent_and_the_unparsed_policy(registered):  # noqa: F811
    frac, wrong = _edge_claims(
        {"metric": "regression_rate", "value": "0.444", "unit": "percent"},
        # under unparsed = wrong every shared item counts: 4 of 10 (by hand, test_recompute), not 4 of 9
        {"metric": "regression_rate", "value": "40.0", "unit": "percent"},
    )
    assert frac.verdict(DIGIT.name) is Verdict.mismatch and wrong.verdict(DIGIT.name) is Verdict.mismatch
    assert frac.to_json()["alternatives"][0] == {"metric": "regression_rate", "settings": {"unit": "fraction"},
                                                 "value": pytest.approx(4 / 9)}
    assert wrong.to_json()["alternatives"][0] == {"metric": "regression_rate", "settings": {"unparsed": "wrong"},
                                                  "value": pytest.approx(4 / 10)}
    assert 0 < wrong.alternatives.tried <= MAX_RECOMPUTATIONS


def test_the_bundled_example_lists_no_alternative():
    """Its two mismatching claims (a planted MAE, a change rate) have no other definition that fits: the golden
    note is unchanged (tests/golden), and the JSON says so."""
    from replicate.verify.api import verify
    from support.paths import ROOT

    v = verify(ROOT / "fixtures" / "example" / "claims.toml", root=ROOT / "fixtures" / "example", date="2026-01-01")
    mismatched = [r for r in v.runs.results if r.failed]
    assert mismatched and all(r.alternatives is not None and r.alternatives.found == () for r in mismatched)
    assert all(r.to_json()["alternatives"] == [] for r in v.runs.results)
