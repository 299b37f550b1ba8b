"""Replication against a fresh table that holds part of the release's items (issue 28, section 1).

The release is a seeded synthetic 200-item table; its claims are its own
figures, rounded as printed (correct claims). The fresh collections come from
the same truth: the claims must not read "does not replicate" because the
fresh items are a subset; a planted difference still must.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from replicate.stats.replication import PAIRED_SHARE_INTERVAL, PAIRED_T_TEST, share_difference
from replicate.trials.fresh import restrict
from replicate.trials.load import CATEGORIES, read_trials
from replicate.verify.claims_file import parse_claims
from replicate.verify.sources.trials import trial_sections
from replicate.verify.trials_check import check_trials
from replicate.verify.trials_recompute import TrialsRecomputer
from support.synth.trials import synthetic_rows, write_jsonl

N, K, SEED = 200, 30, 28
CELL = {"edge": "a:b", "benchmark": "bench"}
SPECS = [
    ("acc-a", "accuracy", "percent", {"model": "a", "benchmark": "bench"}),
    ("acc-b", "accuracy", "percent", {"model": "b", "benchmark": "bench"}),
    ("delta", "items.delta", "percent", CELL),
    ("p-plus", "items.p_plus", "percent", CELL),
    ("p-chg", "items.p_chg", "percent", CELL),
    ("improved", "items.improved", "count", CELL),
    ("equivalent", "items.equivalent", "percent", CELL),
    ("inconclusive", "items.inconclusive", "percent", CELL),
    ("screen", "screen.share", "percent", {"benchmark": "bench"}),
    ("n", "items.n", "count", CELL),
]


def truth(shift_a: float = 0.0) -> dict[str, np.ndarray]:
    a = np.random.default_rng(SEED).beta(1.2, 2.5, N)
    b = a.copy()
    b[:20] = np.minimum(a[:20] + 0.3, 1.0)
    return {"a": np.minimum(a + shift_a, 1.0), "b": b}


def _claim(cid, metric, unit, names, value):
    return {"id": cid, "metric": metric, "trials": "s", "value": value, "unit": unit, **names}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    d = tmp_path_factory.mktemp("release")
    write_jsonl(synthetic_rows(truth(), k=K, seed=SEED + 1), d / "r.jsonl")
    return read_trials(d / "r.jsonl")


@pytest.fixture(scope="module")
def claims(release):
    """The release's own figures, printed to one decimal of a percent (counts as they are)."""
    draft = parse_claims({"trials": {"s": ["r.jsonl"]}, "claims": [_claim(*s, "0") for s in SPECS]}, path="c")
    rc = TrialsRecomputer({"s": release})
    out = []
    for spec, c in zip(SPECS, draft.trials.claims):
        v = rc.compute(c).value
        out.append(_claim(*spec, str(v) if spec[2] == "count" else f"{float(Fraction(v) * 100):.1f}"))
    return parse_claims({"trials": {"s": ["r.jsonl"]}, "claims": out}, path="c").trials


def fresh_table(tmp_path, shift_a=0.0, seed=SEED + 2):
    write_jsonl(synthetic_rows(truth(shift_a), k=K, seed=seed), tmp_path / "f.jsonl")
    return read_trials(tmp_path / "f.jsonl")


def easiest(table, n=15):
    order = np.argsort(-truth()["a"], kind="stable")[:n]
    return restrict(table, {("bench", f"q{i:04d}") for i in order})


def test_the_15_easiest_items_of_a_correct_release_never_read_does_not_replicate(release, claims, tmp_path):
    fresh = easiest(fresh_table(tmp_path))
    tv = check_trials(claims, {"s": release}, {"s": fresh})
    by = {r.claim.id: r for r in tv.results}
    # the premise: on its 15 items the fresh accuracy is far from the printed all-items figure (the defect
    # compared those two with trial-level error only: about 2 points at K = 30)
    assert float(by["acc-a"].computed.value) - float(by["acc-a"].claim.printed.value) / 100 > 0.3
    assert [r.claim.id for r in tv.results if r.verdict == "does not replicate"] == []
    assert by["n"].verdict == "underpowered" and by["n"].why.startswith("the fresh items are a subset: 15 of 200")
    on = by["acc-a"].replicated.compared_on
    assert (on.items, on.of, on.subset) == (15, 200, True)
    # the release's figure there is the plain mean over those 15 items of its per-item rates
    rates = {}
    for m, it, cat in zip(release.model.tolist(), release.item.tolist(), release.category.tolist()):
        if release.models[m] == "a":
            rates.setdefault(release.items[it], []).append(CATEGORIES[cat] == "correct")
    kept = {f"q{i:04d}" for i in np.argsort(-truth()["a"], kind="stable")[:15]}
    assert float(on.released_on_shared.value) == pytest.approx(np.mean([np.mean(rates[i]) for i in kept]))


