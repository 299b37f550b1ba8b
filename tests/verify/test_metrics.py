"""The one metric table: both sources in it, and a new metric added as one row with its own field and computation."""

from __future__ import annotations

from fractions import Fraction

import pytest

from replicate.errors import BadInput
from replicate.judge.uncertainty import Uncertainty
from replicate.printed import Verdict
from replicate.stats import power
from replicate.trials.settings import DEFAULT_SEED
from replicate.verify import metrics as M
from replicate.verify.api import verify_runs
from replicate.verify.claims_file import parse_claims
from replicate.verify.recompute import Computed

from .test_recompute import DIGIT, GOLD, OLD, make_run, registered  # noqa: F401  (a fixture)


def test_one_table_holds_both_sources_and_names_never_collide():
    assert M.metric("em").source == "runs" and M.metric("items.p_plus").source == "trials"
    assert M.metric("em", "trials") is None and M.metric("items.p_plus", "runs") is None
    null = M.metric("items.null_p95.p_plus")
    assert null is not None and null.needs_null and null.family == "share"
    assert M.metric("items.null_p95.Bad") is None
    assert M.metric_names("trials")[-3:] == ["items.null_p95.p_plus", "items.null_p95.p_minus", "items.null_p95.p_chg"]
    with pytest.raises(ValueError, match="registered twice"):
        M.register(M.METRICS["em"])


def _within(value):
    return None if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else \
        f"must be a whole number >= 0, got {value!r}"


def _agree_within(rc, claim, parser):
    """Share of parsed items whose label is within ``grades`` of gold (a toy family for this test)."""
    lr = rc.labelled(claim.run, parser)
    tol = claim.options["grades"]
    pairs = [(int(x), int(g)) for x, g in zip(lr.labels, lr.gold) if x >= 0]
    if not pairs:
        return Computed(None, "no parsed items")
    return Computed(Fraction(sum(abs(x - g) <= tol for x, g in pairs), len(pairs)))


TOY = M.Metric("toy.agree_within", "runs", ("run",), "rate", "labels within `grades` of gold",
               fields=(M.Field("grades", _within, 0),), compute=_agree_within)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(M.METRICS, TOY.name, TOY)


def _data(**claim):
    return {"runs": {"old": ["old.jsonl"]},
            "claims": [{"id": "t", "metric": "toy.agree_within", "run": "old", "value": "88.9", "unit": "percent",
                        **claim}]}


def test_a_new_metric_brings_its_field_and_its_computation(toy, registered):  # noqa: F811
    cf = parse_claims(_data(grades=1), path="c.toml")
    (c,) = cf.claims
    assert c.options == {"grades": 1} and c.to_json()["options"] == {"grades": 1}
    v = verify_runs(cf, {"old": make_run("old", GOLD, OLD)}, parsers=[DIGIT.name], date="2026-01-01")
    (r,) = v.runs.results
    # by hand: parsed items (all but index 7) and |label - gold|: 0 0 1 0 0 1 0 . 0 1 -> 9 of 9 within 1
    assert r.computed[DIGIT.name].value == Fraction(9, 9)
    assert r.verdict(DIGIT.name) is Verdict.mismatch  # 100% is not the printed 88.9
    cf0 = parse_claims(_data(), path="c.toml")  # the default: exact agreement, 6 of 9
    v0 = verify_runs(cf0, {"old": make_run("old", GOLD, OLD)}, parsers=[DIGIT.name], date="2026-01-01")
    assert v0.runs.results[0].computed[DIGIT.name].value == Fraction(6, 9)


def test_a_metric_field_is_checked_and_refused_where_the_metric_does_not_declare_it(toy):
    with pytest.raises(BadInput) as info:
        parse_claims(_data(grades=-1), path="c.toml")
    assert "claim 't': grades must be a whole number >= 0, got -1" in str(info.value)
    data = _data()
    data["claims"][0].update(metric="em", grades=1)
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    assert "claim 't': unknown field 'grades'" in str(info.value)


def test_one_seed_default_for_every_trial_figure():
    import inspect

    from replicate.trials.engine import analyse_items
    from replicate.trials.plan import plan
    from replicate.verify.claim import Claim

    assert DEFAULT_SEED == 0 == power.DEFAULT_SEED == Uncertainty().seed  # one default, trial and judge commands
    assert inspect.signature(plan).parameters["seed"].default == DEFAULT_SEED
    assert inspect.signature(analyse_items).parameters["seed"].default in (None, DEFAULT_SEED)
    assert Claim.__dataclass_fields__["settings"].default.seed == DEFAULT_SEED
