"""Parser audits on in-memory runs with two small parsers whose readings are known by hand."""

from __future__ import annotations

import re

import numpy as np
import pytest

from replicate.errors import UsageError
from replicate.judge.audit import audit, audit_file, trim
from replicate.judge.model import Run
from replicate.parsing import Parser
from support.ci import used


def _first(text):
    m = re.search(r"[0-3]", text)
    return None if m is None else int(m.group())


def _strict(text):
    m = re.search(r"score:\s*([0-3])\b", text, re.I)
    return None if m is None else int(m.group(1))


FIRST = Parser("toy-first@1", "first digit 0-3", _first)
STRICT = Parser("toy-strict@1", "'score: N' only", _strict)


def _raw(name, outputs, gold, keys=None):
    keys = keys or [f"q{i}\x1fd{i}" for i in range(len(outputs))]
    return Run(name, np.array(keys, dtype=object), np.array(gold, dtype=np.int16), tuple(outputs), files=())


OUTS = ["score: 2", "2", "1 then score: 3", "nothing", "score: 0", None, "3"]
GOLD = [2, 2, 3, 0, 0, 1, 1]
# first:  2, 2, 1, -, 0, -, 3      strict: 2, -, 3, -, 0, -, -


def test_audit_file_by_hand():
    fa = audit_file(_raw("m", OUTS, GOLD), [FIRST, STRICT])
    first, strict = fa.parsers
    assert (first.parsed, first.unparsed, first.correct) == (5, 2, 3)  # right: items 0, 1, 4
    assert (strict.parsed, strict.unparsed, strict.correct) == (3, 4, 3)  # right: items 0, 2, 4
    assert first.em == 3 / 5 and strict.em == 1.0
    assert fa.labels_differ == 3  # items 1 (2 vs -), 2 (1 vs 3), 6 (3 vs -)
    assert fa.pairwise_differ == (("toy-first@1", "toy-strict@1", 3),)
    pats = [(dict(p.labels), p.count) for p in fa.patterns]
    assert pats == [
        ({"toy-first@1": 1, "toy-strict@1": 3}, 1),
        ({"toy-first@1": 2, "toy-strict@1": None}, 1),
        ({"toy-first@1": 3, "toy-strict@1": None}, 1),
    ]
    assert [e.to_json() for e in fa.examples][0] == {
        "key": "q2 / d2",
        "gold": 3,
        "output": "1 then score: 3",
        "labels": {"toy-first@1": 1, "toy-strict@1": 3},
    }
    assert len(fa.examples) == 3


def test_audit_file_under_wrong_policy():
    fa = audit_file(_raw("m", OUTS, GOLD), [FIRST, STRICT], policy="wrong")
    assert [t.em for t in fa.parsers] == [3 / 7, 3 / 7]


def test_examples_cover_each_pattern_first_then_file_order():
    outs = ["2"] * 4 + ["1 score: 3"] + ["3"]
    run = _raw("m", outs, [2] * 6)
    fa = audit_file(run, [FIRST, STRICT], examples=2)
    # most frequent pattern (2 vs unparsed, 4 items) first, then the next pattern
    assert [e.key for e in fa.examples] == ["q0 / d0", "q4 / d4"]
    fa = audit_file(run, [FIRST, STRICT], examples=4)
    assert [e.key for e in fa.examples] == ["q0 / d0", "q4 / d4", "q5 / d5", "q1 / d1"]
    assert audit_file(run, [FIRST, STRICT], examples=0).examples == ()


def test_trim_keeps_head_and_tail():
    text = "start " + "blah " * 100 + "Final score: 2"
    out = trim(text, 60)
    assert len(out) == 60
    assert out.startswith("start blah") and out.endswith("Final score: 2") and " … " in out
    assert trim("a\n\n  b\tc", 60) == "a b c"
    assert trim(None) is None
    with pytest.raises(ValueError, match="width must be at least 20; got 5"):
        trim("x", 5)


def test_edge_figures_move_between_parsers():
    keys = ["a", "b", "c", "d"]
    gold = [2, 2, 1, 0]
    old = _raw("old", ["score: 2", "score: 2", "1", "0"], gold, keys)
    new = _raw("new", ["2 score: 1", "score: 2", "score: 1", "3"], gold, keys)
    res = audit([old, new], [FIRST, STRICT], edge=("old", "new"))
    first, strict = res.edge.comparisons
    # first-digit: old 2,2,1,0 all right; new 2,2,1,3 -> only d regresses
    assert (first.cells.both, first.cells.only_old) == (3, 1)
    # strict: old 2,2,-,- ; new 1,2,1,- -> over a,b: a regresses
    assert (strict.cells.n, strict.cells.only_old) == (2, 1)
    moves = res.edge.moves()
    assert moves["regression_rate"]["values"] == {"toy-first@1": 0.25, "toy-strict@1": 0.5}
    assert moves["regression_rate"]["delta"] == {"toy-strict@1": 0.25}
    assert moves["n"]["delta"] == {"toy-strict@1": -2}
    js = res.to_json()
    assert [f["path"] for f in js["files"]] == ["old", "new"]
    assert set(js["files"][0]["parsers"]["toy-first@1"]) == {"parsed", "unparsed", "unparsed_rate", "correct", "em"}
    assert js["edge"]["parsers"]["toy-strict@1"]["regression_rate"] == 0.5


