"""Claims over trials tables: parsing and validation (every problem at once, by claim id)."""

from __future__ import annotations

import pytest

from replicate.errors import BadInput
from replicate.printed import Printed
from replicate.verify.claims_file import parse_claims
from replicate.verify.matching import PrintedFlag


def _data(*claims: dict, study: dict | None = None, **extra) -> dict:
    out = {"trials": {"study": ["t.jsonl"]}, "claims": list(claims), **extra}
    if study is not None:
        out["study"] = study
    return out


def _claim(**kw) -> dict:
    base = {"id": "c", "metric": "items.p_plus", "trials": "study", "edge": "a:b", "benchmark": "X",
            "value": "12.4", "unit": "percent"}
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


def test_a_trials_study_alone_needs_no_runs_and_takes_study_settings():
    cf = parse_claims(_data(_claim(), study={"title": "T", "eps": "0.1", "seed": 7}), path="c.toml")
    assert cf.runs == {} and cf.claims == ()
    (c,) = cf.trials.claims
    assert cf.trials.tables == {"study": "t.jsonl"}
    assert c.printed == Printed.parse("12.4", "percent")
    assert (c.settings.eps, c.settings.seed, c.settings.alpha) == ("0.1", 7, 0.05)
    assert c.settings.given == {"eps", "seed"}
    assert c.by == "benchmark" and c.target == "a -> b, X"


def test_claim_settings_override_the_study_and_pooled_cells_have_no_benchmark():
    cf = parse_claims(_data(_claim(benchmark=None, eps=0.3), study={"eps": "0.1"}), path="c.toml")
    (c,) = cf.trials.claims
    assert c.settings.eps == "0.3" and c.by == "none" and c.target == "a -> b, all benchmarks pooled"


def test_flags_and_counts_parse():
    cf = parse_claims(_data(
        _claim(id="f", metric="screen.passes", edge=None, value="fail", unit="flag"),
        _claim(id="k", metric="items.improved", value="41", unit="count"),
        _claim(id="s", metric="items.improved", value="12.5", unit="percent"),
    ), path="c.toml")
    f, k, s = cf.trials.claims
    assert f.printed == PrintedFlag("fail", False) and k.printed.unit == "count" and s.printed.unit == "percent"


def test_judge_and_trial_claims_mix_in_one_file():
    data = _data(_claim(id="t"), {"id": "j", "metric": "em", "run": "r", "value": "50.0", "unit": "percent"},
                 runs={"r": ["r.jsonl"]})
    cf = parse_claims(data, path="c.toml")
    assert [c.id for c in cf.claims] == ["j"] and [c.id for c in cf.trials.claims] == ["t"]


def test_every_problem_is_reported_at_once_with_its_claim_id():
    data = _data(
        _claim(id="a", metric="items.p_plsu"),
        _claim(id="b", trials="studdy"),
        _claim(id="c", edge=None),
        _claim(id="d", metric="items.null_p95.p_plus"),
        _claim(id="e", metric="accuracy", edge=None, model="m", unit="count", value="3"),
        _claim(id="f", metric="screen.passes", edge=None, value="maybe", unit="flag"),
        _claim(id="g", value=12.4),
        _claim(id="h", eps="big", by="none"),
        _claim(id="a", bogus=1),
        replication={"other": "x.jsonl"},
    )
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    lines = str(info.value).splitlines()
    assert lines[0] == "c.toml: 12 problems in the claims file:"
    assert lines[1:] == [
        "[replication] 'other': no [trials] table of that name; tables: study",
        "claim 'a': unknown trial metric 'items.p_plsu' (did you mean 'items.p_plus'?); metrics: items.n, "
        "items.improved, items.regressed, items.changed, items.equivalent, items.inconclusive, items.p_plus, "
        "items.p_minus, items.p_chg, items.delta, items.delta_r, accuracy, accuracy.loose, screen.share, "
        "screen.informative_items, screen.n_items, screen.passes, costs.median_tokens, costs.edge_median_ratio, "
        "items.null_p95.p_plus, items.null_p95.p_minus, "
        "items.null_p95.p_chg",
        "claim 'b': unknown trials table 'studdy' (did you mean 'study'?); [trials] tables: study",
        "claim 'c': missing field 'edge' (metric 'items.p_plus' names an edge = \"A:B\" and a benchmark "
        "(none for the cell pooled over benchmarks))",
        "claim 'd': items.null_p95.p_plus depends on the permutation null's seed, which neither the claim nor "
        "[study] gives (add seed = N)",
        "claim 'e': unit 'count' does not fit metric 'accuracy'; use percent or fraction",
        "claim 'f': value 'maybe' of unit 'flag' must be pass or fail",
        "claim 'g': value must be a string as printed (write value = \"12.4\"), got float 12.4",
        "claim 'h': eps must be a number in (0, 1], got 'big'",
        "claim 'h': by = \"none\" pools the benchmarks: leave out 'benchmark'",
        "claim 'a': duplicate id (also claims[1])",
        "claim 'a': unknown field 'bogus'; allowed in a trial claim: id, where, text, metric, value, unit, "
        "trials, edge, benchmark, model, eps, alpha, ci, null, seed, by, low, high, threshold, tolerance",
    ]


def test_trials_table_shapes_are_checked():
    data = {"trials": {"a": ["x.jsonl", "y.jsonl"], "b": ["../up.jsonl"], "c": 3}, "claims": [_claim(trials="a")]}
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    text = str(info.value)
    assert "[trials] 'a': names 2 files; give one trials table per name" in text
    assert "[trials] 'b': paths must be relative to --root without '..': ../up.jsonl" in text
    assert "[trials] 'c': must be a list naming one trials table (a path)" in text


def test_replication_table_takes_a_path_or_trials_and_archive():
    cf = parse_claims(_data(_claim(), replication={"study": {"trials": "f/t.jsonl", "archive": "f/a.jsonl"}}),
                      path="c.toml")
    spec = cf.trials.replication["study"]
    assert (spec.trials, spec.archive) == ("f/t.jsonl", "f/a.jsonl")


def test_every_problem_of_a_replication_entry_is_named():
    data = _data(_claim(id="t"), replication={"study": {"trials": "f.jsonl", "archiv": "a.jsonl.gz"}})
    data["trials"]["two"] = ["t2.jsonl"]
    data["trials"]["three"] = ["t3.jsonl"]
    data["trials"]["four"] = ["t4.jsonl"]
    data["replication"].update(two=["f.jsonl"], three={"trials": ""}, four={"trials": "f.jsonl", "archive": 3})
    with pytest.raises(BadInput) as info:
        parse_claims(data, path="c.toml")
    assert str(info.value).splitlines()[1:] == [
        "[replication] 'study': unknown field 'archiv' (did you mean 'archive'?); allowed: trials, archive",
        "[replication] 'two': must be a path or {trials = \"...\", archive = \"...\"}",
        "[replication] 'three': trials must be the path of the fresh trials table",
        "[replication] 'four': archive must be a path",
    ]
    data["replication"] = {"study": {"trials": "../f.jsonl"}}
    del data["trials"]["two"], data["trials"]["three"], data["trials"]["four"]
    with pytest.raises(BadInput, match=r"\[replication\] 'study': paths must be relative to --root without '\.\.'"):
        parse_claims(data, path="c.toml")
