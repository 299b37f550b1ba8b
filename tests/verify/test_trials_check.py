"""Trial claims recomputed and replicated over small hand-made tables (figures counted by hand)."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as scipy_stats
from scipy.stats import fisher_exact
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.trials.load import read_trials
from replicate.verify.claims_file import parse_claims
from replicate.verify.trials_check import check_trials
from support.synth.trials import write_jsonl

K = 20
# (benchmark, item) -> {model: (correct, wrong, api_errors)}
PLAN = {
    ("X", "i1"): {"a": (0, 20, 0), "b": (20, 0, 0)},  # improved
    ("X", "i2"): {"a": (20, 0, 0), "b": (0, 20, 0)},  # regressed
    ("X", "i3"): {"a": (10, 10, 2), "b": (10, 10, 0)},  # inconclusive (API errors leave the denominator)
    ("X", "i4"): {"a": (20, 0, 0), "b": (20, 0, 0)},  # equivalent: Newcombe interval (-0.161, 0.161)
    ("Y", "j1"): {"a": (5, 15, 0), "b": (15, 5, 0)},  # improved (Fisher p < 0.01, alone in its cell)
}


def rows(plan=PLAN) -> list[dict]:
    out = []
    for (bench, item), per in plan.items():
        for model, (c, w, e) in per.items():
            cats = ["correct"] * c + ["wrong"] * w + ["api_error"] * e
            out += [{"model": model, "item": item, "trial": t, "benchmark": bench, "category": cat}
                    for t, cat in enumerate(cats)]
    return out


def claim(cid: str, metric: str, value: str, unit: str = "percent", **names) -> dict:
    return {"id": cid, "metric": metric, "trials": "s", "value": value, "unit": unit, **names}


CLAIMS = [
    claim("n", "items.n", "4", "count", edge="a:b", benchmark="X"),
    claim("imp", "items.improved", "1", "count", edge="a:b", benchmark="X"),
    claim("reg", "items.regressed", "1", "count", edge="a:b", benchmark="X"),
    claim("eqv", "items.equivalent", "1", "count", edge="a:b", benchmark="X"),
    claim("inc", "items.inconclusive", "25.0", edge="a:b", benchmark="X"),
    claim("plus", "items.p_plus", "25.0", edge="a:b", benchmark="X"),
    claim("chg-pooled", "items.p_chg", "60.0", edge="a:b"),
    claim("plus-y", "items.p_plus", "100", edge="a:b", benchmark="Y"),
    claim("delta", "items.delta", "0.0", edge="a:b", benchmark="X"),
    claim("acc-a", "accuracy", "62.5", model="a", benchmark="X"),
    claim("acc-b-y", "accuracy", "0.75", "fraction", model="b", benchmark="Y"),
    claim("scr-x", "screen.share", "25.0", benchmark="X"),
    claim("scr-x-pass", "screen.passes", "fail", "flag", benchmark="X"),
    claim("scr-y-pass", "screen.passes", "pass", "flag", benchmark="Y"),
    claim("wrong-imp", "items.improved", "2", "count", edge="a:b", benchmark="X"),
]


@pytest.fixture
def table(tmp_path):
    write_jsonl(rows(), tmp_path / "t.jsonl")
    return read_trials(tmp_path / "t.jsonl")


def test_the_premises_hold_by_scipy():
    assert fisher_exact([[5, 15], [15, 5]]).pvalue < 0.01
    assert fisher_exact([[0, 20], [20, 0]]).pvalue < 1e-9


def test_claims_are_recomputed_to_the_hand_counted_figures(table):
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": CLAIMS}, path="c.toml")
    tv = check_trials(cf.trials, {"s": table})
    verdicts = {r.claim.id: r.verdict for r in tv.results}
    assert verdicts == {c["id"]: "match" for c in CLAIMS} | {"wrong-imp": "mismatch"}
    by = {r.claim.id: r for r in tv.results}
    assert by["plus"].computed.value == pytest.approx(0.25) and by["chg-pooled"].computed.n == 5
    assert by["acc-a"].computed.value == 0.625  # (0 + 1 + 10/20 + 1) / 4, the API errors left out
    assert [r.claim.id for r in tv.failed] == ["wrong-imp"]
    assert all(r.mode == "recomputed" for r in tv.results)


def test_names_absent_from_the_table_are_listed_with_those_present(table):
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": [
        claim("b1", "items.p_plus", "1.0", edge="a:b", benchmark="Z"),
        claim("m1", "accuracy", "1.0", model="c", benchmark="X"),
        claim("e1", "items.p_plus", "1.0", edge="a:c"),
        claim("l1", "items.delta_r", "1.0", edge="a:b"),
    ]}, path="c.toml")
    with pytest.raises(BadInput) as info:
        check_trials(cf.trials, {"s": table}, claims_path="c.toml")
    assert str(info.value).splitlines() == [
        "c.toml: 4 problems with the trial claims:",
        "claim 'b1': benchmark 'Z' is not in trials table 's'; benchmarks: X, Y",
        "claim 'm1': model(s) 'c' not in trials table 's'; models: a, b",
        "claim 'e1': edge 'a:c' names model(s) 'c' not in trials table 's'; models: a, b",
        "claim 'l1': items.delta_r needs a loose reading, but trials table 's' has no correct_loose values",
    ]


def test_a_fresh_table_with_other_items_is_compared_on_the_shared_ones_and_says_so(table, tmp_path):
    plan = dict(PLAN)
    del plan[("X", "i4")]
    plan[("X", "i9")] = {"a": (3, 17, 0), "b": (3, 17, 0)}
    write_jsonl(rows(plan), tmp_path / "fresh.jsonl")
    fresh = read_trials(tmp_path / "fresh.jsonl")
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": CLAIMS}, path="c.toml")
    tv = check_trials(cf.trials, {"s": table}, {"s": fresh})
    (rep,) = tv.replications
    d = rep.provenance.items
    assert (d.shared, d.only_released, d.only_fresh) == (4, {"X": 1}, {"X": 1})
    by = {r.claim.id: r for r in tv.results}
    assert all(r.mode == "replicated" for r in tv.results)
    # i9 left out, i4 missing: an item count on a subset is not a replication question
    assert by["n"].computed.value == 3 and by["n"].verdict == "underpowered"
    assert by["n"].why.startswith("the fresh items are a subset: 3 of 4")
    assert by["n"].released.value == 4
    assert by["n"].replicated.compared_on.to_json() == {
        "items": 3, "of": 4, "released_on_shared": 3, "printed_minus_release": 0.0}
    # item-level: i1, i2, i3 classified alike in both; i4 is not in the fresh table
    ag = {(a.benchmark): a for a in rep.agreements}["X"]
    assert ag.items_compared == 3 and ag.again == 2 and ag.new == 0 and ag.same_class == 3
    note_json = tv.to_json()
    assert note_json["replications"][0]["provenance"]["items"] == {
        "shared_items": 4, "only_in_release": {"X": 1}, "only_in_fresh": {"X": 1}}


def test_cli_recomputes_and_replicates_with_exit_codes_and_json(table, tmp_path):
    (tmp_path / "c.toml").write_text(
        '[trials]\ns = ["t.jsonl"]\n\n' + "".join(
            "[[claims]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in c.items()) + "\n" for c in CLAIMS))
    run = CliRunner()
    r = run.invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path), "-f", "json"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["ok"] is False and out["summary_line"] == "14 of 15 recomputed trial claims match"
    c = {x["id"]: x for x in out["trials"]["claims"]}
    assert c["plus"]["mode"] == "recomputed" and c["plus"]["printed"] == "25.0" and c["plus"]["computed"] == 0.25
    assert c["wrong-imp"]["verdict"] == "mismatch"
    r = run.invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path), "-f", "json",
                         "--replication", f"s={tmp_path / 't.jsonl'}"])
    out = json.loads(r.stdout)
    c = {x["id"]: x for x in out["trials"]["claims"]}
    assert c["acc-a"]["mode"] == "replicated" and c["acc-a"]["test"].startswith("paired t test")
    assert c["acc-a"]["p_value"] == 1.0 and c["acc-a"]["interval"]["low"] < 0 < c["acc-a"]["interval"]["high"]
    assert c["plus"]["p_value"] == 1.0 and c["plus"]["test"].startswith("Newcombe's paired")
    r = run.invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path), "--replication", "nope=x"])
    assert r.exit_code == 2 and "--replication names no [trials] table: nope; tables: s" in r.output


# (item) -> {model: (strict correct, loose-only correct, wrong)} over K = 10 trials, benchmark L
LOOSE = {"i1": {"a": (4, 2, 4), "b": (8, 1, 1)}, "i2": {"a": (5, 0, 5), "b": (5, 2, 3)}}


def loose_rows() -> list[dict]:
    out = []
    for item, per in LOOSE.items():
        for model, (c, lo, w) in per.items():
            cats = [("correct", True)] * c + [("wrong", True)] * lo + [("wrong", False)] * (w)
            out += [{"model": model, "item": item, "trial": t, "benchmark": "L", "category": cat,
                     "correct_loose": loose} for t, (cat, loose) in enumerate(cats)]
    return out


def test_loose_readings_and_their_replication_variance(tmp_path):
    write_jsonl(loose_rows(), tmp_path / "l.jsonl")
    table = read_trials(tmp_path / "l.jsonl")
    cf = parse_claims({"trials": {"s": ["l.jsonl"]}, "claims": [
        claim("acc-loose-a", "accuracy.loose", "55.0", model="a", benchmark="L"),   # (6/10 + 5/10) / 2
        claim("acc-a", "accuracy", "45.0", model="a", benchmark="L"),               # (4/10 + 5/10) / 2
        claim("dr", "items.delta_r", "5.0", edge="a:b", benchmark="L"),             # R_b 0.15 - R_a 0.10
    ]}, path="c.toml")
    tv = check_trials(cf.trials, {"s": table})
    assert [r.verdict for r in tv.results] == ["match"] * 3
    tv = check_trials(cf.trials, {"s": table}, {"s": table})
    dr = tv.results[2]
    assert dr.mode == "replicated" and dr.replicated.comparison.p_value == pytest.approx(1.0)

    def var(rates_k):  # sum over items of p(1 - p) / (K - 1), over N^2
        return sum(p * (1 - p) / (k - 1) for p, k in rates_k) / len(rates_k) ** 2

    side = {m: [(c / 10, 10) for c, _, _ in (LOOSE[i][m] for i in LOOSE)] for m in ("a", "b")}
    loose = {m: [((c + lo) / 10, 10) for c, lo, _ in (LOOSE[i][m] for i in LOOSE)] for m in ("a", "b")}
    one = sum(var(side[m]) + var(loose[m]) for m in ("a", "b"))  # one table's variance of delta_r
    # Welch-Satterthwaite: each item's term counts K - 1 = 9 degrees of freedom, both tables alike
    terms = [p * (1 - p) / (k - 1) / len(r) ** 2 for r in (*side.values(), *loose.values()) for p, k in r] * 2
    df = math.floor(sum(terms) ** 2 / sum(v * v / 9 for v in terms))
    half = scipy_stats.t.ppf(0.975, df) * (2 * one) ** 0.5  # printed side from the release, fresh side alike
    c = dr.replicated.comparison
    assert (c.low, c.high) == pytest.approx((-half, half))


def test_replication_named_in_the_claims_file(table, tmp_path):
    write_jsonl(rows(), tmp_path / "fresh.jsonl")
    (tmp_path / "c.toml").write_text(
        '[trials]\ns = ["t.jsonl"]\n\n[replication]\ns = "fresh.jsonl"\n\n' + "".join(
            "[[claims]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in c.items()) + "\n" for c in CLAIMS[:3]))
    note = tmp_path / "note.md"
    r = CliRunner().invoke(app, ["verify", str(tmp_path / "c.toml"), "--root", str(tmp_path), "--out", str(note),
                                 "-f", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    # n is equal; a share of 1 item in 4 cannot be pinned to within 5 points by 4 items
    assert [c["verdict"] for c in out["trials"]["claims"]] == ["replicates", "underpowered", "underpowered"]
    assert [t["origin"] for t in out["trials"]["tables"]] == ["[trials]", "[replication]"]
    assert "--replication" not in note.read_text().split("## Reproduce")[1]  # the claims file names it


def test_a_fresh_collection_without_a_claimed_model_is_bad_input_listing_its_models(table, tmp_path):
    write_jsonl([r for r in rows() if r["model"] == "a"], tmp_path / "fresh.jsonl")
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": CLAIMS[:1]}, path="c.toml")
    with pytest.raises(BadInput) as info:
        check_trials(cf.trials, {"s": table}, {"s": read_trials(tmp_path / "fresh.jsonl")}, claims_path="c.toml")
    assert str(info.value).splitlines()[1:] == [
        "claim 'n': edge 'a:b' names model(s) 'b' not in the fresh collection for 's'; models: a"]


# Means of per-item rates exactly on a rounding boundary. Model a's rates on Z are 44, 44, 44 and 45 of 100:
# the mean is exactly 177/400 = 44.25%, halfway between "44.2" and "44.3". Model b's are 50 of 100 on each,
# so delta = 0.5 - 0.4425 = 5.75%, halfway between "5.7" and "5.8". As floats these means are not exactly
# on the boundary (no float is 0.4425), so one neighbour would mismatch by accident of binary rounding.
BOUNDARY = {("Z", f"z{k}"): {"a": (c, 100 - c, 0), "b": (50, 50, 0)} for k, c in enumerate([44, 44, 44, 45])}


def test_a_mean_of_rates_exactly_on_a_rounding_boundary_is_a_tie_with_either_neighbour(tmp_path):
    from fractions import Fraction

    import numpy as np

    write_jsonl(rows(BOUNDARY), tmp_path / "t.jsonl")
    table = read_trials(tmp_path / "t.jsonl")
    floats = np.array([0.44, 0.44, 0.44, 0.45])
    assert Fraction(float(floats.mean())) != Fraction(177, 400)  # the premise: the float mean is off the boundary
    claims = [
        claim("acc-lo", "accuracy", "44.2", model="a", benchmark="Z"),
        claim("acc-hi", "accuracy", "44.3", model="a", benchmark="Z"),
        claim("delta-lo", "items.delta", "5.7", edge="a:b", benchmark="Z"),
        claim("delta-hi", "items.delta", "5.8", edge="a:b", benchmark="Z"),
        claim("acc-off", "accuracy", "44.4", model="a", benchmark="Z"),
    ]
    cf = parse_claims({"trials": {"s": ["t.jsonl"]}, "claims": claims}, path="c.toml")
    by = {r.claim.id: r for r in check_trials(cf.trials, {"s": table}).results}
    assert by["acc-lo"].computed.value == Fraction(177, 400) and by["delta-lo"].computed.value == Fraction(23, 400)
    for cid in ("acc-lo", "acc-hi", "delta-lo", "delta-hi"):
        assert by[cid].verdict == "match" and by[cid].outcome.tie, cid
    assert by["acc-off"].verdict == "mismatch" and not by["acc-off"].outcome.tie