def test_a_random_15_item_subset_of_a_correct_release_never_reads_does_not_replicate(release, claims, tmp_path):
    fresh = fresh_table(tmp_path)
    pick = np.random.default_rng(SEED + 3).choice(N, 15, replace=False)
    fresh = restrict(fresh, {("bench", f"q{i:04d}") for i in pick})
    tv = check_trials(claims, {"s": release}, {"s": fresh})
    assert [r.claim.id for r in tv.results if r.verdict == "does not replicate"] == []


def test_a_planted_difference_on_a_subset_still_does_not_replicate(release, claims, tmp_path):
    fresh = restrict(fresh_table(tmp_path, shift_a=0.25), {("bench", f"q{i:04d}") for i in range(25, 45)})
    by = {r.claim.id: r for r in check_trials(claims, {"s": release}, {"s": fresh}).results}
    assert by["acc-a"].verdict == "does not replicate" and by["acc-a"].replicated.test == PAIRED_T_TEST
    assert by["delta"].verdict == "does not replicate"
    assert by["acc-b"].verdict != "does not replicate"  # b's truth is unchanged


def test_a_misprinted_figure_does_not_replicate_though_the_fresh_data_agree_with_the_release(release, claims,
                                                                                            tmp_path):
    wrong = [c for c in claims.claims if c.id == "acc-a"]
    raw = _claim(*SPECS[0], f"{float(wrong[0].printed.value) + 15:.1f}")
    cf = parse_claims({"trials": {"s": ["r.jsonl"]}, "claims": [raw]}, path="c").trials
    (r,) = check_trials(cf, {"s": release}, {"s": fresh_table(tmp_path)}).results
    assert r.verdict == "does not replicate"
    assert r.replicated.compared_on.misprint == pytest.approx(0.15, abs=5e-4)  # 15 points, give or take rounding


def test_the_paired_share_of_identical_tables_is_zero_with_a_narrow_interval(release, claims):
    tv = check_trials(claims, {"s": release}, {"s": release})
    by = {r.claim.id: r for r in tv.results}
    for cid in ("p-plus", "p-chg", "improved", "equivalent", "inconclusive"):
        r = by[cid]
        c = r.replicated.comparison
        assert r.replicated.test == PAIRED_SHARE_INTERVAL and c.difference == 0 and c.low <= 0 <= c.high
        k = round(float(Fraction(r.computed.value) / (N if r.claim.printed.unit == "count" else 1)) * N)
        unpaired = share_difference(k, N, k / N, N)
        assert c.high - c.low < (unpaired.high - unpaired.low) * (0.8 if k < 20 else 0.5), cid  # same items
        assert c.p_value == 1.0 and r.verdict == "replicates", cid  # no item changes class: exact McNemar p = 1
    assert by["acc-a"].replicated.comparison.difference == 0 and by["acc-a"].verdict == "replicates"


def test_json_and_note_say_which_items_the_verdict_stands_on(release, claims, tmp_path):
    fresh = easiest(fresh_table(tmp_path))
    tv = check_trials(claims, {"s": release}, {"s": fresh})
    out = {c["id"]: c for c in tv.to_json()["claims"]}
    on = out["acc-a"]["compared_on"]
    assert (on["items"], on["of"], on["printed_minus_release"]) == (15, 200, 0.0)
    assert out["acc-a"]["interval"]["of"] == "fresh - release, on the shared items"
    assert on["released_on_shared"] == pytest.approx(out["acc-a"]["computed"] - out["acc-a"]["difference"])
    text = "\n".join(trial_sections(tv))
    shown = f"{on['released_on_shared'] * 100:.4f}"
    assert f"on the 15 shared items of 200 (the release's figure there: {shown}; over all 200: " in text
    assert "underpowered [1]" in text and "[1] the fresh items are a subset: 15 of 200" in text
    assert "95% interval, fresh - release" in text


def test_the_tested_claims_of_one_collection_are_one_holm_family(release, claims, tmp_path):
    from replicate.stats.replication import holm

    tv = check_trials(claims, {"s": release}, {"s": fresh_table(tmp_path)})
    reps = [r.replicated for r in tv.results if r.replicated is not None]
    tested = [r for r in reps if r.comparison is not None and r.comparison.p_value is not None]
    assert len(tested) >= 5
    assert [r.family for r in tested] == [len(tested)] * len(tested)
    assert [r.p_adjusted for r in tested] == holm([r.comparison.p_value for r in tested])
    assert all(r.p_adjusted is None and r.family == 0 for r in reps if r not in tested)
