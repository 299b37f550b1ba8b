"""Claims over system rankings: `rankings.*` metrics recomputed from TREC run files under two qrels.

The reference is independent of the code: ir-measures' aggregates computed here, then scipy's kendalltau /
spearmanr and tau_AP as printed (tests/support/rankings.py)."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest
from scipy.stats import kendalltau, spearmanr
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.verify.claims_file import parse_claims

from ..support.rankings import scenario, tau_ap_paper

runner = CliRunner()


def _aggregates(runs: list[Path], qrels: Path) -> list[float]:
    q = list(ir_measures.read_trec_qrels(str(qrels)))
    out = []
    for r in runs:
        agg = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], q, list(ir_measures.read_trec_run(str(r))))
        out.append(float(agg[ir_measures.nDCG @ 10]))
    return out


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("rank")
    runs, ref, est = scenario(root)
    x, y = _aggregates(runs, ref), _aggregates(runs, est)
    expected = {"kendall_tau": kendalltau(x, y).statistic, "spearman": spearmanr(x, y).statistic,
                "tau_ap": tau_ap_paper(x, y)}
    return root, expected


def _claims(root: Path, expected: dict[str, float]) -> Path:
    tau = f"{expected['kendall_tau']:.2f}"
    wrong = f"{expected['kendall_tau'] + 0.1:.2f}"
    text = f"""
[study]
title = "ranking study"

[trec_runs]
track = ["runs"]

[[claims]]
id = "tau-ok"
metric = "rankings.kendall_tau"
trec_runs = "track"
qrels = ["ref.qrels", "est.qrels"]
value = "{tau}"
unit = "ratio"

[[claims]]
id = "tau-wrong"
metric = "rankings.kendall_tau"
trec_runs = ["runs"]
qrels = ["ref.qrels", "est.qrels"]
measure = "nDCG@10"
value = "{wrong}"
unit = "ratio"

[[claims]]
id = "ap-ok"
metric = "rankings.tau_ap"
trec_runs = "track"
qrels = ["ref.qrels", "est.qrels"]
value = "{expected['tau_ap']:.3f}"
unit = "ratio"

