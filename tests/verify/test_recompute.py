"""Recomputing claims from in-memory runs: hand-computed cells, scipy, the floor module, verdicts."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from replicate.judge.floor import floor as judge_floor
from replicate.judge.model import Run
from replicate.parsing import Parser
from replicate.printed import Verdict
from replicate.verify.api import verify_runs
from replicate.verify.claims_file import parse_claims
from replicate.verify.recompute import Recomputer, floor_value

# Two test parsers: "digit" reads a bare digit; "strict" also refuses "3" (so the parsers disagree).
DIGIT = Parser("testdigit-plain@1", "a bare digit", lambda t: int(t) if t.isdigit() else None)
STRICT = Parser("testdigit-strict@1", "a bare digit 0-2", lambda t: int(t) if t in ("0", "1", "2") else None)
GET = {p.name: p for p in (DIGIT, STRICT)}.__getitem__


def make_run(name, gold, outputs, keys=None):
    keys = keys or [f"q{i}" for i in range(len(gold))]
    return Run(name, np.array(keys, dtype=object), np.array(gold, dtype=np.int16), tuple(outputs), ())


GOLD = [0, 1, 2, 3, 0, 1, 2, 3, 1, 2]
#          right? old: y y n y y n y x(unparsed) y n
OLD = ["0", "1", "1", "3", "0", "2", "2", "x", "1", "3"]
NEW = ["0", "2", "2", "3", "1", "1", "0", "3", "2", "2"]
REP = ["0", "2", "2", "3", "1", "1", "2", "3", "2", "2"]


@pytest.fixture
def registered():
    from replicate.parsing import PARSERS

    for p in (DIGIT, STRICT):
        PARSERS.register(p)
    yield
    for p in (DIGIT, STRICT):
        PARSERS.unregister(p.name)


@pytest.fixture
def rc():
    return Recomputer(
        {"old": make_run("old", GOLD, OLD), "new": make_run("new", GOLD, NEW), "rep": make_run("rep", GOLD, REP)},
        GET,
    )


def test_run_figures_by_hand(rc):
    f = rc.run_figures("old", DIGIT.name, "intersect")
    # parsed: 9 items (index 7 unparsed); right on 0,1,3,4,6,8 -> 6
    assert (f.items, f.unparsed, f.parsed, f.correct, f.n) == (10, 1, 9, 6, 9)
    assert f.em == Fraction(6, 9)
    # |label-gold| over parsed: 0,0,1,0,0,1,0,0,1 -> 3
    assert f.mae == Fraction(3, 9)
    parsed = [i for i in range(10) if i != 7]
    r = stats.pearsonr([int(OLD[i]) for i in parsed], [GOLD[i] for i in parsed]).statistic
    assert f.pearson == pytest.approx(r, rel=1e-14)
    wrong = rc.run_figures("old", DIGIT.name, "wrong")
    assert (wrong.n, wrong.em) == (10, Fraction(6, 10))
    # under STRICT the two "3" outputs are unparsed as well
    s = rc.run_figures("old", STRICT.name, "intersect")
    assert (s.unparsed, s.correct) == (3, 5)


def test_edge_figures_by_hand(rc):
    e = rc.edge("old", "new", DIGIT.name, "intersect")
    # item 7 dropped (old unparsed). old right: 0,1,3,4,6,8
    # new right: 0,2,3,5,9 (7 dropped) -> both: 0,3; only_old: 1,4,6,8; only_new: 2,5,9; neither: none
    assert (e.cells.both, e.cells.only_old, e.cells.only_new, e.cells.neither) == (2, 4, 3, 0)
    assert e.value("regression_rate") == Fraction(4, 9)
    assert e.value("regression_share_of_old_correct") == Fraction(4, 6)
    assert e.value("backward_rate") == Fraction(3, 9)
    # labels differ on 1,2,4,5,6,8,9 (item 7 dropped) -> 7 of 9
    assert e.value("change_rate") == Fraction(7, 9)
    assert e.value("independent_regression_rate") == Fraction(6, 9) * (1 - Fraction(5, 9))
    assert e.value("independence_ratio") == Fraction(4, 9) / (Fraction(6, 9) * Fraction(4, 9))
    w = rc.edge("old", "new", DIGIT.name, "wrong")
    assert (w.cells.n, w.cells.only_new) == (10, 4)  # item 7: old unparsed = wrong, new right


def test_floor_figures_by_hand(rc):
    # Per ordered pair under intersect (old's "x" is unparsed, so pairs with old have 9 items, new/rep 10):
    #   regression: new->rep 0/10, rep->new 1/10 (item 6), old->new 4/9 (items 1, 4, 6, 8),
    #               new->old 3/9, old->rep 3/9, rep->old 3/9
    #   change:     new~rep 1/10 (item 6), old~new 7/9, old~rep 6/9
    fl = rc.floor(["new", "rep", "old"], DIGIT.name, "intersect")
    assert floor_value(fl, "floor.regression_min") == 0
    assert floor_value(fl, "floor.regression_max") == Fraction(4, 9)
    assert floor_value(fl, "floor.change_min") == Fraction(1, 10)
    assert floor_value(fl, "floor.change_max") == Fraction(7, 9)
    assert len(fl.pairs) == 6
    assert sorted(fl.change_against_others("old")) == [Fraction(6, 9), Fraction(7, 9)]
    # it is the floor command's own computation, not a second one
    labelled = [rc.labelled(n, DIGIT.name) for n in ("new", "rep", "old")]
    assert fl.to_json() == judge_floor(labelled).to_json()


def _ten_item_repeats(**flips):
    """Repeats on ten items with gold 1; each named run answers 0 on its ``flips`` items."""
    runs = {n: make_run(n, [1] * 10, ["0" if i in f else "1" for i in range(10)]) for n, f in flips.items()}
    return Recomputer(runs, GET).floor(list(runs), DIGIT.name, "intersect")


def test_produced_differently_is_the_floor_far_beyond_rule():
    from replicate.judge.floor import floor as judge_floor
    from replicate.verify.flags import _different_repeats

    # c vs a: items 0,1,2 (3/10), c vs b: items 0,2 (2/10); a vs b: item 1 (1/10): exactly twice, not beyond
    just_twice = _ten_item_repeats(a={0}, b={0, 1}, c={1, 2})
    assert list(_different_repeats([just_twice])) == []
    # c vs a: 0,2,3 (3/10), c vs b: 0,1,2,3 (4/10): the closest is 3/10 > 2 x 1/10
    beyond = _ten_item_repeats(a={0}, b={0, 1}, c={2, 3})
    (flag,) = _different_repeats([beyond])
    assert flag.kind == "produced_differently"
    assert flag.message.startswith("c differs from the other repeats on 30.00%-40.00% of labels while they differ from each other by 10.00%")
    # the same runs through 'replicate floor --main c': the same verdict
    labelled = [make_run(n, [1] * 10, ["0" if i in f else "1" for i in range(10)]).label_with(DIGIT)
                for n, f in (("a", {0}), ("b", {0, 1}), ("c", {2, 3}))]
    assert judge_floor(labelled[:2], main=labelled[2]).main.verdict == "far_beyond"


def _claims(claims, runs=("old", "new", "rep")):
    return parse_claims(
        {"study": {"title": "T"}, "runs": {r: [f"{r}.jsonl"] for r in runs}, "claims": claims},
        path="c.toml", parsers=[DIGIT.name, STRICT.name],
    )


def test_not_computable_says_why(rc):
    const = make_run("const", [1, 1, 1], ["1", "1", "2"])
    never = make_run("never", [0, 0, 0], ["1", "1", "1"])
    other = make_run("other", [0, 0, 0], ["0", "1", "1"])
    badgold = make_run("badgold", [1, 0, 0], ["0", "1", "1"])
    rc2 = Recomputer({"const": const, "never": never, "other": other, "badgold": badgold}, GET)
    cf = _claims(
        [
            {"id": "p", "metric": "pearson", "run": "const", "value": "0.5", "unit": "ratio"},
            {"id": "s", "metric": "regression_share_of_old_correct", "old": "never", "new": "other",
             "value": "1", "unit": "percent"},
            {"id": "g", "metric": "regression_rate", "old": "never", "new": "badgold", "value": "1", "unit": "percent"},
        ],
        runs=("const", "never", "other", "badgold"),
    )
    p, s, g = (rc2.compute(c, DIGIT.name) for c in cf.claims)
    assert p.value is None and p.why == "labels or gold are constant over the parsed items (or fewer than two)"
    assert s.value is None and s.why == "the old run has no correct labels (both + only_old = 0)"
    assert g.value is None and "gold grades disagree between runs on 1 shared item(s): item q0" in g.why


def test_verify_runs_verdicts_summary_and_gate(rc, registered):
    cf = _claims(
        [
            # 4/9 = 44.44%: matches "44.4"
            {"id": "reg", "metric": "regression_rate", "old": "old", "new": "new", "value": "44.4", "unit": "percent"},
            # EM of old: digit 6/9 = 0.667; strict 5/7 = 0.714
            {"id": "em", "metric": "em", "run": "old", "value": "0.67", "unit": "fraction"},
            {"id": "cnt", "metric": "unparsed", "run": "old", "value": "3", "unit": "count", "parser": STRICT.name},
        ]
    )
    runs = rc.runs
    v = verify_runs(cf, runs, parsers=[DIGIT.name, STRICT.name], date="2026-01-01")
    em = v.runs.results[1]
    assert em.verdict(DIGIT.name) is Verdict.match and em.verdict(STRICT.name) is Verdict.mismatch
    # explicit parsers override the claim's pin: the count is 1 under digit, 3 under strict
    cnt = v.runs.results[2]
    assert cnt.parsers == (DIGIT.name, STRICT.name)
    assert cnt.verdict(DIGIT.name) is Verdict.mismatch and cnt.verdict(STRICT.name) is Verdict.match
    assert v.runs.summary()[DIGIT.name] == {"match": 2, "mismatch": 1, "not_computable": 0}
    assert [r.claim.id for r in v.runs.failed] == ["cnt"]  # gated by the first parser given
    v2 = verify_runs(cf, runs, parsers=[STRICT.name, DIGIT.name], date="2026-01-01")
    assert [r.claim.id for r in v2.runs.failed] == ["reg", "em"]
    assert v2.summary_line() == (
        f"1 of 3 claims match under {STRICT.name}; 2 of 3 under {DIGIT.name}"
    )
    out = v.to_json()
    # under strict the "3" outputs are unparsed: 7 shared parsed items, 4 regressions
    assert out["claims"][0]["computed"] == {DIGIT.name: 4 / 9, STRICT.name: 4 / 7}
    assert out["claims"][0]["verdict"][DIGIT.name] == "match"
    assert out["claims"][2]["computed"] == {DIGIT.name: 1, STRICT.name: 3}
    assert out["summary"][STRICT.name] == {"match": 1, "mismatch": 2, "not_computable": 0}
    assert out["ok"] is False