def test_audit_usage_errors():
    run = _raw("m", OUTS, GOLD)
    with pytest.raises(UsageError, match=r"at least two parsers \(parsers A parsers B\); got 1"):
        audit([run], [FIRST])
    with pytest.raises(UsageError, match="repeated: toy-first@1"):
        audit([run], [FIRST, FIRST])
    with pytest.raises(UsageError, match="edge names unknown run\\(s\\) 'zz'; runs: m"):
        audit([run], [FIRST, STRICT], edge=("m", "zz"))
    exam = Run("e", run.keys, run.gold, run.outputs, (), labels=np.zeros(7, np.int8))
    with pytest.raises(UsageError, match="holds labels, not raw outputs"):
        audit([exam], [FIRST, STRICT])


def test_real_umbrela_parsers_disagree_on_known_shapes():
    from replicate.parsing import PARSERS

    strict, fallback = PARSERS.get_many(["umbrela-strict@1", "umbrela-fallback@1"])
    run = _raw("m", ["##final score: 2", "1", "Final score: 2.5"], [2, 1, 2])
    fa = audit_file(run, [strict, fallback])
    by = {t.parser: t for t in fa.parsers}
    # bare "1" is read only by the fallback; "2.5" is unparsed by strict, read as 2 by fallback
    assert by["umbrela-strict@1"].parsed == 1 and by["umbrela-fallback@1"].parsed == 3
    assert fa.labels_differ == 2


def test_markdown_escapes_pipes_in_examples():
    from replicate.judge.render.audit import audit_text

    run = _raw("m", ["a | b 1 score: 2", "2"], [2, 2])
    text = audit_text(audit([run], [FIRST, STRICT]), "markdown")
    assert " a \\| b 1 score: 2 " in text
    assert "a | b" not in text
    assert "## m (2 items)" in text


def test_every_rate_of_an_audit_gets_a_bootstrap_interval_by_query():
    from replicate.judge.uncertainty import Uncertainty
    from replicate.stats.bootstrap import Clusters
    from replicate.stats.shares import bootstrap_shares

    keys = [f"q{i % 6}\x1fd{i}" for i in range(len(OUTS))]  # 6 clusters: enough for an interval
    run = _raw("m", OUTS, GOLD, keys)
    st = Uncertainty(replicates=200, seed=4)
    res = audit([run, _raw("n", OUTS[::-1], GOLD, keys)], [FIRST, STRICT], edge=("m", "n"), uncertainty=st)
    js = res.to_json()
    f0 = js["files"][0]
    first = f0["parsers"]["toy-first@1"]
    assert first["unparsed_rate"] == 2 / 7 and first["em"] == 3 / 5
    # EM of the first-digit parser: correct over parsed items, resampled by query (q0 ... q5)
    parsed = np.array([o is not None and _first(o) is not None for o in OUTS])
    correct = parsed & (np.array([_first(o) if o and _first(o) is not None else -1 for o in OUTS]) == GOLD)
    direct = bootstrap_shares(correct[None], parsed[None], clusters=Clusters.from_keys(keys, field=0, name="query_id", sep="\x1f"), n_resamples=200, seed=4)[0]
    assert (first["interval"]["em"]["low"], first["interval"]["em"]["high"]) == (direct.low, direct.high)
    assert first["interval"]["em"]["cluster"] == "query_id" and first["interval"]["em"]["clusters"] == 6
    assert f0["labels_differ_rate"] == 3 / 7 and set(f0["interval"]) == {"labels_differ_rate"}
    assert f0["pairwise_differ"][0]["interval"]["differ_rate"]["replicates"] == 200
    assert js["uncertainty"]["seed"] == 4
    edge = js["edge"]["parsers"]["toy-strict@1"]
    assert used(edge)["regression_rate"]["method"] == "cluster-bootstrap-t-percentile"