[[claims]]
id = "rho-ok"
metric = "rankings.spearman"
trec_runs = "track"
qrels = ["ref.qrels", "est.qrels"]
value = "{expected['spearman']:.2f}"
unit = "ratio"
"""
    path = root / "claims.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_printed_tau_matches_at_printed_precision_and_a_wrong_one_fails(study):
    root, expected = study
    path = _claims(root, expected)
    r = runner.invoke(app, ["verify", str(path), "--root", str(root), "-f", "json", "--date", "2026-01-01"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    got = {c["id"]: c for c in out["rankings"]["claims"]}
    assert {k: c["verdict"] for k, c in got.items()} == {
        "tau-ok": "match", "tau-wrong": "mismatch", "ap-ok": "match", "rho-ok": "match"}
    assert got["tau-ok"]["computed"] == pytest.approx(expected["kendall_tau"], abs=1e-12)
    assert got["ap-ok"]["computed"] == pytest.approx(expected["tau_ap"], abs=1e-12)
    assert got["rho-ok"]["computed"] == pytest.approx(expected["spearman"], abs=1e-12)
    assert got["tau-ok"]["options"] == {"qrels": ["ref.qrels", "est.qrels"], "measure": "nDCG@10"}
    # the scenario: t1 judged by the reference only, t7 by the estimate only (tests/support/rankings.py)
    topics = got["tau-ok"]["topics"]
    assert (topics["only_reference"], topics["only_estimate"], topics["both"]) == (["t1"], ["t7"], 5)
    assert not out["ok"]
    # provenance: every run file and both qrels, each with its sha256
    import hashlib
    sources = {Path(s["path"]).name: s for s in out["rankings"]["sources"]}
    assert sources["ref.qrels"]["role"] == "qrels" and len(sources) == 6 + 2
    assert sources["ref.qrels"]["sha256"] == hashlib.sha256((root / "ref.qrels").read_bytes()).hexdigest()
    note = runner.invoke(app, ["verify", str(path), "--root", str(root), "--date", "2026-01-01",
                               "--out", str(root / "note.md")])
    assert note.exit_code == 1
    text = (root / "note.md").read_text(encoding="utf-8")
    assert "## Ranking claims" in text and "## Ranking sources" in text
    assert sources["est.qrels"]["sha256"] in text
    assert "ranking claim(s) mismatch: tau-wrong" in text
    assert "- `tau-ok`: 1 topic(s) judged by the reference qrels only, 1 by the estimate only (5 by both)" in " ".join(
        text.split())


def test_bad_fields_are_reported_at_once_by_claim_id():
    data = {"trec_runs": {"track": ["runs"]}, "claims": [
        {"id": "a", "metric": "rankings.kendall_tau", "trec_runs": "trak", "qrels": ["r.qrels"],
         "value": "0.8", "unit": "percent"},
        {"id": "b", "metric": "rankings.tau_ap", "trec_runs": ["/abs/run.txt"], "qrels": ["r", "../e"],
         "measure": "nDCG@ten", "value": "0.8", "unit": "ratio"},
        {"id": "c", "metric": "rankings.spearman", "trec_runs": "track", "value": "0.8", "unit": "ratio",
         "old": "x"},
        {"id": "d", "metric": "rankings.kendal_tau", "trec_runs": "track", "qrels": ["r", "e"],
         "value": "0.8", "unit": "ratio"},
    ]}
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    msg = str(info.value)
    for line in (
        "claim 'a': unknown unit 'percent'; units of ranking figures: ratio",
        "claim 'a': qrels must be two qrels files [reference, estimate], got ['r.qrels']",
        "claim 'a': trec_runs 'trak' is no [trec_runs] name (did you mean 'track'?)",
        "claim 'b': trec_runs paths must be relative to --root without '..': /abs/run.txt",
        "claim 'b': qrels paths must be relative to --root without '..': ../e",
        "claim 'b': measure 'nDCG@ten' is not an ir-measures measure name",
        "claim 'c': missing field 'qrels'",
        "claim 'c': unknown field 'old'",
        "claim 'd': unknown ranking metric 'rankings.kendal_tau' (did you mean 'rankings.kendall_tau'?)",
    ):
        assert line in msg, (line, msg)
    assert "[runs]" not in msg  # ranking claims alone need no judge runs


def test_systems_that_score_alike_make_the_claim_not_computable(study, tmp_path):
    """Two systems with the same ranked lists score alike under both qrels: Kendall's tau-b and Spearman's rho
    are undefined (scipy gives NaN), so the claim is not computable with the reason, not a traceback."""
    root, _ = study
    first = sorted((root / "runs").iterdir())[0]
    (tmp_path / "same").mkdir()
    for name in ("a", "b"):
        lines = [" ".join(line.split()[:5] + [name]) for line in first.read_text(encoding="utf-8").splitlines()]
        (tmp_path / "same" / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    x = _aggregates(sorted((tmp_path / "same").iterdir()), root / "ref.qrels")
    assert x[0] == x[1]
    for q in ("ref.qrels", "est.qrels"):
        (tmp_path / q).write_bytes((root / q).read_bytes())
    (tmp_path / "c.toml").write_text(
        '[study]\ntitle = "t"\n[trec_runs]\nsame = ["same"]\n'
        + "".join(f'[[claims]]\nid = "{s}"\nmetric = "rankings.{s}"\ntrec_runs = "same"\n'
                  'qrels = ["ref.qrels", "est.qrels"]\nvalue = "0.5"\nunit = "ratio"\n'
                  for s in ("kendall_tau", "spearman")), encoding="utf-8")
    r = runner.invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path), "-f", "json"])
    assert r.exit_code == 0, r.output
    claims = json.loads(r.stdout)["rankings"]["claims"]
    assert [c["verdict"] for c in claims] == ["not_computable"] * 2, claims
    assert all("systems score alike" in c["why"] for c in claims), claims


@pytest.mark.parametrize("measure, reason", [
    ("NumRet", "is not a mean over topics (ir-measures aggregates it as SumAgg)"),
    ("nDCG@0", "has cutoff 0: a cutoff counts the top results of each topic and must be 1 or more"),
    ("P(rel=0)@10", "has rel=0: the lowest grade counted relevant must be 1 or more"),
])
def test_a_measure_refused_says_why(measure, reason):
    """A claim's measure is refused for the reason 'rankings --measure' gives (a cutoff of 0 is not 'not a mean
    over topics')."""
    data = {"trec_runs": {"track": ["runs"]}, "claims": [
        {"id": "a", "metric": "rankings.kendall_tau", "trec_runs": "track", "qrels": ["r", "e"], "measure": measure,
         "value": "0.8", "unit": "ratio"}]}
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    assert f"claim 'a': measure {measure!r} {reason}" in str(info.value)
