"""agreement.* verify metrics against sklearn, krippendorff and scipy on the committed LLMJudge runs, and the
same number as `replicate agreement`."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from replicate.errors import BadInput
from replicate.printed import Verdict
from replicate.verify.api import verify, verify_runs
from replicate.verify.claims_file import parse_claims
from support.paths import LLMJUDGE, text_of

from .test_recompute import (  # noqa: F401  (a fixture)
    DIGIT,
    GOLD,
    NEW,
    OLD,
    make_run,
    registered,  # noqa: F401  (a fixture)
)

QRELS = LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz"

HEAD = """
[runs]
"h2oloo-zeroshot1" = { files = ["h2oloo-zeroshot1.txt.gz"], reader = "trec-qrels@1" }
"willia-umbrela1" = { files = ["willia-umbrela1.txt.gz"], reader = "trec-qrels@1" }

[gold]
file = "llmjudge_test_qrel_idx.txt.gz"
reader = "trec-qrels@1"
"""


def _claim(cid, metric, value, **fields):
    lines = [f'id = "{cid}"', f'metric = "{metric}"', f'value = "{value}"', 'unit = "ratio"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    return "\n[[claims]]\n" + "\n".join(lines) + "\n"


def _verify(tmp_path, *claims):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + "".join(claims))
    v = verify(path, root=LLMJUDGE, date="2026-01-01")
    return {r.claim.id: r for r in v.runs.results}, v


def _qrels(path):
    return {tuple(line.split()[::2][:2]): int(line.split()[3]) for line in text_of(path).splitlines() if line.strip()}


def _vectors(*names):
    """Labels of the runs (and gold, last) on the items all of them and gold have, by key."""
    tables = [_qrels(LLMJUDGE / f"{n}.txt.gz") for n in names] + [_qrels(QRELS)]
    keys = sorted(set.intersection(*(set(t) for t in tables)))
    return [np.array([t[k] for k in keys]) for t in tables]


def _value(r):
    return r.computed[r.primary].value


def test_issue_example_and_references(tmp_path):
    krippendorff = pytest.importorskip("krippendorff")
    metrics = pytest.importorskip("sklearn.metrics")
    res, _ = _verify(
        tmp_path,
        _claim("t3-alpha-zeroshot1", "agreement.krippendorff_alpha", "0.385", run="h2oloo-zeroshot1",
               level="ordinal", binarize=2),
        _claim("alpha-wrong", "agreement.krippendorff_alpha", "0.395", run="h2oloo-zeroshot1", level="ordinal",
               binarize=2),
        _claim("kappa-quad", "agreement.cohen_kappa", "0.5", run="willia-umbrela1", weights="quadratic"),
        _claim("kappa-edge", "agreement.cohen_kappa", "0.5", old="h2oloo-zeroshot1", new="willia-umbrela1"),
        _claim("tau", "agreement.kendall_tau", "0.5", run="h2oloo-zeroshot1"),
    )
    x, g = _vectors("h2oloo-zeroshot1")
    ref = krippendorff.alpha(np.vstack([x >= 2, g >= 2]).astype(float), level_of_measurement="ordinal")
    assert _value(res["t3-alpha-zeroshot1"]) == pytest.approx(ref, abs=1e-12)
    assert res["t3-alpha-zeroshot1"].verdict(res["t3-alpha-zeroshot1"].primary) is Verdict.match
    assert res["alpha-wrong"].verdict(res["alpha-wrong"].primary) is Verdict.mismatch
    y, g2 = _vectors("willia-umbrela1")
    with warnings.catch_warnings(action="ignore"):
        kq = metrics.cohen_kappa_score(y, g2, labels=[0, 1, 2, 3], weights="quadratic")
    assert _value(res["kappa-quad"]) == pytest.approx(kq, abs=1e-12)
    a, b, _ = _vectors("h2oloo-zeroshot1", "willia-umbrela1")
    assert _value(res["kappa-edge"]) == pytest.approx(metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3]), abs=1e-12)
    from scipy import stats

    assert _value(res["tau"]) == pytest.approx(stats.kendalltau(x, g).statistic, abs=1e-12)


def test_same_number_as_the_agreement_command(tmp_path):
    from typer.testing import CliRunner

    from replicate.cli.app import app

    out = CliRunner().invoke(app, ["agreement", str(LLMJUDGE / "h2oloo-zeroshot1.txt.gz"), "--reader", "trec-qrels@1",
                                   "--gold", str(QRELS), "--binarize", "1,3", "--replicates", "0", "-f", "json"])
    assert out.exit_code == 0, out.output
    rows = {r["binarize"]: r for r in json.loads(out.stdout)["rows"]}
    res, _ = _verify(tmp_path, _claim("k1", "agreement.cohen_kappa", "0.5", run="h2oloo-zeroshot1", binarize=1,
                                      weights="linear"),
                     _claim("p3", "agreement.scott_pi", "0.5", run="h2oloo-zeroshot1", binarize=3),
                     _claim("rho", "agreement.spearman", "0.5", run="h2oloo-zeroshot1"))
    assert _value(res["k1"]) == rows[1]["cohen_kappa_linear"]
    assert _value(res["p3"]) == rows[3]["scott_pi"]
    assert _value(res["rho"]) == rows[None]["spearman"]


def test_bad_fields_are_said_at_once_by_claim_id():
    claims = [
        {"id": "a", "metric": "agreement.krippendorff_alpha", "run": "r", "level": "ordinall", "binarize": "2",
         "value": "0.3", "unit": "ratio"},
        {"id": "b", "metric": "agreement.scott_pi", "run": "r", "weights": "linear", "value": "0.3", "unit": "ratio"},
        {"id": "c", "metric": "agreement.cohen_kappa", "run": "r", "weights": "cubic", "value": "0.3",
         "unit": "percent"},
    ]
    with pytest.raises(BadInput) as info:
        parse_claims({"runs": {"r": ["r.jsonl"]}, "claims": claims}, path="c.toml")
    text = str(info.value)
    assert "claim 'a': level must be one of nominal, ordinal, interval, ratio, got 'ordinall'" in text
    assert "claim 'a': binarize must be a whole-number threshold" in text
    assert "claim 'b': unknown field 'weights'" in text
    assert "claim 'c': weights must be one of none, linear, quadratic, got 'cubic'" in text
    assert "claim 'c': unit 'percent' does not fit metric 'agreement.cohen_kappa'" in text


def test_unparsed_outputs_follow_the_claims_policy(registered):  # noqa: F811
    """A parsed run with one unparsed output (item 7): intersect drops it, wrong keeps it as a label of its own in
    unweighted kappa; the run-against-run kappa binarized at 2 over the items both parsed. sklearn is the reference."""
    metrics = pytest.importorskip("sklearn.metrics")

    data = {"runs": {"old": ["old.jsonl"], "new": ["new.jsonl"]}, "claims": [
        {"id": "i", "metric": "agreement.cohen_kappa", "run": "old", "value": "0.5", "unit": "ratio"},
        {"id": "w", "metric": "agreement.cohen_kappa", "run": "old", "unparsed": "wrong", "value": "0.5",
         "unit": "ratio"},
        {"id": "e", "metric": "agreement.cohen_kappa", "old": "old", "new": "new", "binarize": 2, "value": "0.5",
         "unit": "ratio"},
    ]}
    v = verify_runs(parse_claims(data, path="c.toml"), {"old": make_run("old", GOLD, OLD),
                                                        "new": make_run("new", GOLD, NEW)},
                    parsers=[DIGIT.name], date="2026-01-01")
    got = {r.claim.id: r.computed[DIGIT.name] for r in v.runs.results}
    keep = [i for i in range(10) if i != 7]
    old = np.array([int(OLD[i]) if OLD[i].isdigit() else -1 for i in range(10)])
    new, gold = np.array([int(x) for x in NEW]), np.array(GOLD)
    assert got["i"].value == pytest.approx(metrics.cohen_kappa_score(old[keep], gold[keep]), abs=1e-12)
    assert got["i"].n == 9 and got["w"].n == 10
    assert got["w"].value == pytest.approx(metrics.cohen_kappa_score(old, gold, labels=[0, 1, 2, 3, -1]), abs=1e-12)
    assert got["e"].value == pytest.approx(metrics.cohen_kappa_score(old[keep] >= 2, new[keep] >= 2), abs=1e-12)


def test_an_agreement_without_gold_or_shared_items_is_not_computable_with_why(registered):  # noqa: F811
    data = {"runs": {"old": ["old.jsonl"], "new": ["new.jsonl"], "far": ["far.jsonl"]}, "claims": [
        {"id": "g", "metric": "agreement.scott_pi", "run": "old", "value": "0.5", "unit": "ratio"},
        {"id": "s", "metric": "agreement.scott_pi", "old": "new", "new": "far", "value": "0.5", "unit": "ratio"},
    ]}
    runs = {"old": make_run("old", [-1] * 10, OLD), "new": make_run("new", GOLD, NEW),
            "far": make_run("far", GOLD, NEW, keys=[f"z{i}" for i in range(10)])}
    v = verify_runs(parse_claims(data, path="c.toml"), runs, parsers=[DIGIT.name], date="2026-01-01")
    got = {r.claim.id: r.computed[DIGIT.name] for r in v.runs.results}
    assert (got["g"].value, got["g"].why) == (None, "old has no gold labels on its items")
    assert (got["s"].value, got["s"].why) == (None, "new and far share no items")
