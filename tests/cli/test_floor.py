"""`replicate floor`, `replicate matrix` and `replicate parsers audit` on small JSONL files in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.ci import used

P = "umbrela-fallback@1"
KEYS = [("1", "a"), ("1", "b"), ("2", "c"), ("2", "d"), ("3", "e"), ("3", "f")]
GOLD = [0, 1, 2, 3, 1, 2]


def _out(label):
    return "no verdict here" if label is None else f"##final score: {label}"


def _write(path, labels, keys=KEYS, gold=GOLD):
    with open(path, "w") as fh:
        for (q, d), g, lab in zip(keys, gold, labels):
            fh.write(json.dumps({"query_id": q, "corpus_id": d, "original_qrel_score": float(g), "model_output": _out(lab)}) + "\n")
    return path


@pytest.fixture
def repeats(tmp_path):
    # the hand-computed repeats of test_floor_compute: R1 and R2 differ on c, e (and f unparsed in R1)
    r1 = _write(tmp_path / "R1.jsonl", [0, 1, 2, 3, 0, None])
    r2 = _write(tmp_path / "R2.jsonl", [0, 1, 0, 3, 1, 2])
    r3 = _write(tmp_path / "R3.jsonl", [1, 1, 2, 0, 1, 2])
    return tmp_path, [str(r1), str(r2), str(r3)]


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_floor_json(repeats):
    tmp, files = repeats
    old = _write(tmp / "v1.jsonl", [0, 1, 2, 3, 1, 2])
    new = _write(tmp / "v2.jsonl", [0, 1, 2, 0, 0, 1])  # regresses on d, e, f: 3/6 = 0.5 > 2/5
    main = _write(tmp / "main.jsonl", [0, 1, 2, 3, 1, 2])
    res = _run("floor", *files, "--parser", P, "--edge", f"{old}:{new}", "--main", main, "--format", "json")
    assert res.exit_code == 0, res.output
    js = json.loads(res.stdout)
    assert [(p["old"], p["new"]) for p in js["pairs"]][:2] == [("R1", "R2"), ("R1", "R3")]
    assert js["pairs"][0]["cells"] == {"both": 3, "only_old": 1, "only_new": 1, "neither": 0}
    assert js["regression_rate"]["min"] == 1 / 6 and js["regression_rate"]["max"] == 2 / 5
    assert js["change_rate"]["min"] == 2 / 5 and js["change_rate"]["max"] == 3 / 5
    assert js["em"]["mean"] == pytest.approx((4 / 5 + 5 / 6 + 4 / 6) / 3)
    # 0.5 lies above the 1/6-2/5 range, but 6 items in 3 query clusters carry no verdict: too few items for
    # --min-items 100 and too few clusters for an interval (null, with the reason)
    assert js["edge"]["point_verdict"] == "above" and js["edge"]["verdict"] == "insufficient_data"
    info = js["edge"]["insufficient_data"]
    assert (info["n"], info["clusters"], info["cluster"]) == (6, 3, "query_id")
    assert "fewer than --min-items 100" in info["reason"] and "too few query_id clusters for an interval: 3" in info["reason"]
    iv = used(js["edge"])["regression_rate"]
    assert iv["low"] is None and iv["high"] is None and iv["reason"].startswith("too few query_id clusters")
    assert iv["replicates"] == 1000 and iv["cluster"] == "query_id"
    assert [f["code"] for f in js["edge"]["sample_flags"]] == ["small_sample"]
    assert js["edge"]["floor_baseline"]["expected_regression_rate"] == pytest.approx(sum(p["regression_rate"] for p in js["pairs"]) / 6)
    assert js["edge"]["margin"] == pytest.approx(0.5 - 0.4)
    assert js["edge"]["old"]["name"] == "v1" and js["edge"]["regression_rate"] == 0.5
    # main vs R1 (over a-e): e differs -> 1/5; vs R2: c -> 1/6; vs R3: a, d -> 2/6
    assert [a["change_rate"] for a in js["main"]["against"]] == [1 / 5, 1 / 6, 2 / 6]
    assert js["main"]["closest"]["verdict"] == "below" and js["main"]["far_beyond"] is False
    assert js["main"]["verdict"] == "insufficient_data" and "fewer than --min-items 100" in js["main"]["insufficient_data"]
    assert js["parser"] == P and js["unparsed_policy"] == "intersect"


def test_floor_table_text(repeats):
    _, files = repeats
    res = _run("floor", *files, "-p", P, "--replicates", "0", "--min-items", "0")
    assert res.exit_code == 0, res.output
    assert "Rerun floor of 3 repeats: R1, R2, R3" in res.stdout
    assert "regression rate             16.67% - 40.00% (width 23.33 pp)" in res.stdout
    assert "change rate                 40.00% - 60.00% (width 20.00 pp)" in res.stdout
    assert "min 0.000, mean 0.500, max 1.000 over 6 pair(s) of pairs" in res.stdout


def test_floor_markdown_has_tables(repeats):
    _, files = repeats
    res = _run("floor", *files, "-p", P, "--format", "markdown")
    assert res.exit_code == 0
    assert res.stdout.startswith("## Rerun floor of 3 repeats")
    assert "| R2    | R3    | 6   | 3      | 2          | 1          | 0         | 33.33%       | 50.00%   |" in res.stdout


def test_floor_needs_two_repeats(repeats):
    _, files = repeats
    res = _run("floor", files[0], "-p", P)
    assert res.exit_code == 2
    assert res.stderr == "Error: a floor needs at least two repeats of one model; got 1\n"


def test_floor_unknown_run_is_a_usage_error(repeats):
    _, files = repeats
    res = _run("floor", *files, "-p", P, "--main", "nope")
    assert res.exit_code == 2
    assert res.stderr == "Error: run 'nope' is neither a run named in --runs nor an existing file or run directory\n"
    # the library names its parameter (runs_toml); the command shows its option
    res = _run("floor")
    assert res.exit_code == 2
    assert res.stderr == "Error: no runs given: pass RUN files (one per run) or --runs RUNS.toml\n"


def test_floor_reports_repeats_covering_different_items(repeats):
    tmp, files = repeats
    short = _write(tmp / "short.jsonl", [0, 1, 2, 3], keys=KEYS[:4], gold=GOLD[:4])
    res = _run("floor", files[1], short, "-p", P)
    assert res.exit_code == 0, res.output
    assert "Note: the repeats cover different items; every figure here uses the 4 items all of them have" in res.stdout
    js = json.loads(_run("floor", files[1], short, "-p", P, "-f", "json").stdout)
    assert js["items_differ"] is True
    assert [(r["name"], r["items"], r["dropped"]) for r in js["repeats"]] == [("R2", 6, 2), ("short", 4, 0)]


def test_floor_refuses_disagreeing_gold(repeats):
    tmp, files = repeats
    bad = _write(tmp / "bad.jsonl", [0, 1, 2, 3, 1, 2], gold=[0, 1, 2, 3, 1, 3])
    res = _run("floor", files[0], bad, "-p", P)
    assert res.exit_code == 2
    assert "item 3 / f: R1 says 2, bad says 3" in res.stderr


def test_floor_and_matrix_by_runs_toml(repeats):
    tmp, files = repeats
    (tmp / "runs.toml").write_text(
        '[runs]\nfirst = ["R1.jsonl"]\nsecond = ["R2.jsonl"]\n\n[repeats]\nthird = ["R3.jsonl"]\n'
    )
    res = _run("floor", "--runs", tmp / "runs.toml", "first", "second", "third", "-p", P, "-f", "json")
    assert res.exit_code == 0, res.output
    assert [r["name"] for r in json.loads(res.stdout)["repeats"]] == ["first", "second", "third"]
    # no RUN arguments: [repeats] says which model 'third' repeats only by its name; it does not
    res = _run("floor", "--runs", tmp / "runs.toml", "-p", P, "--main", "second")
    assert res.exit_code == 2
    assert "[repeats] third extend(s) no run name of [runs] (first, second)" in res.stderr
    assert f"replicate floor --runs {tmp / 'runs.toml'} RUN third" in res.stderr
    res = _run("matrix", "--runs", tmp / "runs.toml", "-p", P, "-f", "json")
    assert [r["name"] for r in json.loads(res.stdout)["runs"]] == ["first", "second"]


def test_floor_without_run_arguments_takes_the_repeats_table(repeats):
    tmp, _ = repeats
    runs = tmp / "runs.toml"
    runs.write_text('[runs]\nfirst = ["R1.jsonl"]\nfirst-2 = ["R2.jsonl"]\n\n[repeats]\n"first-2-rerun" = ["R3.jsonl"]\n')
    res = _run("floor", "--runs", runs, "-p", P, "-f", "json")
    assert res.exit_code == 0, res.output
    # the longest run name the repeat extends: first-2, never the whole version line
    assert [r["name"] for r in json.loads(res.stdout)["repeats"]] == ["first-2", "first-2-rerun"]
    assert f"floor of first-2: first-2, first-2-rerun ([repeats] of {runs}" in res.stderr
    # given RUN arguments, those are the repeats, as before
    res = _run("floor", "--runs", runs, "first", "first-2", "-p", P, "-f", "json")
    assert [r["name"] for r in json.loads(res.stdout)["repeats"]] == ["first", "first-2"]


def test_floor_without_run_arguments_refuses_a_version_line(repeats):
    tmp, _ = repeats
    runs = tmp / "runs.toml"
    runs.write_text('[runs]\na = ["R1.jsonl"]\nb = ["R2.jsonl"]\n')
    res = _run("floor", "--runs", runs, "-p", P)
    assert res.exit_code == 2
    assert "has no [repeats] table, and its [runs] (a, b) are versions, not repeats of one model" in res.stderr
    assert f"replicate floor --runs {runs} RUN RUN-REPEAT" in res.stderr
    runs.write_text('[runs]\na = ["R1.jsonl"]\nb = ["R2.jsonl"]\n[repeats]\na-r = ["R3.jsonl"]\nb-r = ["R3.jsonl"]\n')
    res = _run("floor", "--runs", runs, "-p", P)
    assert res.exit_code == 2
    assert (f"holds repeats of 2 runs (a, b); a floor is of one model: name its repeats as RUN arguments: "
            f"replicate floor --runs {runs} a a-r; replicate floor --runs {runs} b b-r") in res.stderr


def test_matrix_json_and_table(repeats):
    _, files = repeats
    res = _run("matrix", *files, "-p", P, "-f", "json")
    assert res.exit_code == 0, res.output
    js = json.loads(res.stdout)
    assert [r["name"] for r in js["runs"]] == ["R1", "R2", "R3"]
    assert (js["runs"][0]["n"], js["runs"][0]["em"], js["runs"][0]["mae"]) == (5, 4 / 5, 1 / 5)
    assert len(js["pairs"]) == 6
    p = js["pairs"][0]
    assert (p["old"]["name"], p["new"]["name"], p["regression_rate"], p["change_rate"]) == ("R1", "R2", 0.2, 0.4)
    assert [f["code"] for f in js["flags"]] == ["n_differs", "small_sample"]  # 3 pairs of 5-6 items < 100
    assert "6 pair(s) compared on fewer than --min-items 100 items" in js["flags"][1]["message"]
    assert used(p)["regression_rate"]["method"] == "cluster-bootstrap-t-percentile"
    assert used(p)["regression_rate"]["low"] is None  # 3 query clusters: too few for an interval
    assert js["uncertainty"] == {"replicates": 1000, "seed": 0, "cluster": "query_id", "confidence_level": 0.95, "min_items": 100}
    text = _run("matrix", *files, "-p", P).stdout
    assert "regression rate (only_old / n); rows = old, columns = new" in text
    assert "old \\ new    1      2      3\n" in text  # columns by run number, as the baselines' '#'
    assert "1 R1         ·      20.0%  40.0%" in text
    # the baselines number the runs; EM with no interval from 3 query clusters, and why
    assert "1    R1     " in text and "80.0% no interval (3 clusters)" in text
    assert "- R1: n = 5 is 16.7% below the largest n = 6 (1 unparsed) [n_differs]" in text


def test_matrix_scale_option(repeats):
    _, files = repeats
    res = _run("matrix", *files, "-p", P, "--scale", "0-1", "-f", "json")
    codes = {(f["code"], f["run"]) for f in json.loads(res.stdout)["flags"]}
    assert ("gold_outside_scale", None) in codes and ("labels_outside_scale", "R1") in codes
    res = _run("matrix", *files, "-p", P, "--scale", "3-1")
    assert res.exit_code == 2
    assert res.stderr == "Error: --scale must be LO-HI with whole-number grades LO <= HI, e.g. 0-3; got '3-1'\n"


@pytest.mark.parametrize("given", ["\u00b2-3", "0-" + "9" * 19, "0-" + "9" * 5000, "0-\u0663"])
def test_a_scale_of_no_ascii_grades_is_refused_not_a_traceback(repeats, given):
    # before: int() raised ValueError on the superscript two (isdigit() says yes) and on 5000 digits, and
    # an Arabic-Indic three, or a 19-digit grade, was taken
    _, files = repeats
    res = _run("matrix", *files, "-p", P, f"--scale={given}")
    assert res.exit_code == 2, res.output
    assert res.stderr == f"Error: --scale must be LO-HI with whole-number grades LO <= HI, e.g. 0-3; got {given!r}\n"


def test_parsers_audit_json(tmp_path):
    keys = KEYS[:4]
    gold = [2, 1, 2, 0]
    path = tmp_path / "m.jsonl"
    with open(path, "w") as fh:
        for (q, d), g, out in zip(keys, gold, ["##final score: 2", "1", "Final score: 2.5", "nothing"]):
            fh.write(json.dumps({"query_id": q, "corpus_id": d, "original_qrel_score": g, "model_output": out}) + "\n")
    res = _run("parsers", "audit", "-p", "umbrela-strict@1", "-p", P, path, "-f", "json")
    assert res.exit_code == 0, res.output
    f = json.loads(res.stdout)["files"][0]
    assert f["path"].endswith("m.jsonl")
    strict = f["parsers"]["umbrela-strict@1"]
    assert {k: strict[k] for k in ("parsed", "unparsed", "unparsed_rate", "correct", "em")} == {
        "parsed": 1, "unparsed": 3, "unparsed_rate": 0.75, "correct": 1, "em": 1.0,
    }
    assert set(strict["interval"]) == {"em", "unparsed_rate"} and strict["interval"]["em"]["cluster"] == "query_id"
    assert f["parsers"][P]["parsed"] == 3 and f["parsers"][P]["em"] == 1.0
    assert f["labels_differ"] == 2
    assert [e["key"] for e in f["examples"]] == ["1 / b", "2 / c"]
    assert f["examples"][1]["labels"] == {"umbrela-strict@1": None, P: 2}


def test_parsers_audit_edge_and_errors(repeats):
    _, files = repeats
    res = _run("parsers", "audit", "-p", "umbrela-strict@1", "-p", P, *files[:2], "--edge", "R1:R2")
    assert res.exit_code == 0, res.output
    assert "Edge R1 -> R2 under each parser" in res.stdout
    res = _run("parsers", "audit", "-p", P, files[0])
    assert res.exit_code == 2
    assert res.stderr == "Error: a parser audit needs at least two parsers (--parser A --parser B); got 1\n"
    res = _run("parsers", "audit", "-p", P, "-p", "umbrela-strict@1", files[0], "--edge", "R1:R9")
    assert res.exit_code == 2
    assert res.stderr == "Error: --edge names 'R9', not among the FILEs; runs: R1\n"


def test_floor_main_far_beyond_is_flagged_in_text(tmp_path):
    rep1 = _write(tmp_path / "rep1.jsonl", [0, 1, 2, 3, 1, 2])
    rep2 = _write(tmp_path / "rep2.jsonl", [0, 1, 2, 3, 1, 1])  # repeats differ on f only: 1/6
    main = _write(tmp_path / "main.jsonl", [3, 0, 1, 0, 0, 1])  # closest repeat (rep2) differs on 5/6
    res = _run("floor", rep1, rep2, "--main", main, "-p", P)
    assert res.exit_code == 0, res.output
    assert "verdict: insufficient_data: main -> rep1 compared on only n = 6 items" in res.stdout  # 6 < --min-items
    res = _run("floor", rep1, rep2, "--main", main, "-p", P, "--min-items", "6")
    assert "verdict: far_beyond\n" in res.stdout
    assert "closest change rate 83.33% lies above the floor by 66.67 pp" in res.stdout
    assert (
        "Warning: main differs from its repeats far beyond rerun noise: "
        "it was likely produced with another configuration." in res.stdout
    )
    assert ("far_beyond: even the closest repeat differs from main on 83.33%, more than 2 x the "
            "largest repeat-to-repeat change rate 16.67% = 33.33%\n") in res.stdout
    md = _run("floor", rep1, rep2, "--main", main, "-p", P, "-f", "markdown", "--min-items", "6").stdout
    assert "\n- verdict: far_beyond\n" in md


def test_floor_main_prints_the_far_beyond_rule_only_when_it_fires(tmp_path):
    rep1 = _write(tmp_path / "rep1.jsonl", [0, 1, 2, 3, 1, 2])
    rep2 = _write(tmp_path / "rep2.jsonl", [0, 1, 2, 3, 1, 1])  # repeats differ on f only: 1/6
    main = _write(tmp_path / "main.jsonl", [0, 1, 2, 0, 1, 2])  # vs rep1: d = 1/6; vs rep2: d, f
    res = _run("floor", rep1, rep2, "--main", main, "-p", P, "--min-items", "6")
    assert res.exit_code == 0, res.output
    assert "verdict: inside\n" in res.stdout
    assert "far_beyond" not in res.stdout and "Warning" not in res.stdout  # it used to print the rule
    js = json.loads(_run("floor", rep1, rep2, "--main", main, "-p", P, "-f", "json").stdout)["main"]
    assert js["far_beyond"] is False
    assert js["far_beyond_rule"]["closest_change_rate"] == pytest.approx(1 / 6)
    assert js["far_beyond_rule"]["threshold"] == pytest.approx(2 / 6)


EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example"


@pytest.mark.skipif(not (EXAMPLE / "runs.toml").is_file(), reason="bundled example release not present")
def test_bundled_example_floor_edge_and_matrix_agree_with_compare():
    toml = EXAMPLE / "runs.toml"
    res = _run("floor", "--runs", toml, "alpha-2025-01", "alpha-2025-01-repeat", "--edge", "alpha-2024-08:alpha-2025-01", "-p", P, "-f", "json")
    assert res.exit_code == 0, res.output
    fl = json.loads(res.stdout)
    t = toml.parent
    cmp = json.loads(
        _run("compare", "--old", t / "results/alpha-2024-08_annotations.jsonl", "--old", t / "results_2020/alpha-2024-08_annotations.jsonl",
             "--new", t / "results/alpha-2025-01_annotations.jsonl", "--new", t / "results_2020/alpha-2025-01_annotations.jsonl",
             "-p", P, "-f", "json").stdout
    )
    assert fl["edge"]["cells"] == cmp["cells"] and fl["edge"]["regression_rate"] == cmp["regression_rate"]
    lo, hi = fl["regression_rate"]["min"], fl["regression_rate"]["max"]
    rate = fl["edge"]["regression_rate"]
    assert fl["edge"]["verdict"] == ("below" if rate < lo else "above" if rate > hi else "inside")
    assert {p["regression_rate"] for p in fl["pairs"]} == {lo, hi}
    mat = json.loads(_run("matrix", "--runs", toml, "-p", P, "-f", "json").stdout)
    pair = next(p for p in mat["pairs"] if (p["old"]["name"], p["new"]["name"]) == ("alpha-2024-08", "alpha-2025-01"))
    assert mat["shared_items"] == cmp["shared_items"]
    assert pair["cells"] == cmp["cells"] and pair["change_rate"] == cmp["change_rate"]
    assert len(mat["pairs"]) == 12


@pytest.mark.skipif(not (EXAMPLE / "exam").is_dir(), reason="bundled example release not present")
def test_audit_refuses_pre_graded_exam_files():
    exam = sorted((EXAMPLE / "exam").glob("*.jsonl.gz"))[0]
    res = _run("parsers", "audit", "-p", P, "-p", "umbrela-strict@1", exam)
    assert res.exit_code == 2
    assert "holds labels, not raw outputs (EXAM grades): there is nothing to parse" in res.stderr


def test_gold_field_default_is_fieldspecs(repeats, tmp_path):
    """--gold-field defaults to FieldSpec's own default (the help says which), and a given one is used."""
    from replicate.judge.load import FieldSpec

    default = FieldSpec().gold_field
    for verb in (["floor"], ["matrix"], ["parsers", "audit"]):
        help_text = " ".join(_run(*verb, "--help").stdout.split())
        assert f"Default: {default}." in help_text, verb
    tmp, runs = repeats
    plain = _run("floor", *runs, "--parser", P, "--format", "json")
    assert plain.exit_code == 0, plain.output
    # the same data under another gold field name: found only when --gold-field names it
    renamed = []
    for path in runs:
        out = tmp_path / ("renamed-" + Path(path).name)
        rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
        out.write_text("".join(json.dumps({("grade" if k == default else k): v for k, v in r.items()}) + "\n"
                               for r in rows))
        renamed.append(str(out))
    missing = _run("floor", *renamed, "--parser", P)
    assert missing.exit_code == 2 and default in missing.stderr
    given = _run("floor", *renamed, "--parser", P, "--format", "json", "--gold-field", "grade")
    assert given.exit_code == 0, given.output
    # gold-dependent figures agree: per repeat EM against gold (run names differ by the prefix)
    ems = lambda res: [(r["correct"], r["em"]) for r in json.loads(res.stdout)["repeats"]]  # noqa: E731
    assert ems(given) == ems(plain) == [(4, 0.8), (5, 5 / 6), (4, 4 / 6)]


