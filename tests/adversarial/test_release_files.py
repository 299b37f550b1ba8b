"""Degenerate release files found by the release-files hunt (torn, mis-encoded, of the wrong JSON type, corrupt
containers, odd file-system entries) end in `Error: FILE[:LINE]: ...` and exit 2, never a traceback."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

EXAMPLE = ROOT / "fixtures" / "example"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_verify_refuses_a_run_file_that_is_a_loop_of_symbolic_links(tmp_path):
    # before: Path.resolve() raised RuntimeError('Symlink loop ...'): a traceback, exit 1
    root = tmp_path / "release"
    shutil.copytree(EXAMPLE, root)
    target = root / "results" / "alpha-2024-05_annotations.jsonl"
    target.unlink()
    os.symlink(root / "results" / "other.jsonl", target)
    os.symlink(target, root / "results" / "other.jsonl")
    res = _run("verify", root / "claims.toml", "--root", root)
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"Error: {root / 'claims.toml'}: [runs] file 'results/alpha-2024-05_annotations.jsonl' is a "
                          "loop of symbolic links (each points on to another, never to a file): it is not read\n")


def test_verify_names_the_claims_file_and_run_of_a_directory_no_reader_reads(tmp_path):
    # before: 'Error: ROOT/emptydir: is a directory holding none of ...' (neither the claims file nor the run)
    root = tmp_path / "release"
    shutil.copytree(EXAMPLE, root)
    (root / "emptydir").mkdir()
    raw = (root / "claims.toml").read_text()
    (root / "claims.toml").write_text(raw.replace('"results_2020/alpha-2024-05_annotations.jsonl"', '"emptydir"'))
    res = _run("verify", root / "claims.toml", "--root", root)
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"Error: {root / 'claims.toml'}: [runs] alpha-2024-05: emptydir is a directory holding none "
                          "of the files a reader reads a directory through (helm-run@1: per_instance_stats.json or "
                          "display_predictions.json); it holds: nothing\n")


def test_verify_names_the_claims_file_and_run_of_an_unknown_reader_in_runs(tmp_path):
    # before: 'Error: unknown reader ...' (neither the claims file nor the run)
    root = tmp_path / "release"
    shutil.copytree(EXAMPLE, root)
    raw = (root / "claims.toml").read_text()
    entry = '["results/alpha-2024-05_annotations.jsonl", "results_2020/alpha-2024-05_annotations.jsonl"]'
    (root / "claims.toml").write_text(raw.replace(
        entry, '{ files = ["results/alpha-2024-05_annotations.jsonl"], reader = "umbrela-judg@1" }'))
    res = _run("verify", root / "claims.toml", "--root", root)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"Error: {root / 'claims.toml'}: [runs] alpha-2024-05: unknown reader "
                                 "'umbrela-judg@1' (did you mean umbrela-judge@1?); registered readers: ")


def test_verify_refuses_an_empty_runs_table_naming_the_claims_file(tmp_path):
    # before: 'Error: runs named by claims were not loaded: alpha-2024-05, ...' (no file, no cause)
    root = tmp_path / "release"
    shutil.copytree(EXAMPLE, root)
    raw = (root / "claims.toml").read_text()
    start = raw.index("\n[runs]\n") + 1
    end = raw.index("\n#", start)
    (root / "claims.toml").write_text(raw[:start] + "[runs]\n" + raw[end:])
    res = _run("verify", root / "claims.toml", "--root", root)
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"Error: {root / 'claims.toml'}: 1 problem in the claims file:\n"
                          "       [runs]: the table lists no runs, and claims name runs (expected name = [file, ...])\n")


DATA = ROOT / "tests" / "readers" / "data"


def _arena_hard(path):
    from readers.test_arena_hard import v01, write

    return write(path, *(v01(f"q{i}", ("[[A>B]]", "A>B"), ("[[B>A]]", "B>A")) for i in range(3)))


def _battles(path):
    from pairwise.test_arena import battle_rows

    path.write_text("".join(json.dumps(r) + "\n" for r in battle_rows()), encoding="utf-8")
    return path


#: reader -> (how its file is made, the command reading it, the taken key written twice, another value for it)
TAKEN_TWICE = {
    "fastchat-single": (lambda p: shutil.copy(DATA / "fastchat" / "gpt-4_single.jsonl", p), ["mtbench"], "judgment",
                        "Rating: [[1]]"),
    "fastchat-pair": (lambda p: shutil.copy(DATA / "fastchat" / "gpt-4_pair.jsonl", p), ["pairwise"], "g1_judgment",
                      "[[B]]"),
    "arena-hard": (_arena_hard, ["pairwise"], "model", "another-model"),
    "arena-battles": (_battles, ["pairwise"], "winner", "tie"),
    "umbrela": (lambda p: shutil.copy(DATA / "umbrela_a.jsonl", p), ["parse", "-p", "umbrela-fallback@1"], "prediction",
                "final score: 0"),
    "lm-eval": (lambda p: shutil.copy(sorted((DATA / "lm_eval").glob("samples_gsm8k_*.jsonl"))[0], p),
                ["parse", "--filter", "strict-match", "--correct-field", "exact_match"], "exact_match", 0.5),
    "gold-jsonl": (lambda p: shutil.copy(DATA / "gold.jsonl", p), ["agreement", DATA / "old.txt", "--gold"],
                   "original_qrel_score", 1),
}


@pytest.mark.parametrize("reader", sorted(TAKEN_TWICE))
def test_a_taken_key_written_twice_with_another_value_is_refused_naming_file_and_line(tmp_path, reader):
    # before: JSON keeps the last of the two values without a word (these readers checked no repeated key, and
    # the umbrela and gold fast paths read such lines in bulk)
    make, command, key, other = TAKEN_TWICE[reader]
    path = tmp_path / f"{reader}.jsonl"
    make(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[1])
    assert key in first and first[key] != other
    lines[1] = json.dumps(first)[:-1] + f", {json.dumps(key)}: {json.dumps(other)}}}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = _run("--no-cache", *command[:1], *([path] if command[0] != "agreement" else []), *command[1:],
               *([path] if command[0] == "agreement" else []))
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].startswith(
        f"Error: {path}:2: key {key!r} appears 2 times in one record, with different values (")


def _annotations(path):
    from pairwise.test_alpacaeval import annotations

    return annotations(path, [2, 1, 2, 1])


def _battle_array(path):
    from pairwise.test_arena import battle_rows

    path.write_text(json.dumps(battle_rows(), indent=2), encoding="utf-8")
    return path


def _lm_eval_array(path):
    shutil.copy(DATA / "lm_eval" / "legacy" / "v0.4.0" / "pretrained__EleutherAI__pythia-160m_gsm8k.jsonl", path)
    return path


#: reader -> (how its one-array file is made, the command, the taken key written twice, another value)
ARRAY_TWICE = {
    "alpacaeval": (_annotations, ["pairwise"], "preference", 1.5),
    "arena-battles": (_battle_array, ["pairwise"], "winner", "tie"),
    "lm-eval-0.4.0-array": (_lm_eval_array, ["parse", "--correct-field", "exact_match"], "exact_match", 0.5),
}


@pytest.mark.parametrize("reader", sorted(ARRAY_TWICE))
def test_a_taken_key_written_twice_in_an_array_element_is_refused_naming_its_line(tmp_path, reader):
    # before: the one-array readers (array_objects) checked no repeated key: the JSON parser kept the last value
    make, command, key, other = ARRAY_TWICE[reader]
    path = make(tmp_path / f"{reader}.json")
    elements = json.loads(path.read_text(encoding="utf-8"))
    assert key in elements[0] and elements[0][key] != other
    text = json.dumps(elements, indent=2)
    first_end = text.index("\n  }")  # the first element's last field, then ours
    path.write_text(text[:first_end] + f',\n    {json.dumps(key)}: {json.dumps(other)}' + text[first_end:],
                    encoding="utf-8")
    res = _run("--no-cache", command[0], path, *command[1:])
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].startswith(  # the line where the element opens
        f"Error: {path}:2: key {key!r} appears 2 times in one record, with different values (")


def test_a_benchmark_log_given_as_a_trials_table_is_refused_saying_what_a_trials_table_is():
    # before: 'invalid JSON: unexpected end of data: line 1 column 2 (char 1)', about a well-formed JSON file
    log = DATA / "helm" / "runs" / "v1" / "trials" / "per_instance_stats.json"
    res = _run("items", log)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"Error: {log}:1: invalid JSON (a trials table holds one JSON object a line, or CSV; "
                                 "this file opens a JSON document spread over lines, such as a benchmark log: "
                                 "'replicate import' turns a log into a trials table)")


@pytest.mark.parametrize("name", ["fastchat-pair", "alpacaeval"])
def test_a_judgment_in_two_files_names_both_files_and_lines(tmp_path, name):
    # a retry script's output given beside the original: before, 'the game ... is in more than one run' (no
    # file) and 'an annotation (...) is in more than one FILE' (no file, no annotation)
    if name == "alpacaeval":
        one = _annotations(tmp_path / "annotations.json")
        line = 2
    else:
        one = tmp_path / "gpt-4_pair.jsonl"
        shutil.copy(DATA / "fastchat" / "gpt-4_pair.jsonl", one)
        line = 1
    two = tmp_path / "retried" / one.name
    two.parent.mkdir()
    shutil.copy(one, two)
    res = _run("--no-cache", "pairwise", one, two)
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].endswith(f"({one}:{line} and {two}:{line}); give each "
                                                f"{'once' if name == 'alpacaeval' else 'judgment once'}")


HELM_A = DATA / "helm" / "runs" / "v1" / "mmlu:subject=anatomy,method=multiple_choice_joint,model=example_model-a"


@pytest.mark.parametrize("name, key, before, after", [
    ("per_instance_stats.json", "instance_id", '"instance_id": "id1"', '"instance_id": "id0", "instance_id": "id1"'),
    ("display_predictions.json", "exact_match", '"exact_match": ', '"exact_match": 0.5, "exact_match": '),
])
def test_a_helm_entry_with_a_taken_key_twice_is_refused_naming_where_it_opens(tmp_path, name, key, before, after):
    # before: HELM's JSON document was read with whichever value the parser kept
    text = (HELM_A / name).read_text(encoding="utf-8")
    at = text.index(before)
    path = tmp_path / name
    path.write_text(text[:at] + after + text[at + len(before):], encoding="utf-8")
    opens = text.rfind("\n  {", 0, at)
    line = text.count("\n", 0, opens) + 2  # the line where the entry holding it opens
    res = _run("--no-cache", "parse", path, "--reader", "helm-run@1", "--correct-field", "exact_match")
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].startswith(
        f"Error: {path}:{line}: key {key!r} appears 2 times in one record, with different values (")


def _parse_json(*args):
    """parse's JSON report, less what names the file's bytes (its path, size, sha256 and the label cache's key, the path a warning names)."""
    res = _run("--no-cache", "parse", *args, "-f", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    report.pop("label_cache", None)
    for run in report["runs"]:
        for f in run["files"]:
            del f["path"], f["size"], f["sha256"]
    for w in report["warnings"]["first"]:
        del w["path"]
    return report


@pytest.mark.parametrize("reader", ["umbrela", "lm-eval"])
@pytest.mark.parametrize("extra", [
    # a nested object of its own with a taken key's name written twice: that object's keys, not the record's
    lambda key: f'"meta": {{{json.dumps(key)}: 1, {json.dumps(key)}: 2}}',
    # a taken key's name as text, more often than there are records (the bulk path reads such chunks one by one)
    lambda key: f'"note": "{json.dumps(key)[1:-1]} {json.dumps(key)[1:-1]}", "quoted": {json.dumps(json.dumps(key))}',
    # nested deeper than Python's JSON parser recurses (orjson reads 1,024 levels): the record reads as before
    lambda key: f'"meta": {{{json.dumps(key)}: ' + "[" * 990 + "]" * 990 + "}",
    # a key the reader does not take, written twice
    lambda key: '"untaken": 1, "untaken": 2',
])
def test_a_record_whose_taken_key_name_occurs_elsewhere_reads_as_without_it(tmp_path, reader, extra):
    make, command, key, _ = TAKEN_TWICE[reader]
    plain, path = tmp_path / "plain" / "run.jsonl", tmp_path / "more" / "run.jsonl"
    plain.parent.mkdir(), path.parent.mkdir()
    make(plain)
    lines = plain.read_text(encoding="utf-8").splitlines()
    lines = [line[:-1] + ", " + extra(key) + "}" for line in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want, got = _parse_json(plain, *command[1:]), _parse_json(path, *command[1:])
    assert got == want and "repeated-key" not in got["warnings"]["by_code"] and got["runs"][0]["records"] > 0


def test_a_helm_stat_name_object_with_a_key_twice_reads_as_without_it(tmp_path):
    # a perturbation object inside a Stat's name is not a Stat: its "count" written twice is not the Stat's count
    # (the name's own "stats" key makes an entry key's text occur more often than the entries, so the document
    # is read again keeping every pair)
    text = (HELM_A / "per_instance_stats.json").read_text(encoding="utf-8")
    before = '"name": {'
    at = text.index(before)
    run = tmp_path / HELM_A.name
    shutil.copytree(HELM_A, run)
    (run / "per_instance_stats.json").write_text(
        text[:at] + '"name": {"stats": 0, "perturbation": {"count": 1, "count": 2}, ' + text[at + len(before):], encoding="utf-8")
    args = ("--reader", "helm-run@1", "--correct-field", "exact_match")
    want, got = _parse_json(HELM_A, *args), _parse_json(run, *args)
    assert got == want and "repeated-key" not in got["warnings"]["by_code"] and got["runs"][0]["records"] > 0


@pytest.mark.parametrize("reader", ["umbrela", "lm-eval"])
def test_a_taken_key_twice_beside_a_deep_value_is_still_refused(tmp_path, reader):
    # Python's JSON parser, which reads a record again keeping every pair, recursed past its limit at about 990
    # levels that orjson reads (1,024): the check was skipped and the parser's last value taken without a word
    make, command, key, other = TAKEN_TWICE[reader]
    path = tmp_path / f"{reader}.jsonl"
    make(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = (lines[1][:-1] + f', "deep": {"[" * 1000}{"]" * 1000}, {json.dumps(key)}: {json.dumps(other)}}}')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = _run("--no-cache", "parse", path, *command[1:])
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].startswith(
        f"Error: {path}:2: key {key!r} appears 2 times in one record, with different values (")


def test_an_array_element_nested_past_the_parser_is_refused_naming_its_line(tmp_path):
    # before: json.JSONDecoder.raw_decode raised RecursionError (a traceback, exit 1)
    path = _lm_eval_array(tmp_path / "deep.json")
    elements = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(elements, indent=2)
    at = text.index("\n  {", text.index("\n  {") + 1)  # the second element opens on the line after this
    line = text.count("\n", 0, at) + 2
    text = text[:at] + '\n  {"deep": ' + "[" * 3000 + "]" * 3000 + "}," + text[at:]
    path.write_text(text, encoding="utf-8")
    res = _run("--no-cache", "parse", path, "--correct-field", "exact_match")
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[-1].startswith(
        f"Error: {path}:{line}: a sample in the array is nested deeper than Python's JSON parser reads")
