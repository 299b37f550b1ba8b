"""replicate rankings end to end: output in each format, and bad input as one Error line, exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.rankings import scenario

runner = CliRunner()


def _run(*args):
    res = runner.invoke(app, ["rankings", *map(str, args)])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _error(res, fragment):
    assert res.exit_code == 2, res.output
    errors = [ln for ln in res.output.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1 and fragment in errors[0], res.output
    assert "Traceback" not in res.output


def test_table_json_and_markdown(tmp_path):
    runs, ref, est = scenario(tmp_path)
    res = _run("--runs", tmp_path / "runs", "--qrels", ref, "--qrels", est, "--replicates", 100)
    assert res.exit_code == 0, res.output
    assert "System-ranking agreement on nDCG@10" in res.output and "Kendall's tau-b" in res.output
    assert "1 in the reference only (t1)" in res.output and "1 in the estimate only (t7)" in " ".join(res.output.split())
    flat = " ".join(res.output.split())
    assert "a topic a qrels judges and the run has no result for is scored 0" in flat
    assert "sys06 1 1 1 1" in flat and "sys05 0 1 0 1" in flat
    assert "100 replicates, seed 0" in flat
    body = json.loads(_run("--runs", *runs, "--qrels", ref, "--qrels", est, "--replicates", 100, "-f", "json").output)
    assert body["measure"] == "nDCG@10" and body["library"].startswith("ir-measures ")
    assert set(body["statistics"]) == {"kendall_tau", "tau_ap", "spearman"}
    assert body["statistics"]["kendall_tau"]["interval"]["seed"] == 0
    for stat in body["statistics"].values():  # as tests/cli/test_interval_coverage.py asks of every rate
        assert {"low", "high", "method", "replicates", "cluster"} <= set(stat["interval"])
    assert [s["name"] for s in body["systems"]] == [p.stem for p in runs]
    assert body["qrels"]["reference"]["file"]["sha256"] and body["warnings"]["count"] == 0
    md = _run("--runs", *runs, "--qrels", ref, "--qrels", est, "--replicates", 0, "-f", "markdown").output
    assert md.startswith("## System-ranking agreement") and "| Kendall's tau-b" in md


def test_runs_option_then_more_files(tmp_path):
    runs, ref, est = scenario(tmp_path)
    res = _run("--runs", *runs, "--qrels", ref, "--qrels", est, "--replicates", 0, "-f", "json")
    assert len(json.loads(res.output)["systems"]) == len(runs)


@pytest.mark.parametrize(("line", "fragment"), [
    ("t2 Q0 d2-1 1 x sys01", "score 'x' is not a finite number"),
    ("t2 Q0 d2-1 1 1.0", "expected 6 whitespace-separated columns"),
])
def test_a_bad_run_line(tmp_path, line, fragment):
    runs, ref, est = scenario(tmp_path)
    text = runs[0].read_text().splitlines()
    n = len(text) + 1
    runs[0].write_text("\n".join([*text, line]) + "\n")
    _error(_run("--runs", *runs, "--qrels", ref, "--qrels", est), f"{runs[0]}:{n}: {fragment}")


def test_a_duplicate_result(tmp_path):
    runs, ref, est = scenario(tmp_path)
    text = runs[1].read_text().splitlines()
    runs[1].write_text("\n".join([*text, text[0]]) + "\n")
    docid, qid = text[0].split()[2], text[0].split()[0]
    _error(_run("--runs", *runs, "--qrels", ref, "--qrels", est),
           f"{runs[1]}:{len(text) + 1}: docid {docid!r} is retrieved twice for topic {qid!r} (first at line 1)")


def test_bad_requests(tmp_path):
    runs, ref, est = scenario(tmp_path)
    _error(_run("--runs", *runs, "--qrels", ref), "--qrels must name exactly two files")
    _error(_run("--runs", *runs, "--qrels", ref, "--qrels", est, "--measure", "nDCG10"),
           "--measure 'nDCG10' is not an ir-measures measure name")
    _error(_run("--qrels", ref, "--qrels", est), "--runs must name the run files to rank")
    _error(_run("--runs", runs[0], "--qrels", ref, "--qrels", est), "--runs must name two or more systems")
    _error(_run("--runs", *runs, "--qrels", ref, "--qrels", est, "--confidence", "1.5"),
           "--confidence must lie in (0, 1)")


@pytest.mark.parametrize("measure, fragment", [
    ("Judged@0", "has cutoff 0: a cutoff counts the top results of each topic and must be 1 or more"),
    ("P@1.5", "is not a valid ir-measures measure (invalid param cutoff=1.5)"),
    ("IPrec@2", "is not a valid ir-measures measure (invalid param recall=2)"),
    ("SDCG@10", "needs the parameter max_rel (maximum relevance score)"),
    ("RBP(p=0.5)", "is not computed by any installed ir-measures provider (Unsupported measures"),
    ("P(rel=0)@10", "has rel=0: the lowest grade counted relevant must be 1 or more"),
    ("AP(rel=0)", "has rel=0: the lowest grade counted relevant must be 1 or more"),
    ("nDCG(gains={1:0.5})@10", "maps a grade to a gain that is not a whole number"),
])
def test_a_measure_ir_measures_cannot_compute(tmp_path, measure, fragment):
    """Measures ir-measures parses but cannot compute are bad input, not a ZeroDivisionError, an
    AssertionError or a ValueError from inside ir-measures."""
    runs, ref, est = scenario(tmp_path)
    _error(_run("--runs", *runs, "--qrels", ref, "--qrels", est, "--measure", measure), f"--measure {measure!r} ")
    _error(_run("--runs", *runs, "--qrels", ref, "--qrels", est, "--measure", measure), fragment)


@pytest.mark.parametrize("measure", ["nDCG@0", "P(rel=2)@0", "ERR@0"])
def test_a_cutoff_of_0_in_a_process_of_its_own(tmp_path, measure):
    """trec_eval aborts the whole process on a cutoff of 0 (an assertion in pytrec_eval's C code, exit
    134) and gdeval's perl script fails on it: refused before any evaluator sees it. Run in a process
    of its own, so that the abort, were it back, fails this test and not the test session."""
    import subprocess
    import sys

    runs, ref, est = scenario(tmp_path)
    p = subprocess.run([sys.executable, "-m", "replicate", "rankings", "--runs", *map(str, runs), "--qrels", str(ref),
                        "--qrels", str(est), "--replicates", "0", "--measure", measure],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == (f"Error: --measure {measure!r} has cutoff 0: a cutoff counts the top results of "
                                "each topic and must be 1 or more, e.g. nDCG@10"), p.stderr