def test_edge_or_main_given_an_option_says_it_takes_run_names(repeats):
    _, files = repeats
    res = _run("floor", *files, "--edge", files[0], "-p", P)
    assert res.exit_code == 2
    assert res.stderr == (
        f"Error: --edge takes two run names, OLD:NEW; got {files[0]!r} "
        "(a run file whose name starts with '-' can be written ./-name)\n"
    )
    res = _run("floor", *files[:2], "--main", "-p", P)
    assert res.exit_code == 2
    assert res.stderr.startswith("Error: --main takes a run name; got '-p'")
    res = _run("parsers", "audit", "-p", "umbrela-strict@1", *files[:2], "--edge", "R1", "-p", P)
    assert res.exit_code == 2
    assert res.stderr.startswith("Error: --edge takes two run names, OLD:NEW; got 'R1' ")
    res = _run("parsers", "audit", "-p", "umbrela-strict@1", *files[:2], "--edge", "-p", P)
    assert res.exit_code == 2
    assert res.stderr.startswith("Error: --edge takes two run names, OLD:NEW; got '-p' ")


def test_parsers_audit_by_runs_toml(repeats):
    tmp, files = repeats
    (tmp / "runs.toml").write_text('[runs]\nfirst = ["R1.jsonl"]\nsecond = ["R2.jsonl"]\n')
    args = ["parsers", "audit", "-p", "umbrela-strict@1", "-p", P, "-f", "json"]
    by_toml = json.loads(_run(*args, "--runs", tmp / "runs.toml", "--edge", "first:second").stdout)
    assert [f["run"] for f in by_toml["files"]] == ["first", "second"]
    by_file = json.loads(_run(*args, files[0]).stdout)
    assert by_toml["files"][0]["parsers"] == by_file["files"][0]["parsers"]
    assert by_toml["edge"]["old"] == "first" and by_toml["edge"]["new"] == "second"
    res = _run(*args, "--runs", tmp / "runs.toml", "--edge", "first:R3")
    assert res.exit_code == 2
    assert res.stderr == f"Error: --edge names 'R3', not among the runs in {tmp / 'runs.toml'}; runs: first, second\n"
    res = _run(*args, files[0], "--runs", tmp / "runs.toml")
    assert res.exit_code == 2 and res.stderr == "Error: give run files or --runs RUNS.toml, not both\n"
