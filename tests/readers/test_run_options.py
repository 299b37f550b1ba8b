"""Reader options set per run in a runs file and in a claims file's [runs].

A run entry ``{ files = [...], reader = "...", filter = "...", ... }`` carries
the reader options of the command line (filter, correct_field, scorer,
score_map, epoch); each wins over its flag for that run. The fixtures are the
lm-eval and inspect files of test_lm_eval.py and test_inspect_log.py, whose
per-item verdicts are written out by hand there.
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.judge.api import load_runs
from replicate.judge.labelcache import LabelCache
from replicate.judge.select import RunSpec, run_entry, runs_from_toml
from replicate.verify.claims_file import parse_claims
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data"
LM_A = DATA / "lm_eval" / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl"
LM = "lm-eval-samples@1"
# exact_match of file A per doc_id 0..5 (test_lm_eval.py): strict-match 1 1 0 0 1 0, flexible-extract 1 1 1 1 1 0.
# strict -> flex: both = docs 0, 1, 4; only_old = none; only_new = docs 2, 3; neither = doc 5. Docs 2, 3 and 5
# are [invalid] under strict-match (no answer extracted): counted wrong here (--unparsed wrong), as lm-eval does.
STRICT_TO_FLEX = {"both": 3, "only_old": 0, "only_new": 2, "neither": 1}
# inspect scorer model_graded_fact with P counted wrong (test_inspect_log.py GRADED_CELLS).
GRADED_CELLS = {"both": 1, "only_old": 2, "only_new": 2, "neither": 1}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _chain(tmp_path, runs: str, *flags):
    (tmp_path / "runs.toml").write_text("[runs]\n" + runs, encoding="utf-8")
    res = _run("chain", "--runs", tmp_path / "runs.toml", "-f", "json", "--replicates", "0", "--unparsed", "wrong", *flags)
    return res, (json.loads(res.stdout) if res.exit_code == 0 else None)


def test_one_file_read_two_ways_as_two_runs_gives_the_hand_count(tmp_path):
    shutil.copy(LM_A, tmp_path / "a.jsonl")
    res, out = _chain(tmp_path,
                      f'strict = {{ files = ["a.jsonl"], reader = "{LM}", filter = "strict-match" }}\n'
                      f'flex = {{ files = ["a.jsonl"], reader = "{LM}", filter = "flexible-extract", '
                      'correct_field = "exact_match" }\n')
    assert res.exit_code == 0, res.output
    edge = out["edges"][0]
    assert edge["cells"] == STRICT_TO_FLEX and edge["n"] == 6
    assert edge["old"]["files"][0]["reader_options"] == {"filter": "strict-match", "correct_field": "exact_match"}
    assert edge["new"]["files"][0]["reader_options"] == {"filter": "flexible-extract", "correct_field": "exact_match"}


def test_a_runs_option_wins_over_the_flag_for_its_run_only(tmp_path):
    shutil.copy(LM_A, tmp_path / "a.jsonl")
    runs = f'strict = {{ files = ["a.jsonl"], reader = "{LM}" }}\nflex = {{ files = ["a.jsonl"], reader = "{LM}", filter = "flexible-extract" }}\n'
    res, out = _chain(tmp_path, runs, "--filter", "strict-match")
    assert res.exit_code == 0, res.output
    assert out["edges"][0]["cells"] == STRICT_TO_FLEX
    # without the flag the first run names no filter, and the file holds two
    res, _ = _chain(tmp_path, runs)
    assert res.exit_code != 0 and "the file holds 2 filters (flexible-extract, strict-match); name one" in res.output


def test_score_map_as_a_table_reads_like_the_flag(tmp_path):
    for name in ("old.eval", "new.eval"):
        shutil.copy(DATA / "inspect" / name, tmp_path / name)
    res, out = _chain(tmp_path,
                      'old = { files = ["old.eval"], reader = "inspect-log@1", scorer = "model_graded_fact", score_map = { P = 0 } }\n'
                      'new = { files = ["new.eval"], reader = "inspect-log@1", scorer = "model_graded_fact", score_map = "P=0" }\n')
    assert res.exit_code == 0, res.output
    edge = out["edges"][0]
    assert edge["cells"] == GRADED_CELLS
    assert edge["old"]["files"][0]["reader_options"]["score_map"] == "P=0"
    # P counted right instead: old 1 1 0 0 1 1, new 1 1 1 0 1 0 -> both 1, 2, 5; only_old 6; only_new 3; neither 4
    res, out = _chain(tmp_path,
                      'old = { files = ["old.eval"], reader = "inspect-log@1", scorer = "model_graded_fact", score_map = { P = true } }\n'
                      'new = { files = ["new.eval"], reader = "inspect-log@1", scorer = "model_graded_fact", score_map = { P = 1 } }\n')
    assert res.exit_code == 0, res.output
    assert out["edges"][0]["cells"] == {"both": 3, "only_old": 1, "only_new": 1, "neither": 1}


@pytest.mark.parametrize("entry, message", [
    ('{ files = ["a.txt"], filtr = "x" }',
     "run 'r': unknown key(s) 'filtr'; allowed: files, reader, filter, correct_field, scorer, score_map, epoch"),
    ('{ files = ["a.txt"], reader = "trec-qrels@1", filter = "strict-match" }',
     "run 'r': reader trec-qrels@1 does not read option(s) filter; it reads no options"),
    ('{ files = ["a.txt"], reader = "lm-eval-samples@1", scorer = "match" }',
     "run 'r': reader lm-eval-samples@1 does not read option(s) scorer; it reads filter, correct_field"),
    ('{ files = ["a.txt"], epoch = 0 }', "run 'r': epoch must be a whole number >= 1, got 0"),
    ('{ files = ["a.txt"], epoch = true }', "run 'r': epoch must be a whole number >= 1, got True"),
    ('{ files = ["a.txt"], filter = 3 }', "run 'r': filter must be a non-empty string, got 3"),
    ('{ files = ["a.txt"], score_map = { P = 2 } }', "run 'r': score_map value for 'P' must be 1 or 0 (or true/false), got 2"),
    ('{ files = ["a.txt"], score_map = { P = 1.0 } }', "run 'r': score_map value for 'P' must be 1 or 0 (or true/false), got 1.0"),
    ('{ files = ["a.txt"], score_map = {} }', "run 'r': score_map is empty"),
    ('{ files = [], reader = "trec-qrels@1" }', "run 'r': expected a path or a non-empty list of paths, got []"),
])
def test_bad_entries_are_refused_naming_the_file_and_the_run(tmp_path, entry, message):
    path = tmp_path / "runs.toml"
    path.write_text(f"[runs]\nr = {entry}\n", encoding="utf-8")
    with pytest.raises(BadInput) as info:
        runs_from_toml(path)
    assert str(info.value) == f"{path}: {message}"
    # the claims file's [runs] shares the rule and collects it with its other problems
    with pytest.raises(BadInput) as info:
        parse_claims({"runs": {"r": _toml_value(entry)}, "claims": [{"id": "x"}]}, path="claims.toml")
    assert f"[runs] {message}" in str(info.value)


def _toml_value(entry: str):
    import tomllib

    return tomllib.loads(f"r = {entry}")["r"]


def test_an_unknown_reader_with_options_is_left_for_the_read_to_report(tmp_path):
    entry = run_entry("r", {"files": ["a.txt"], "reader": "nope@1", "filter": "x"})
    assert entry.reader == "nope@1" and entry.options == (("filter", "x"),)


def test_verify_reads_each_claims_run_with_its_own_options(tmp_path):
    shutil.copy(LM_A, tmp_path / "a.jsonl")
    claims = tmp_path / "claims.toml"
    claims.write_text(
        '[study]\ntitle = "one lm-eval log, two filters"\n\n'
        f'[runs]\nstrict = {{ files = ["a.jsonl"], reader = "{LM}", filter = "strict-match" }}\n'
        f'flex = {{ files = ["a.jsonl"], reader = "{LM}", filter = "flexible-extract" }}\n\n'
        '[[claims]]\nid = "gained"\nwhere = "Table 1"\nmetric = "cells.only_new"\nold = "strict"\nnew = "flex"\n'
        'value = "2"\nunit = "count"\nunparsed = "wrong"\n\n'
        '[[claims]]\nid = "lost"\nwhere = "Table 1"\nmetric = "cells.only_old"\nold = "strict"\nnew = "flex"\n'
        'value = "0"\nunit = "count"\nunparsed = "wrong"\n', encoding="utf-8")
    res = _run("verify", claims, "--root", tmp_path, "--no-plots", "--out", tmp_path / "note.md", "-f", "json")
    assert res.exit_code == 0, res.output
    verdicts = {c["id"]: set(c["verdict"].values()) for c in json.loads(res.stdout)["claims"]}
    assert verdicts == {"gained": {"match"}, "lost": {"match"}}  # (verdicts by parser: these runs carry verdicts)


def test_the_label_cache_keys_each_run_by_its_own_options(tmp_path):
    """Two runs of one file read with different options never share a label-cache entry."""
    src = ROOT / "fixtures" / "example" / "results"
    path = sorted(src.glob("*.jsonl"))[0]
    cache = LabelCache(tmp_path / "cache")
    specs = [RunSpec("plain", (path,)), RunSpec("optioned", (path,), options=(("scorer", "x"),))]
    loaded = load_runs(specs, label_cache=cache)
    loaded.labelled("umbrela-fallback@1")
    keys = cache.keys()
    assert set(keys) == {"plain", "optioned"} and keys["plain"] != keys["optioned"]
    # the same options give the same key (a rerun hits)
    again = LabelCache(tmp_path / "cache")
    load_runs([RunSpec("optioned", (path,), options=(("scorer", "x"),))], label_cache=again).labelled("umbrela-fallback@1")
    assert again.keys()["optioned"] == keys["optioned"] and again.events[0][2] == "hit"


def test_readers_show_and_list_say_which_options_a_reader_reads():
    res = _run("readers", "show", LM)
    assert res.exit_code == 0 and "reader options: filter, correct_field" in res.stdout
    assert "reader options: none" in _run("readers", "show", "trec-qrels@1").stdout
    listed = {r["name"]: r["options"] for r in json.loads(_run("readers", "list", "-f", "json").stdout)["readers"]}
    assert listed["inspect-log@1"] == ["scorer", "score_map", "epoch"] and listed["judge-jsonl@1"] == []
