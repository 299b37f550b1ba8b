"""The harness's own figure by default (issue 38): the source's rule as the unparsed policy, the harness's
aggregate beside the recomputed one, accuracy in parse, no agreement against a constant gold, run names.

The lm-eval pair is the issue's 200-document example, written in lm-eval 0.4.7's layout by
tests/support/synth/lm_eval_logs.py: lm-eval's own accuracy is A 57.0% and B 47.5%; dropping the
[invalid] documents of either side (--unparsed intersect) gives 64.81% and 73.15% on 108 documents.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.judge.harness import HarnessCheck, places
from replicate.judge.select import model_run_name
from replicate.judge.sourcerule import unparsed_choice
from replicate.reading.contract import HarnessFigure, SourceRule
from support.paths import ROOT
from support.synth.lm_eval_logs import GROUPS, verdicts, write_pair

DATA = ROOT / "tests" / "readers" / "data"
POPULARITY = DATA / "inspect" / "real" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
HELM = DATA / "helm" / "real" / "runs" / "v3"
LLAMA = HELM / "bbq:subject=all,method=multiple_choice_joint,model=meta_llama-3-8b"
OPUS = HELM / "bbq:subject=all,method=multiple_choice_joint,model=anthropic_claude-3-opus-20240229"
LM_RULE = ("lm-eval-samples@1: lm-eval scores a sample whose answer its filter did not find ([invalid]) 0 "
           "and averages over every document")


def _run(*args, env=None):
    return CliRunner().invoke(app, ["--no-cache", *map(str, args)], env=env)


@pytest.fixture()
def pair(tmp_path):
    return write_pair(tmp_path)


def test_the_synthetic_pair_holds_the_issues_counts():
    a, b = verdicts(0), verdicts(1)
    assert len(a) == len(b) == 200 == sum(g[0] for g in GROUPS)
    assert (a.count(1), b.count(1)) == (114, 95)  # lm-eval: 57.0% and 47.5%, [invalid] scored 0
    both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    assert len(both) == 108
    assert (sum(x for x, _ in both), sum(y for _, y in both)) == (70, 79)  # 64.81% and 73.15%


def test_compare_defaults_to_lm_evals_rule_and_reproduces_its_figures(pair):
    res = _run("compare", *pair, "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["old"]["name"], out["new"]["name"]) == ("Llama-3-8B", "example-org/Model-B-8B")
    assert out["n"] == 200 and out["unparsed_policy"] == "wrong"
    assert (out["em_old"], out["em_new"], out["regression_rate"]) == (0.57, 0.475, 0.32)
    assert out["unparsed_rule"] == {
        "policy": "wrong", "source_rule": "wrong", "source_rule_says": {"lm-eval-samples@1": LM_RULE[19:]},
        "given": False, "departs_from_source": False,
    }
    assert [(h["run"], h["printed"], h["correct"], h["counted"], h["match"]) for h in out["harness"]] == [
        ("Llama-3-8B", "0.57", 114, 200, True), ("example-org/Model-B-8B", "0.475", 95, 200, True)]
    # verdicts against the constant gold "correct": no agreement block, and why
    assert "agreement" not in out and out["absent"]["agreement"].startswith("these runs carry verdicts")


def test_intersect_is_a_departure_in_the_table_the_markdown_and_the_json(pair):
    res = _run("compare", *pair, "--replicates", "0", "--unparsed", "intersect", "-f", "json")
    out = json.loads(res.stdout)
    assert out["n"] == 108 and round(out["em_old"], 4) == 0.6481 and round(out["em_new"], 4) == 0.7315
    assert round(out["regression_rate"], 3) == 0.185
    assert out["unparsed_rule"]["departs_from_source"] is True and out["unparsed_rule"]["given"] is True
    assert [h["match"] for h in out["harness"]] == [False, False]  # 114 of 158 and 95 of 138: not lm-eval's
    line = ("parser: lm-eval-metric; unparsed policy: intersect (an unparsed output leaves the figures): a DEPARTURE "
            f"from the source's rule, wrong ({LM_RULE}): --unparsed intersect was chosen, so these figures are not "
            "the harness's own (--unparsed wrong gives them)")
    md = _run("compare", *pair, "--replicates", "0", "--unparsed", "intersect", "-f", "markdown").stdout
    assert f"- {line}\n" in md
    text = _run("compare", *pair, "--replicates", "0", "--unparsed", "intersect", env={"COLUMNS": "1000"}).stdout
    wide = text.splitlines()
    end = next(k for k, row in enumerate(wide) if row.startswith("shared items"))
    assert wide[2].startswith("parser: ") and " ".join(row.strip() for row in wide[2:end]) == line  # wrapped prose
    check = next(k for k, row in enumerate(wide) if row.startswith("run ") and "harness's own figure" in row)
    assert wide[check + 2].split() == [
        "Llama-3-8B", "exact_match,strict-match", "results_2024-12-02T10-00-00.000000.json:", "results.gsm8k",
        "0.57", "0.72", "(114", "of", "158,", "unparsed", "intersect)", "MISMATCH"]


def test_every_command_with_unparsed_says_the_departure(pair):
    head = "unparsed policy: intersect (an unparsed output leaves the figures): a DEPARTURE from the source's rule"
    for command in (("chain", *pair), ("floor", *pair), ("agreement", "--pairs", *pair)):
        res = _run(*command, "--replicates", "0", "--unparsed", "intersect", env={"COLUMNS": "1000"})
        assert res.exit_code == 0, res.output
        assert head in " ".join(res.stdout.split()), command
        js = json.loads(_run(*command, "--replicates", "0", "--unparsed", "intersect", "-f", "json").stdout)
        rule = js["unparsed_rule"] if "unparsed_rule" in js else js["edges"][0]["unparsed_rule"]
        assert rule["departs_from_source"] is True, command
    text = _run("chain", *pair, "--replicates", "0", env={"COLUMNS": "1000"}).stdout
    assert f"unparsed policy: wrong (an unparsed output counts as wrong), the source's rule ({LM_RULE})" in text
    # (chain's line under its tables is not wrapped)


def test_parse_prints_the_accuracy_its_interval_and_lm_evals_own_figure(pair):
    res = _run("parse", pair[0], env={"COLUMNS": "1000"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "Llama-3-8B: read with lm-eval-metric"
    end = next(k for k, row in enumerate(lines) if row.lstrip().startswith("count"))
    assert " ".join(row.strip() for row in lines[1:end]) == (
        f"unparsed policy: wrong (an unparsed output counts as wrong), the source's rule ({LM_RULE})")
    assert "accuracy against gold                     114 of 200 (57.0% [50.0%, 64.0%])" in lines
    assert "of unparsed: no answer found ([invalid])  42 (21.0% [15.9%, 27.2%], 95% Wilson)" in lines
    row = next(r for r in lines if r.startswith("Llama-3-8B  "))
    assert row.split() == ["Llama-3-8B", "exact_match,strict-match", "results_2024-12-02T10-00-00.000000.json:",
                           "results.gsm8k", "0.57", "0.57", "(114", "of", "200,", "unparsed", "wrong)", "match"]
    (summary,) = json.loads(_run("parse", pair[0], "-f", "json").stdout)["runs"]
    acc = summary["accuracy"]
    assert (acc["correct"], acc["counted"], acc["accuracy"], acc["unparsed_policy"]) == (114, 200, 0.57, "wrong")
    lo, hi = acc["interval"]["accuracy"]["low"], acc["interval"]["accuracy"]["high"]
    assert lo < 0.57 < hi
    assert summary["extraction_failures"] == 42 and summary["harness"][0]["match"] is True
    departed = json.loads(_run("parse", pair[0], "-f", "json", "--unparsed", "intersect").stdout)["runs"][0]
    assert (departed["accuracy"]["correct"], departed["accuracy"]["counted"]) == (114, 158)
    assert departed["unparsed_rule"]["departs_from_source"] is True and departed["harness"][0]["match"] is False


def test_verify_takes_lm_evals_rule_for_a_claim_that_pins_none(pair, tmp_path):
    a, b = (p.relative_to(tmp_path) for p in pair)
    claims = tmp_path / "claims.toml"
    body = (
        '[study]\ntitle = "synthetic lm-eval pair"\n\n'
        f'[runs]\nA = {{ files = ["{a}"], reader = "lm-eval-samples@1" }}\n'
        f'B = {{ files = ["{b}"], reader = "lm-eval-samples@1" }}\n\n'
        '[[claims]]\nid = "acc-a"\nmetric = "em"\nrun = "A"\nvalue = "57.0"\nunit = "percent"\n\n'
        '[[claims]]\nid = "acc-b"\nmetric = "em"\nrun = "B"\nvalue = "47.5"\nunit = "percent"\n'
    )
    claims.write_text(body, encoding="utf-8")
    res = _run("verify", claims, "--root", tmp_path, "--no-plots", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [c["verdict"] for c in out["claims"]] == [{"lm-eval-metric": "match"}] * 2
    assert not [f for f in out["flags"] if f["kind"] == "departure"]
    claims.write_text(body.replace('unit = "percent"\n\n', 'unit = "percent"\nunparsed = "intersect"\n\n', 1),
                      encoding="utf-8")
    res = _run("verify", claims, "--root", tmp_path, "--no-plots", "-f", "json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert [c["verdict"] for c in out["claims"]] == [{"lm-eval-metric": "mismatch"}, {"lm-eval-metric": "match"}]
    (flag,) = [f for f in out["flags"] if f["kind"] == "departure"]
    assert flag["message"] == (f"claim 'acc-a' pins unparsed = 'intersect', a departure from the source's rule, "
                               f"wrong ({LM_RULE}): its figure is not the harness's own")


def test_inspect_and_helm_default_to_their_rule_and_match_their_own_figures():
    out = json.loads(_run("parse", POPULARITY, "--replicates", "0", "-f", "json").stdout)["runs"][0]
    assert out["unparsed_rule"]["policy"] == "intersect" and out["unparsed_rule"]["source_rule"] == "intersect"
    assert [(h["metric"], h["printed"], h["correct"], h["counted"], h["match"]) for h in out["harness"]] == [
        ("accuracy of scorer match", "0.8", 8, 10, True)]  # C on 8 of the 10 samples (README)
    out = json.loads(_run("compare", DATA / "inspect" / "old.eval", DATA / "inspect" / "new.eval",
                          "--inspect-scorer", "match", "--replicates", "0", "-f", "json").stdout)
    assert [(h["printed"], h["correct"], h["counted"], h["match"]) for h in out["harness"]] == [
        ("0.5", 3, 6, True), ("0.6666666666666666", 4, 6, True)]  # a double written in full: equal as doubles
    # HELM's per-instance metric (README: Llama 3 8B exact_match 1 and 0, Claude 3 Opus 1 and 1; stats.json 0.5, 1.0)
    out = json.loads(_run("compare", OPUS, LLAMA, "--correct-field", "exact_match", "--replicates", "0",
                          "-f", "json").stdout)
    assert out["unparsed_rule"]["source_rule"] == "intersect"
    assert [(h["run"], h["metric"], h["printed"], h["correct"], h["counted"], h["match"]) for h in out["harness"]] == [
        ("anthropic/claude-3-opus-20240229", "exact_match", "1.0", 2, 2, True),
        ("meta/llama-3-8b", "exact_match", "0.5", 1, 2, True)]
    # HELM's completions read by HELM's own reading (helm-choice@1): its rule counts no choice wrong
    out = json.loads(_run("parse", LLAMA, "--reader", "helm-completions@1", "-p", "helm-choice@1", "--replicates", "0",
                          "-f", "json").stdout)["runs"][0]
    assert out["unparsed_rule"]["policy"] == "wrong"
    assert [(h["printed"], h["correct"], h["counted"], h["match"]) for h in out["harness"]] == [("0.5", 1, 2, True)]


def test_a_filter_that_marks_no_failure_says_not_recorded():
    arc = DATA / "lm_eval" / "legacy" / "v0.4.2" / "pretrained__EleutherAI__pythia-410m,dtype__float16_arc_easy.jsonl"
    res = _run("parse", arc, "--correct-field", "acc", "--replicates", "0", env={"COLUMNS": "1000"})
    assert res.exit_code == 0, res.output
    assert ("of unparsed: no answer found ([invalid])  not recorded ("
            f"{arc}: filter 'none' has no regex step, so the log does not mark an answer it could not extract "
            "(the task's own scoring may extract one))") in res.stdout
    out = json.loads(_run("parse", arc, "--correct-field", "acc", "--replicates", "0", "-f", "json").stdout)["runs"][0]
    assert out["extraction_failures"] is None and "no regex step" in out["extraction_failures_not_recorded"]


def test_a_qrels_comparison_keeps_its_agreement_block_and_the_project_default():
    out = json.loads(_run("compare", DATA / "old.txt", DATA / "new.txt", "--reader", "trec-qrels@1",
                          "--gold", DATA / "gold.txt", "--replicates", "0", "-f", "json").stdout)
    assert "agreement" in out and "agreement" not in out.get("absent", {})
    assert out["unparsed_rule"] == {"policy": "intersect", "source_rule": None, "source_rule_says": {},
                                    "given": False, "departs_from_source": False}


def test_the_choice_of_policy():
    class F:  # a RunFile's two fields the rule reads
        def __init__(self, reader, rule):
            self.reader, self.source_rule = reader, rule

    class R:
        def __init__(self, *files):
            self.files = files

    lm, ins = SourceRule("wrong", "zero"), SourceRule("intersect", "left out")
    assert unparsed_choice([R(F("lm@1", lm)), R(F("lm@1", lm))]).policy == "wrong"
    assert unparsed_choice([R(F("lm@1", lm))], "intersect").departs
    assert not unparsed_choice([R(F("lm@1", lm))], "wrong").departs
    mixed = unparsed_choice([R(F("lm@1", lm)), R(F("in@1", ins))])
    assert (mixed.policy, mixed.rule, mixed.departs) == ("intersect", None, False)
    assert "the readers' rules differ (lm@1 + in@1)" in mixed.text()
    plain = unparsed_choice([R(F("judge-jsonl@1", None))], "wrong")
    assert (plain.policy, plain.rule, plain.departs, plain.text()) == (
        "wrong", None, False, "unparsed policy: wrong (an unparsed output counts as wrong)")
    with pytest.raises(ValueError, match="policy must be one of intersect, wrong"):
        unparsed_choice([R(F("lm@1", lm))], "drop")


@pytest.mark.parametrize(("printed", "correct", "counted", "matches", "shown"), [
    ("0.57", 114, 200, True, "0.57"),
    ("0.6", 29, 50, True, "0.6"),  # 0.58 rounds to 0.6: within half a unit of the last place
    ("0.6", 27, 50, False, "0.5"),
    ("0.55", 11, 20, True, "0.55"),
    ("0.5", 11, 20, True, "0.6"),  # 0.55 lies on the boundary of "0.5": a tie matches (halves away from zero shown)
    ("0.3333333333333333", 1, 3, True, "0.3333333333333333"),  # a double in full: equal as doubles
    ("0.3333333333333333", 333, 1000, False, "0.333"),  # shown as the double it is
])
def test_a_harness_figure_matches_at_its_printed_precision(printed, correct, counted, matches, shown):
    check = HarnessCheck("r", HarnessFigure("m", printed, "f"), correct, counted, "wrong")
    assert check.matches is matches
    assert check.recomputed == Fraction(correct, counted)
    assert check.shown() == shown
    assert places(printed) == len(printed.partition(".")[2])


@pytest.mark.parametrize(("model", "name"), [
    ("/home/x/models/Llama-3-8B", "Llama-3-8B"),
    ("/home/x/models/Llama-3-8B/", "Llama-3-8B"),
    ("EleutherAI/pythia-1b", "EleutherAI/pythia-1b"),
    ("gpt-4o", "gpt-4o"),
    ("/root/.cache/huggingface/hub/models--meta-llama--Llama-3-8B/snapshots/0123456789abcdef0123456789abcdef01234567",
     "Llama-3-8B"),
    ("/runs/sft-7b/checkpoint-500", "sft-7b/checkpoint-500"),
    ("C:\\models\\Qwen2-7B", "Qwen2-7B"),
    ("~/m/Mistral-7B", "Mistral-7B"),
])
def test_a_run_is_named_by_the_last_meaningful_component_of_a_model_path(model, name):
    assert model_run_name(model) == name


def test_long_run_names_are_shortened_in_tables_with_a_legend(tmp_path, pair):
    long_a = tmp_path / ("a-model-whose-name-runs-on-and-on-past-any-table-" + "x" * 20 + ".jsonl")
    long_a.write_bytes(pair[0].read_bytes())
    toml = tmp_path / "runs.toml"
    toml.write_text(f'[runs]\n"{long_a.stem}" = ["{long_a.name}"]\nB = ["{pair[1].relative_to(tmp_path)}"]\n',
                    encoding="utf-8")
    text = _run("chain", "--runs", toml, "--replicates", "0", env={"COLUMNS": "1000"}).stdout
    assert f"names shortened in the tables: a-model-whose-name-runs-on-an... = {long_a.stem}" in text
    row = next(line for line in text.splitlines() if line.startswith("1  "))
    assert row.split()[:3] == ["1", "a-model-whose-name-runs-on-an...", "B"]


def test_harness_claims_makes_a_claims_file_verify_checks_without_a_hand_written_one(pair, tmp_path):
    res = _run("harness-claims", *pair, "--root", tmp_path)
    assert res.exit_code == 0, res.output
    claims = tmp_path / "claims.toml"
    claims.write_text(res.stdout, encoding="utf-8")
    assert ('"Llama-3-8B" = { files = ["__home__x__models__Llama-3-8B/samples_gsm8k_2024-12-02T10-00-00.000000.jsonl"], '
            'reader = "lm-eval-samples@1", filter = "strict-match", correct_field = "exact_match" }') in res.stdout
    assert '[[claims]]\nid = "Llama-3-8B: exact_match,strict-match"\nmetric = "em"\nrun = "Llama-3-8B"\nvalue = "0.57"\n' \
        in res.stdout
    out = json.loads(_run("verify", claims, "--root", tmp_path, "--no-plots", "-f", "json").stdout)
    assert [(c["id"], c["verdict"]) for c in out["claims"]] == [
        ("Llama-3-8B: exact_match,strict-match", {"lm-eval-metric": "match"}),
        ("example-org/Model-B-8B: exact_match,strict-match", {"lm-eval-metric": "match"})]


def test_harness_claims_of_inspect_logs_write_a_double_at_15_decimals(tmp_path):
    for name in ("old.eval", "new.eval"):
        (tmp_path / name).write_bytes((DATA / "inspect" / name).read_bytes())
    res = _run("harness-claims", tmp_path / "old.eval", tmp_path / "new.eval", "--inspect-scorer", "match",
               "--root", tmp_path)
    assert res.exit_code == 0, res.output
    assert 'value = "0.666666666666667"' in res.stdout
    assert "(0.6666666666666666, a double in full; written here at 15 decimals)" in res.stdout
    claims = tmp_path / "claims.toml"
    claims.write_text(res.stdout, encoding="utf-8")
    out = json.loads(_run("verify", claims, "--root", tmp_path, "--no-plots", "-f", "json").stdout)
    assert [c["verdict"] for c in out["claims"]] == [{"inspect-score": "match"}] * 2


def test_harness_claims_refuses_files_without_a_harness_figure():
    res = _run("harness-claims", DATA / "lm_eval" / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl",
               "--filter", "strict-match", "--root", DATA)
    assert res.exit_code == 2
    assert "no figure of its harness beside it" in res.stderr
    assert "Error: no FILE has its harness's own figure beside it: nothing to claim" in res.stderr


def test_agreement_of_verdicts_with_their_constant_gold_is_refused_saying_why(pair):
    res = _run("agreement", *pair, "--replicates", "0")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == (
        "Error: no agreement with gold: these runs carry verdicts (right or wrong), not labels: their gold is the "
        "constant 'correct', not a label scale, so kappa, pi and alpha against it mean nothing; the four cells are "
        "the comparison; --pairs sets the runs' verdicts against each other")
    out = json.loads(_run("agreement", *pair, "--replicates", "0", "--pairs", "-f", "json").stdout)
    assert all("gold" not in (row["left"], row["right"]) for row in out["rows"])


def _long_named_runs(tmp_path, pair):
    """runs.toml naming three runs (copies of the pair), two with names past the 32 characters a table shows."""
    long_a = tmp_path / ("a-model-whose-name-runs-on-and-on-past-any-table-" + "x" * 20 + ".jsonl")
    long_c = tmp_path / ("a-model-whose-name-runs-on-and-on-past-any-table-" + "y" * 20 + ".jsonl")
    long_a.write_bytes(pair[0].read_bytes())
    long_c.write_bytes(pair[0].read_bytes())
    toml = tmp_path / "runs.toml"
    toml.write_text(f'[runs]\n"{long_a.stem}" = ["{long_a.name}"]\nB = ["{pair[1].relative_to(tmp_path)}"]\n'
                    f'"{long_c.stem}" = ["{long_c.name}"]\n', encoding="utf-8")
    legend = (f"names shortened in the tables: a-model-whose-name-runs-on-an... = {long_a.stem}; "
              f"a-model-whose-name-runs-on-a...2 = {long_c.stem}")
    return toml, (long_a.stem, long_c.stem), legend


@pytest.mark.parametrize("command", ["floor", "matrix"])
def test_floor_and_matrix_shorten_long_names_with_the_legend_of_compare_and_chain(tmp_path, pair, command):
    toml, (a, c), legend = _long_named_runs(tmp_path, pair)
    # floor takes the repeats by name (runs.toml has no [repeats]); matrix takes every run of [runs]
    named = (a, "B", c) if command == "floor" else ()
    text = _run(command, "--runs", toml, *named, "--replicates", "0", env={"COLUMNS": "1000"})
    assert text.exit_code == 0, text.output
    md = _run(command, "--runs", toml, *named, "--replicates", "0", "-f", "markdown").stdout
    for out in (text.stdout, md):
        assert legend in out.splitlines()
        rows = [line for line in out.splitlines() if "a-model-whose-name-runs-on-an..." in line]
        assert rows and all("runs-on-and-on-past" not in row for row in rows if not row.startswith(("names", "#")))
    # the table rows name the runs shortened (floor: the repeats' table; matrix: the baselines and each matrix)
    first = "a-model-whose-name-runs-on-an..."
    if command == "floor":
        assert any(line.split()[:2] == [first, "200"] for line in text.stdout.splitlines())
    else:
        assert any(line.split()[:3] == ["1", first, "200"] for line in text.stdout.splitlines())
        assert any(line.split()[:2] == ["1", first] and "·" in line for line in text.stdout.splitlines())
    js = json.loads(_run(command, "--runs", toml, *named, "--replicates", "0", "-f", "json").stdout)
    assert a in json.dumps(js) and c in json.dumps(js) and "..." not in json.dumps(js)  # JSON keeps full names


def _fastchat_single(tmp_path):
    """A FastChat single-answer file as gen_judgment.py writes it (score -1 where it found no rating) and a
    gold rating for every judgment."""
    def single(qid, model, turn, judgment, score):
        return {"question_id": qid, "model": model, "judge": ["gpt-4", "single-v1"], "user_prompt": "...",
                "judgment": judgment, "score": score, "turn": turn, "tstamp": 1.0}

    rows = [single(81, "m1", 1, "Rating: [[8]]", 8), single(81, "m1", 2, "I cannot rate this.", -1),
            single(82, "m1", 1, "[[3]]", 3), single(82, "m1", 2, "Rating: [7]", 7),
            single(81, "m2", 1, "no verdict", -1), single(81, "m2", 2, "[[10]]", 10)]
    path, gold = tmp_path / "gpt-4_single.jsonl", tmp_path / "human.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gold.write_text("".join(json.dumps({"question_id": r["question_id"], "model": r["model"], "turn": r["turn"],
                                        "rating": 8}) + "\n" for r in rows), encoding="utf-8")
    return path, gold


FASTCHAT_RULE = "fastchat-single@1: FastChat's show_result.py drops a rating of -1 (none found) from its mean"


def test_fastchat_single_defaults_to_show_results_denominator_and_says_a_departure(tmp_path):
    path, gold = _fastchat_single(tmp_path)
    scores = [json.loads(line)["score"] for line in path.read_text(encoding="utf-8").splitlines()]
    rated = sum(s != -1 for s in scores)  # show_result.py: df[df["score"] != -1], then the mean
    args = ("parse", path, "-p", "mtbench-single@2", "--gold", gold, "--key-field", "question_id",
            "--key-field", "model", "--key-field", "turn", "--gold-field", "rating", "--replicates", "0")
    run = json.loads(_run(*args, "-f", "json").stdout)["runs"][0]
    assert (run["accuracy"]["counted"], run["accuracy"]["correct"]) == (rated, 1) == (4, 1)
    assert run["unparsed_rule"] == {"policy": "intersect", "source_rule": "intersect",
                                    "source_rule_says": {"fastchat-single@1": FASTCHAT_RULE[19:]},
                                    "given": False, "departs_from_source": False}
    wrong = json.loads(_run(*args, "--unparsed", "wrong", "-f", "json").stdout)["runs"][0]
    assert wrong["accuracy"]["counted"] == len(scores) == 6 and wrong["unparsed_rule"]["departs_from_source"] is True
    text = " ".join(_run(*args, "--unparsed", "wrong", env={"COLUMNS": "1000"}).stdout.split())
    assert ("unparsed policy: wrong (an unparsed output counts as wrong): a DEPARTURE from the source's rule, "
            f"intersect ({FASTCHAT_RULE}): --unparsed wrong was chosen, so these figures are not the harness's own "
            "(--unparsed intersect gives them)") in text


PAIR_RULE = "FastChat's show_result.py drops a pairwise record whose winner in either game is 'error' (no verdict found)"
ARENA_RULE = ("Arena-Hard-Auto's show_result.py leaves a game without a verdict out of its battles "
              "(v2.0: the question's whole record)")


@pytest.mark.parametrize(("path", "reader", "parser", "rule"), [
    (DATA / "fastchat" / "gpt-4_pair.jsonl", "fastchat-pair@1", "mtbench-pair@1", PAIR_RULE),
    (DATA / "fastchat" / "gpt-4_pair.jsonl", "fastchat-pair-winners@1", None, PAIR_RULE),
    (None, "arena-hard-judgment@1", "arena-hard@1", ARENA_RULE),
    (None, "arena-hard-score@1", None, ARENA_RULE),
])
def test_fastchat_pairs_and_arena_hard_declare_show_results_rule(tmp_path, path, reader, parser, rule):
    if path is None:  # an Arena-Hard-Auto v0.1 judgment file: two games a question, one without a verdict
        games = [[("[[A>B]]", "A>B"), ("[[B>A]]", "B>A")], [("[[A=B]]", "A=B"), ("no verdict here", None)]]
        path = tmp_path / "gpt-4-0613.jsonl"
        path.write_text("".join(json.dumps({"question_id": f"q{k}", "model": "gpt-4-0613", "judge": "gpt-4-1106-preview",
                                            "games": [{"user_prompt": "...", "judgment": j, "score": sc}
                                                      for j, sc in g]}) + "\n"
                                for k, g in enumerate(games)), encoding="utf-8")
    args = ["parse", path, "--reader", reader, "--replicates", "0", *(["-p", parser] if parser else [])]
    (out,) = json.loads(_run(*args, "-f", "json").stdout)["runs"]
    assert out["unparsed_rule"] == {"policy": "intersect", "source_rule": "intersect",
                                    "source_rule_says": {reader: rule}, "given": False, "departs_from_source": False}
    text = " ".join(_run(*args, "--unparsed", "wrong", env={"COLUMNS": "1000"}).stdout.split())
    assert f"a DEPARTURE from the source's rule, intersect ({reader}: {rule})" in text
