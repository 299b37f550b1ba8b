"""Claims files: parsing, and validation that reports every problem at once with its claim id."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from replicate.errors import BadInput
from replicate.verify.claims_file import load_claims, parse_claims

PARSERS = ["umbrela-fallback@1", "umbrela-strict@1"]

GOOD = """\
[study]
title = "A study"
reference = "arXiv:0000.00000"

[runs]
"old" = ["results/old.jsonl", "results_2020/old.jsonl"]
"new" = "results/new.jsonl"
"rep" = ["results/rep.jsonl"]

[[claims]]
id = "reg"
where = "Section 4.2"
text = "losing over a quarter (28.0%)"
metric = "regression_rate"
old = "old"
new = "new"
value = "28.0"
unit = "percent"

[[claims]]
id = "em-old"
metric = "em"
run = "old"
value = "0.581"
unit = "fraction"
parser = "umbrela-strict@1"
unparsed = "wrong"

[[claims]]
id = "floor"
metric = "floor.regression_max"
runs = ["new", "rep"]
value = "2.20%"
unit = "percent"

[[claims]]
id = "both"
metric = "cells.both"
old = "old"
new = "new"
value = "6,252"
unit = "count"
"""


def test_good_file_parses(tmp_path):
    path = tmp_path / "claims.toml"
    path.write_text(GOOD)
    cf = load_claims(path, parsers=PARSERS)
    assert cf.study.title == "A study" and cf.study.commit is None
    assert cf.runs == {
        "old": ("results/old.jsonl", "results_2020/old.jsonl"),
        "new": ("results/new.jsonl",),
        "rep": ("results/rep.jsonl",),
    }
    reg, em, floor, both = cf.claims
    assert (reg.scope, reg.target, reg.policy, reg.parser) == ("edge", "old -> new", "intersect", None)
    assert reg.printed.value == Decimal("28.0") and reg.printed.places == 1
    assert (em.scope, em.run, em.parser, em.policy) == ("run", "old", "umbrela-strict@1", "wrong")
    assert (floor.scope, floor.runs, floor.run_names) == ("floor", ("new", "rep"), ("new", "rep"))
    assert floor.printed.value == Decimal("2.20") and floor.printed.places == 2
    assert both.printed.value == Decimal(6252) and both.printed.unit == "count"
    assert cf.claim("both") is both
    assert [c.position for c in cf.claims] == [1, 2, 3, 4]


BAD = {
    "study": {"title": "t", "year": 2025},
    "runs": {"a": ["x.jsonl"], "b": ["y.jsonl"], "c": [], "d": ["../escape.jsonl"]},
    "claims": [
        {"id": "c1", "metric": "regresion_rate", "old": "a", "new": "b", "value": "28.0", "unit": "percent"},
        {"id": "c2", "metric": "em", "run": "zz", "value": 28.0, "unit": "percent"},
        {"metric": "n", "run": "a", "value": "10", "unit": "count"},
        {"id": "c4", "metric": "em", "run": "a", "value": "28.0", "unit": "percnt"},
        {"id": "c5", "metric": "cells.both", "old": "a", "new": "b", "value": "12.0", "unit": "count"},
        {"id": "c6", "metric": "regression_rate", "old": "a", "value": "1", "unit": "ratio", "parser": "umbrela-fallbak@1"},
        {"id": "c7", "metric": "floor.change_min", "runs": ["a"], "value": "1", "unit": "percent", "unparsed": "drop"},
        {"id": "c1", "metric": "em", "old": "a", "new": "b", "value": "1", "unit": "percent", "vlaue": "2"},
        {"id": "c9", "metric": "em", "run": "a", "value": "28.0%", "unit": "fraction"},
    ],
}

EXPECTED = """\
claims.toml: 18 problems in the claims file:
[study]: unknown field 'year'; allowed: title, reference, release, commit, parser, eps, alpha, ci, null, seed, by, low, high, threshold, tolerance
[runs] run 'c': expected a path or a non-empty list of paths, got []
[runs] 'd': paths must be relative to --root without '..': ../escape.jsonl
claim 'c1': unknown metric 'regresion_rate' (did you mean 'regression_rate'?); metrics: n, em, mae, pearson, unparsed, cells.both, cells.only_old, cells.only_new, cells.neither, em_old, em_new, accuracy_difference, regression_rate, regression_share_of_old_correct, backward_rate, change_rate, independent_regression_rate, independence_ratio, label_agreement, floor.regression_min, floor.regression_max, floor.change_min, floor.change_max, agreement.cohen_kappa, agreement.scott_pi, agreement.krippendorff_alpha, agreement.kendall_tau, agreement.spearman
claim 'c2': value must be a string as printed (write value = "28.0"), got float 28.0
claim 'c2': unknown run 'zz' in run; runs: a, b, c, d
claims[3]: missing field 'id'
claim 'c4': unknown unit 'percnt'; units: percent, fraction, count, ratio
claim 'c5': value '12.0' of unit 'count' must be a whole number >= 0
claim 'c6': unit 'ratio' does not fit metric 'regression_rate'; use percent or fraction
claim 'c6': unknown parser 'umbrela-fallbak@1' (did you mean 'umbrela-fallback@1'?); parsers: umbrela-fallback@1, umbrela-strict@1
claim 'c6': missing field 'new' (an edge names old and new)
claim 'c7': unknown unparsed policy 'drop'; policies: intersect, wrong
claim 'c7': runs must be a list of at least two repeat runs
claim 'c1': unknown field 'vlaue' (did you mean 'value'?); allowed: id, where, text, metric, value, unit, run, old, new, runs, parser, unparsed
claim 'c1': duplicate id (also claims[1])
claim 'c1': metric 'em' does not take 'old'/'new'; it names one run (run = "NAME")
claim 'c9': value '28.0%' ends in '%' but unit is 'fraction'"""


def test_every_problem_is_reported_at_once_with_its_claim_id():
    with pytest.raises(BadInput) as info:
        parse_claims(BAD, path="claims.toml", parsers=PARSERS)
    assert str(info.value) == EXPECTED


@pytest.mark.parametrize(
    "claim,message",
    [
        ({"metric": "em", "value": "1", "unit": "percent"}, "claim 'x': missing one run (run = \"NAME\")"),
        ({"metric": "n", "value": "1", "unit": "count"},
         "claim 'x': missing one run (run = \"NAME\") or an edge (old = \"A\", new = \"B\")"),
        ({"metric": "em", "run": "a", "old": "a", "value": "1", "unit": "percent"},
         "claim 'x': metric 'em' does not take 'old'/'new'"),
        ({"metric": "regression_rate", "old": "a", "new": "a", "value": "1", "unit": "percent"},
         "claim 'x': old and new are the same run 'a'"),
        ({"metric": "floor.regression_min", "runs": ["a", "a"], "value": "1", "unit": "percent"},
         "claim 'x': runs lists a run twice"),
        ({"metric": "regression_rate", "runs": ["a", "b"], "value": "1", "unit": "percent"},
         "claim 'x': metric 'regression_rate' does not take 'runs'"),
        ({"metric": "em", "run": "a", "value": "abc", "unit": "percent"},
         "claim 'x': value 'abc' is not a number as printed"),
        ({"metric": "em", "run": "a", "value": "1,00", "unit": "percent"},
         "claim 'x': value '1,00' is not a number as printed"),
        ({"metric": "mae", "run": "a", "value": "0.5", "unit": "percent"},
         "claim 'x': unit 'percent' does not fit metric 'mae'; use ratio"),
        ({"metric": "unparsed", "run": "a", "value": "1.5", "unit": "count"},
         "claim 'x': value '1.5' of unit 'count' must be a whole number >= 0"),
    ],
)
def test_single_problems(claim, message):
    data = {"runs": {"a": ["a.jsonl"], "b": ["b.jsonl"]}, "claims": [{"id": "x", **claim}]}
    with pytest.raises(BadInput, match=re.escape(message)):
        parse_claims(data, path="c.toml", parsers=PARSERS)


def test_file_level_problems():
    with pytest.raises(BadInput) as info:
        parse_claims({"study": "t", "claim": []}, path="c.toml")
    assert str(info.value) == (
        "c.toml: 4 problems in the claims file:\n"
        "unknown table [claim] (did you mean 'claims'?); allowed: study, runs, claims, fields, trials, replication, gold, trec_runs\n"
        "[study]: must be a table\n"
        "[runs]: missing table naming each run and its files\n"
        "no [[claims]]: nothing to verify"
    )


def test_toml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[study]\ntitle = "x"\n[[claims]]\nid = \n')
    with pytest.raises(BadInput, match=r"c\.toml:4: not valid TOML: Invalid value"):
        load_claims(path)


def test_missing_file(tmp_path):
    with pytest.raises(BadInput, match=r"nope\.toml: claims file not found"):
        load_claims(tmp_path / "nope.toml")


def test_fields_table():
    data = {"fields": {"key_fields": ["qid", "docid"], "gold_field": "rel", "output_fields": ["out"]},
            "runs": {"a": ["a.jsonl"]}, "claims": [{"id": "x", "metric": "n", "run": "a", "value": "3", "unit": "count"}]}
    cf = parse_claims(data, path="c.toml")
    assert cf.fields == {"key_fields": ("qid", "docid"), "output_fields": ("out",), "gold_field": "rel"}
    with pytest.raises(BadInput, match=r"\[fields\]: gold_field must be a field name"):
        parse_claims({**data, "fields": {"gold_field": 3}}, path="c.toml")
