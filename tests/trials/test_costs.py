"""``analyse_costs`` against a straightforward computation: plain loops over the rows and numpy on lists."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from replicate.errors import BadInput
from replicate.stats.classify import CLASSES
from replicate.trials.costs import analyse_costs
from replicate.trials.engine import _cell_rng, analyse_items, per_item_rows
from replicate.trials.load import read_trials
from replicate.trials.prices import Price, Prices
from support.synth.trials import add_usage, synthetic_rows, write_jsonl

N_ITEMS = 30
KINDS = ("prompt", "completion", "reasoning", "total")


def _rows(null_rate=0.1):
    p = np.linspace(0.15, 0.85, N_ITEMS)
    q = p.copy()
    q[:8] = np.clip(q[:8] + 0.6, 0, 1)
    q[8:14] = np.clip(q[8:14] - 0.6, 0, 1)
    rows = synthetic_rows({"old": p, "new": q}, k=20, seed=4, benchmark=["x"] * 15 + ["y"] * 15,
                          api_error_rate=0.05, metadata={"group": [f"g{i % 5}" for i in range(N_ITEMS)]})
    return add_usage(rows, completion={"old": 80, "new": 140}, reasoning={"new": 30}, null_rate=null_rate, seed=5)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("costs") / "t.jsonl"
    write_jsonl(_rows(), path)
    return read_trials(path)


def _value(r, kind):
    if kind == "total":
        return None if r["prompt_tokens"] is None or r["completion_tokens"] is None else (
            r["prompt_tokens"] + r["completion_tokens"])
    return r[f"{kind}_tokens"]


def _reference(rows, kind):
    """Per (model, benchmark): values per trial; per (model, benchmark, item): the values of its trials."""
    per_trial, per_item, nulls = defaultdict(list), defaultdict(list), defaultdict(int)
    for r in rows:
        if r["category"] == "api_error":
            continue
        v = _value(r, kind)
        key = (r["model"], r["benchmark"])
        per_item.setdefault((*key, r["item"]), [])
        if v is None:
            nulls[key] += 1
        else:
            per_trial[key].append(v)
            per_item[(*key, r["item"])].append(v)
    return per_trial, per_item, nulls


def test_model_distributions_are_numpy_over_the_rows(table):
    rows = _rows()
    result = analyse_costs(table, n_resamples=0)
    assert {(m.model, m.benchmark) for m in result.models} == {(m, b) for m in ("old", "new") for b in "xy"}
    for kind in KINDS:
        per_trial, per_item, nulls = _reference(rows, kind)
        for m in result.models:
            key = (m.model, m.benchmark)
            d = m.per_trial[kind]
            v = np.array(per_trial[key], dtype=float)
            assert d.n == v.size and d.null == nulls[key]
            if v.size == 0:  # old reports no reasoning: every figure undefined, not 0
                assert kind == "reasoning" and m.model == "old" and d.median is None and d.mean is None
                continue
            assert d.mean == pytest.approx(v.mean(), rel=1e-12)
            assert (d.median, d.p90, d.p99, d.max) == pytest.approx(
                (np.median(v), np.percentile(v, 90), np.percentile(v, 99), v.max()), rel=1e-12)
            means = [np.mean(vs) for (mm, b, _), vs in per_item.items() if (mm, b) == key and vs]
            lacking = sum(1 for (mm, b, _), vs in per_item.items() if (mm, b) == key and not vs)
            assert m.per_item[kind].n == len(means) and m.per_item[kind].null == lacking
            assert m.per_item[kind].median == pytest.approx(np.median(means), rel=1e-12)
            assert m.per_item[kind].p90 == pytest.approx(np.percentile(means, 90), rel=1e-12)


def test_null_usage_is_counted_never_zero(table):
    result = analyse_costs(table, n_resamples=0)
    old_x = next(m for m in result.models if (m.model, m.benchmark) == ("old", "x"))
    assert old_x.per_trial["reasoning"].n == 0 and old_x.per_trial["reasoning"].null == old_x.trials
    assert old_x.per_trial["reasoning"].null_share == 1.0
    assert 0 < old_x.per_trial["total"].null < old_x.trials  # the 10% of trials without usage
    assert old_x.api_errors > 0


def _item_means(rows, kind):
    acc = defaultdict(list)
    for r in rows:
        v = _value(r, kind)
        if r["category"] != "api_error" and v is not None:
            acc[(r["model"], r["benchmark"], r["item"])].append(v)
    return {k: float(np.mean(v)) for k, v in acc.items()}


@pytest.mark.parametrize("cluster", [None, "group"])
def test_edge_figures_are_numpy_over_items(table, cluster):
    rows = _rows()
    B = 300
    result = analyse_costs(table, [("old", "new")], n_resamples=B, seed=9, cluster=cluster)
    items = analyse_items(table, [("old", "new")], n_null=0, seed=9)
    cls = {(r["benchmark"], r["item"]): r["class"] for r in per_item_rows(items)}
    group = {r["item"]: r["group"] for r in rows}
    assert [e.benchmark for e in result.edges] == ["x", "y"]
    for e in result.edges:
        keys = sorted(k for k in cls if k[0] == e.benchmark)
        assert e.items == len(keys)
        for kind in KINDS:
            means = _item_means(rows, kind)
            s = np.array([means.get(("old", b, i), np.nan) for b, i in keys])
            t = np.array([means.get(("new", b, i), np.nan) for b, i in keys])
            ok = ~np.isnan(s) & ~np.isnan(t)
            c = e.changes[kind]
            assert c.paired == ok.sum() and c.no_usage == (~ok).sum()
            if not ok.any():
                assert kind == "reasoning" and c.median_change is None and c.per_correct_source is None
                continue
            d = (t - s)[ok]
            r = t[ok & (s > 0)] / s[ok & (s > 0)]
            assert c.median_change == pytest.approx(np.median(d), rel=1e-12)
            assert c.median_ratio == pytest.approx(np.median(r), rel=1e-12)
            assert (c.more, c.less, c.same) == ((d > 0).sum(), (d < 0).sum(), (d == 0).sum())
            # tokens per correct: the cell's trials reporting the kind, over the correct ones among them
            for side, model in (("source", "old"), ("target", "new")):
                used = [(r_, _value(r_, kind)) for r_ in rows if r_["model"] == model
                        and (r_["benchmark"], r_["item"]) in set(keys) and r_["category"] != "api_error"
                        and _value(r_, kind) is not None]
                want = sum(v for _, v in used) / sum(r_["category"] == "correct" for r_, _ in used)
                assert getattr(c, f"per_correct_{side}") == pytest.approx(want, rel=1e-12)
            for name in CLASSES:
                sel = np.array([cls[key] == name for key in keys])
                want = np.median((t - s)[ok & sel]) if (ok & sel).any() else None
                assert c.by_class[name].items == sel.sum()
                assert c.by_class[name].median_change == (None if want is None else pytest.approx(want, rel=1e-12))
            # the interval: a plain loop of draws from the same stream, numpy's median and percentiles
            codes = [group[i] if cluster else i for _, i in keys]
            labels = sorted(set(codes))
            members = [np.flatnonzero(np.array(codes) == g) for g in labels]
            rng = _cell_rng(9, "costs", "old", "new", e.benchmark)
            dd = np.where(ok, t - s, np.nan)
            inconclusive = np.array([cls[key] == "inconclusive" for key in keys])
            reps, class_reps = [], []
            for _ in range(B):
                drawn = np.concatenate([members[g] for g in rng.integers(len(labels), size=len(labels))])
                for out, sel in ((reps, np.ones(len(keys), bool)), (class_reps, inconclusive)):
                    x = dd[drawn][sel[drawn]]
                    x = x[~np.isnan(x)]
                    out.append(np.median(x) if x.size else np.nan)
            for got, want in ((c.intervals["median_change"], reps),
                              (c.by_class["inconclusive"].intervals["median_change"], class_reps)):
                want = np.array(want)
                lo, hi = np.percentile(want[~np.isnan(want)], [2.5, 97.5])
                assert (got.low, got.high) == pytest.approx((lo, hi), rel=1e-12)
                assert got.undefined == int(np.isnan(want).sum())
                assert got.seed == 9 and got.replicates == B and got.cluster == cluster


def test_classes_are_those_of_items_with_the_same_settings(table):
    result = analyse_costs(table, [("old", "new")], n_resamples=0, classification={"eps": "0.3"})
    items = analyse_items(table, [("old", "new")], n_null=0, eps="0.3")
    for e, cell in zip(result.edges, items.cells):
        want = {n: int((cell.rows.cls == k).sum()) for k, n in enumerate(CLASSES)}
        assert {n: e.changes["total"].by_class[n].items for n in CLASSES} == want
    assert result.classification == {"eps": "0.3", "alpha": 0.05, "ci": "newcombe"}
    assert sum(e.changes["total"].by_class["improved"].items for e in result.edges) > 0
    assert sum(e.changes["total"].by_class["regressed"].items for e in result.edges) > 0


def test_pooled_and_lookups(table):
    result = analyse_costs(table, [("old", "new")], by="none", n_resamples=0)
    assert [(m.model, m.benchmark) for m in result.models] == [("new", None), ("old", None)]
    rows = _rows()
    v = [_value(r, "total") for r in rows if r["model"] == "new" and r["category"] != "api_error"]
    assert result.median_tokens("new", None, "total") == np.median([x for x in v if x is not None])
    assert result.edge_median_ratio("old:new", None, "total") == result.edges[0].changes["total"].median_ratio
    with pytest.raises(KeyError):
        result.median_tokens("new", "x", "total")


def test_prices_turn_tokens_into_money(table):
    prices = Prices("a price page", "2026-11-30", "USD", {"old": Price(1.0, 4.0), "new": Price(2.0, 8.0, 20.0)})
    result = analyse_costs(table, [("old", "new")], prices=prices, n_resamples=0)
    assert result.kinds[-1] == "cost"
    rows = _rows()
    for m in result.models:
        want = []
        for r in rows:
            if (r["model"], r["benchmark"]) != (m.model, m.benchmark) or r["category"] == "api_error":
                continue
            p, c, z = r["prompt_tokens"], r["completion_tokens"], r["reasoning_tokens"]
            if m.model == "old" and p is not None:  # no reasoning price: completion at the output price
                want.append((p * 1.0 + c * 4.0) / 1e6)
            elif m.model == "new" and p is not None and z is not None:
                want.append((p * 2.0 + (c - z) * 8.0 + z * 20.0) / 1e6)
        assert m.per_trial["cost"].n == len(want)
        assert m.per_trial["cost"].median == pytest.approx(np.median(want), rel=1e-12)


def test_unpriced_model_is_warned_and_null(table):
    from replicate.diagnostics import Diagnostics

    diag = Diagnostics()
    result = analyse_costs(table, prices=Prices("p", "2026-11-30", "USD", {"old": Price(1.0, 1.0)}),
                           n_resamples=0, diagnostics=diag)
    assert result.unpriced == ("new",)
    assert any(w.code == "unpriced" for w in diag.warnings)
    new = next(m for m in result.models if m.model == "new")
    assert new.per_trial["cost"].n == 0 and new.per_trial["cost"].median is None


def test_no_usage_reports_no_figures(tmp_path):
    rows = synthetic_rows({"a": [0.5] * 4, "b": [0.6] * 4}, k=3)
    write_jsonl(rows, tmp_path / "t.jsonl")
    result = analyse_costs(read_trials(tmp_path / "t.jsonl"), [("a", "b")])
    assert not result.usage_reported and result.models == () and result.edges == ()
    assert result.to_json()["reason"].startswith("no non-error trial reports token usage")


@pytest.mark.parametrize(("value", "words"), [
    (-3, "column 'completion_tokens' must be >= 0, got -3"),
    (2.5, "column 'completion_tokens' is not an integer: 2.5"),
    ("twelve", "column 'completion_tokens' is not an integer: 'twelve'"),
    ([12], r"column 'completion_tokens' is not an integer: \[12\]"),
    (2**60, "column 'completion_tokens' is not a plausible token count: 1152921504606846976"),
    (True, "column 'completion_tokens' is not an integer: True"),
])
def test_bad_counts_name_the_line(tmp_path, value, words):
    rows = add_usage(synthetic_rows({"a": [0.5] * 3}, k=2), completion={"a": 10})
    rows[3]["completion_tokens"] = value
    write_jsonl(rows, tmp_path / "t.jsonl")
    with pytest.raises(BadInput, match=f"t.jsonl:4: {words}"):
        analyse_costs(read_trials(tmp_path / "t.jsonl"))


@pytest.mark.parametrize("value", [12.0, "12", " 12 "])
def test_integral_float_and_text_are_read_as_the_count(tmp_path, value):
    rows = add_usage(synthetic_rows({"a": [0.5] * 3}, k=2), completion={"a": 10})
    rows[0]["completion_tokens"] = value
    for r in rows[1:]:
        r["completion_tokens"] = 1
    write_jsonl(rows, tmp_path / "t.jsonl")
    m = analyse_costs(read_trials(tmp_path / "t.jsonl")).models[0]
    assert m.per_trial["completion"].max == 12


def test_usage_on_an_api_error_and_reasoning_beyond_completion_are_bad_input(tmp_path):
    rows = add_usage(synthetic_rows({"a": [0.5] * 3}, k=2), completion={"a": 10}, reasoning={"a": 3})
    bad = [dict(rows[2], category="api_error")]
    write_jsonl(rows[:2] + bad + rows[3:], tmp_path / "e.jsonl")
    with pytest.raises(BadInput, match="e.jsonl:3: an api_error trial reports usage"):
        analyse_costs(read_trials(tmp_path / "e.jsonl"))
    over = dict(rows[1], reasoning_tokens=rows[1]["completion_tokens"] + 1)
    write_jsonl([rows[0], over] + rows[2:], tmp_path / "r.jsonl")
    with pytest.raises(BadInput, match=r"r.jsonl:2: reasoning_tokens \(\d+\) exceeds completion_tokens"):
        analyse_costs(read_trials(tmp_path / "r.jsonl"))