def test_audit_text_shows_the_intervals_and_warns_on_a_small_edge():
    from replicate.judge.render.audit import audit_text
    from replicate.judge.uncertainty import Uncertainty

    keys = [f"q{i % 6}\x1fd{i}" for i in range(len(OUTS))]  # 6 clusters: enough for an interval
    runs = [_raw("m", OUTS, GOLD, keys), _raw("n", OUTS[::-1], GOLD, keys)]
    res = audit(runs, [FIRST, STRICT], edge=("m", "n"), uncertainty=Uncertainty(replicates=200, seed=4))
    text = audit_text(res, "table")
    em = res.files[0].parsers[0].interval["em"]
    assert f"60.0% [{100 * em.low:.1f}%, {100 * em.high:.1f}%]" in text  # EM 3/5 beside its interval
    # the edge has 3 compared items under the first-digit parser, 1 under the strict one (min_items 100)
    assert "Warning: compared on fewer than --min-items 100 items under toy-first@1 (n = " in text
    assert "toy-strict@1 (n = " in text and "read the intervals, not the point values" in text
    quiet = audit(runs, [FIRST, STRICT], edge=("m", "n"), uncertainty=Uncertainty(replicates=50, min_items=0))
    assert "Warning" not in audit_text(quiet, "table")


def _clustered_pair(order=None):
    rng = np.random.default_rng(8)
    n = 60
    keys = [f"q{i % 6}\x1fd{i}" for i in range(n)]
    gold = rng.integers(0, 4, n).tolist()
    shapes = ["score: {g}", "{g}", "{g} then score: {h}", "nothing"]

    def outs():
        return [shapes[s].format(g=g if rng.random() < 0.7 else (g + 1) % 4, h=(g + 2) % 4)
                for s, g in zip(rng.integers(0, 4, n), gold)]

    old, new = outs(), outs()
    idx = list(range(n)) if order is None else order
    return (_raw("m", old, gold, keys),
            _raw("n", [new[i] for i in idx], [gold[i] for i in idx], [keys[i] for i in idx]))


def test_differences_between_parsers_get_joint_bootstrap_intervals():
    from replicate.judge.render.audit import audit_text
    from replicate.judge.uncertainty import Uncertainty
    from replicate.stats.bootstrap import Clusters
    from replicate.stats.differences import share_differences

    old, new = _clustered_pair()
    st = Uncertainty(replicates=300, seed=2)
    res = audit([old, new], [FIRST, STRICT], edge=("m", "n"), uncertainty=st)
    js = res.to_json()
    (d,) = res.files[0].deltas
    t0, t1 = res.files[0].parsers
    assert (d.parser, d.reference) == ("toy-strict@1", "toy-first@1")
    assert d.em == t1.em - t0.em and d.unparsed_rate == t1.unparsed_rate - t0.unparsed_rate
    # the same call on the parsers' labels by hand: unparsed share over every output, one draw for both parsers
    labels = np.array([[-1 if (p(o) if o else None) is None else p(o) for o in old.outputs] for p in (_first, _strict)])
    clusters = Clusters.from_keys(list(old.keys), field=0, name="query_id", sep="\x1f")
    (direct,) = share_differences(labels < 0, np.ones_like(labels, bool), clusters=clusters, n_resamples=300, seed=2)
    assert d.interval["unparsed_rate"] == direct
    row = js["files"][0]["differences"]["toy-strict@1"]
    assert row["reference"] == "toy-first@1" and row["interval"]["em"]["cluster"] == "query_id"
    edge = js["edge"]["differences"]["toy-strict@1"]
    assert edge["regression_rate"] == js["edge"]["moves"]["regression_rate"]["delta"]["toy-strict@1"]
    iv = edge["interval"]["regression_rate"]
    assert (iv["method"], iv["replicates"], iv["clusters"]) == ("cluster-bootstrap-percentile", 300, 6)
    text = audit_text(res, "table")
    assert f"toy-strict@1 - toy-first@1: unparsed {100 * d.unparsed_rate:+.2f} pp [" in text
    low, high = iv["low"], iv["high"]
    assert f"{100 * edge['regression_rate']:+.2f} pp [{100 * low:+.1f}, {100 * high:+.1f} pp]" in text
    # the new run's items in another order: alignment pairs each item with itself, so the same intervals
    shuffled = _clustered_pair(order=np.random.default_rng(1).permutation(60).tolist())
    again = audit(list(shuffled), [FIRST, STRICT], edge=("m", "n"), uncertainty=st)
    assert again.edge.delta_intervals == res.edge.delta_intervals


def test_differences_without_bootstrap_carry_no_interval():
    old, new = _clustered_pair()
    js = audit([old, new], [FIRST, STRICT], edge=("m", "n")).to_json()
    assert "interval" not in js["files"][0]["differences"]["toy-strict@1"]
    assert "interval" not in js["edge"]["differences"]["toy-strict@1"]
