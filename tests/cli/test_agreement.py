"""`replicate agreement` and compare's agreement JSON end to end (CliRunner, real files), against sklearn."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.parsing import PARSERS, Parser
from support.paths import LLMJUDGE, text_of

metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")

TOY = Parser("toy-grade@1", "the first digit 0-3 in the text", lambda t: next((int(c) for c in t if c in "0123"), None))


@pytest.fixture(autouse=True)
def toy_parser():
    added = TOY.name not in PARSERS
    if added:
        PARSERS.register(TOY)
    yield
    if added:
        PARSERS.unregister(TOY.name)


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


# three queries; run a leaves two outputs unparsed ("none"), run b one
GOLD = [("q1", "d1", 3), ("q1", "d2", 0), ("q1", "d3", 2), ("q1", "d4", 1), ("q2", "d1", 0), ("q2", "d2", 1),
        ("q2", "d3", 3), ("q2", "d4", 2), ("q3", "d1", 0), ("q3", "d2", 2), ("q3", "d3", 1), ("q3", "d4", 3)]
A = ["3", "0", "none", "2", "0", "1", "2", "2", "1", "none", "1", "3"]
B = ["2", "0", "2", "1", "1", "1", "3", "3", "0", "2", "none", "3"]


def _write(path, outputs):
    rows = [{"query_id": q, "corpus_id": d, "original_qrel_score": g, "model_output": o}
            for (q, d, g), o in zip(GOLD, outputs)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _labels(outputs):
    return np.array([np.nan if o == "none" else float(o) for o in outputs])


def _kappa(x, y, weights=None, labels=(0, 1, 2, 3)):
    ok = ~np.isnan(x) & ~np.isnan(y)
    with warnings.catch_warnings(action="ignore"):
        return float(metrics.cohen_kappa_score(x[ok], y[ok], labels=list(labels), weights=weights))


@pytest.fixture
def runs(tmp_path):
    return _write(tmp_path / "a.jsonl", A), _write(tmp_path / "b.jsonl", B)


def test_runs_against_gold_and_each_other_match_sklearn(runs):
    res = run("agreement", *runs, "--parser", TOY.name, "--pairs", "--binarize", "2,1", "--replicates", "50",
              "--seed", "7", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    gold = np.array([g for *_, g in GOLD], dtype=float)
    a, b = _labels(A), _labels(B)
    rows = {(r["left"], r["right"], r["binarize"]): r for r in out["rows"]}
    assert list(rows) == [(x, y, t) for x, y in [("a", "gold"), ("b", "gold"), ("a", "b")] for t in (None, 2, 1)]
    for (left, right, t), row in rows.items():
        x = {"a": a, "b": b}[left]
        y = gold if right == "gold" else b
        if t is None:
            assert row["cohen_kappa"] == pytest.approx(_kappa(x, y), abs=1e-12)
            assert row["cohen_kappa_quadratic"] == pytest.approx(_kappa(x, y, "quadratic"), abs=1e-12)
        else:
            xb, yb = (np.where(np.isnan(v), np.nan, v >= t) for v in (x, y))
            assert row["cohen_kappa"] == pytest.approx(_kappa(xb, yb, labels=(0, 1)), abs=1e-12)
        ok = ~np.isnan(x) & ~np.isnan(y)
        assert row["counted"] == {"nominal": int(ok.sum()), "ordered": int(ok.sum())} and row["parsed"] == int(ok.sum())
        iv = row["interval"]["cohen_kappa"]
        assert iv["seed"] == 7 and iv["replicates"] == 50 and iv["cluster"] == "query_id" and iv["clusters"] == 3
    assert rows[("a", "gold", None)]["unparsed"] == {"left": 2, "right": 0}
    assert out["unparsed_policy"] == "intersect" and out["parser"] == TOY.name and out["domain"] == [0, 1, 2, 3]
    assert out["binarize"] == [2, 1] and out["uncertainty"]["seed"] == 7
    assert [f["sha256"] for r in out["runs"] for f in r["files"]] and out["runs"][0]["unparsed"] == 2
    assert len(out["figures"]) == 10


def test_policy_wrong_counts_unparsed_in_the_nominal_figures(runs):
    res = run("agreement", runs[0], "--parser", TOY.name, "--unparsed", "wrong", "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    row = json.loads(res.stdout)["rows"][0]
    gold = np.array([g for *_, g in GOLD], dtype=float)
    a = _labels(A)
    as_label = np.where(np.isnan(a), 9, a)  # an unparsed output: a label of its own, equal to no grade
    assert row["cohen_kappa"] == pytest.approx(_kappa(as_label, gold, labels=(0, 1, 2, 3, 9)), abs=1e-12)
    assert row["counted"] == {"nominal": 12, "ordered": 10}
    assert row["cohen_kappa_linear"] == pytest.approx(_kappa(a, gold, "linear"), abs=1e-12)
    assert "interval" not in row  # --replicates 0


def test_text_shows_the_table_and_intervals(runs):
    res = run("agreement", *runs, "--parser", TOY.name, "--replicates", "20")
    assert res.exit_code == 0, res.output
    assert "a vs gold, as read" in res.stdout and "alpha ord" in res.stdout
    # 3 query clusters: fewer than the minimum, so no interval, and the text says why (issue 28)
    assert "3 query_id clusters resampled whole, 20 replicates" in res.stdout
    assert "no intervals: too few query_id clusters for an interval: 3, fewer than 5" in res.stdout
    assert "unparsed outputs: a 2 of 12, b 1 of 12" in res.stdout
    # 12 items, fewer than --min-items 100: flagged
    assert "Warning: a vs gold: only n = 10 items, fewer than --min-items 100" in res.stdout
    md = run("agreement", *runs, "--parser", TOY.name, "--replicates", "0", "-f", "markdown")
    assert md.exit_code == 0 and "| a vs gold, as read |" in md.stdout


def test_bad_thresholds_and_nothing_to_compare_are_usage_errors(runs, tmp_path):
    res = run("agreement", *runs, "--parser", TOY.name, "--binarize", "1,x")
    assert res.exit_code == 2
    assert "Error: --binarize takes integer thresholds (grades) separated by commas (e.g. 1,2,3); got '1,x'" in res.output
    no_gold = tmp_path / "q.txt"
    no_gold.write_text("q1 0 d1 2\nq1 0 d2 1\n")
    res = run("agreement", no_gold, "--reader", "trec-qrels@1")
    assert res.exit_code == 2 and "Error:" in res.output


@pytest.mark.parametrize("given, shown", [
    ("9007199254740993", "--binarize 9007199254740993: not a threshold"),  # 2^53 + 1: a float would round it
    ("999999999999999999", "--binarize 999999999999999999: not a threshold"),
    ("0,4", "--binarize 0, 4: not thresholds"),
    ("-5", "--binarize -5: not a threshold"),
])
def test_a_threshold_that_splits_no_labels_is_refused_naming_the_option(runs, given, shown):
    # before: every figure at these thresholds was '-' (each label 0 or each 1), and exit 0
    res = run("agreement", *runs, "--parser", TOY.name, "--binarize", given, "--replicates", "0")
    assert res.exit_code == 2, res.output
    assert f"Error: {shown} of these labels (label >= T is 1): their values are 0, 1, 2, 3, and only 1..3 split them" \
        in res.stderr


@pytest.mark.parametrize("given", ["--5", "\u00b2", "\u0661", "1" * 19, "1" * 5000])
def test_a_threshold_that_is_no_ascii_integer_is_refused_not_a_traceback(runs, given):
    # before: int() raised ValueError ('--5', the superscript two) or read an Arabic-Indic digit as 1
    res = run("agreement", *runs, "--parser", TOY.name, f"--binarize={given}", "--replicates", "0")
    assert res.exit_code == 2, res.output
    assert "Error: --binarize takes integer thresholds (grades) separated by commas" in res.stderr


def test_runs_sharing_no_item_are_bad_input(tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("q1 0 d1 2\n")
    two.write_text("q2 0 d9 1\n")
    res = run("agreement", one, two, "--reader", "trec-qrels@1", "--pairs")
    assert res.exit_code == 2 and "Error: the runs one.txt, two.txt share no item" in res.output


def test_pairs_without_gold(tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("q1 0 d1 2\nq1 0 d2 1\nq2 0 d1 0\nq2 0 d2 3\n")
    two.write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 0\nq2 0 d2 3\n")
    res = run("agreement", one, two, "--reader", "trec-qrels@1", "--pairs", "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows"]
    assert [(r["left"], r["right"]) for r in rows] == [("one.txt", "two.txt")]
    x, y = np.array([2, 1, 0, 3.0]), np.array([2, 0, 0, 3.0])
    assert rows[0]["cohen_kappa_linear"] == pytest.approx(_kappa(x, y, "linear"), abs=1e-12)


def test_compare_json_carries_agreement_of_old_new_and_gold(runs):
    res = run("compare", *runs, "--parser", TOY.name, "--replicates", "30", "-f", "json")
    assert res.exit_code == 0, res.output
    agreement = json.loads(res.stdout)["agreement"]
    assert list(agreement) == ["old_gold", "new_gold", "old_new"]
    gold = np.array([g for *_, g in GOLD], dtype=float)
    a, b = _labels(A), _labels(B)
    for key, (x, y) in {"old_gold": (a, gold), "new_gold": (b, gold), "old_new": (a, b)}.items():
        row = agreement[key]
        assert row["cohen_kappa_linear"] == pytest.approx(_kappa(x, y, "linear"), abs=1e-12)
        assert row["interval"]["cohen_kappa_linear"]["replicates"] == 30


def test_llmjudge_alpha_binarized_against_krippendorff():
    runs = [LLMJUDGE / "h2oloo-zeroshot1.txt.gz", LLMJUDGE / "willia-umbrela1.txt.gz"]
    res = run("agreement", *runs, "--reader", "trec-qrels@1", "--gold", LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz",
              "--binarize", "1,2,3", "--replicates", "0", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    gold = {tuple(line.split()[::2][:2]): int(line.split()[3])
            for line in text_of(LLMJUDGE / "llmjudge_test_qrel_idx.txt.gz").splitlines()}
    for path in runs:
        labels = {tuple(line.split()[::2][:2]): int(line.split()[3]) for line in text_of(path).splitlines()}
        keys = sorted(labels.keys() & gold.keys())
        x, g = np.array([labels[k] for k in keys]), np.array([gold[k] for k in keys])
        for t in (1, 2, 3):
            row = next(r for r in out["rows"] if r["left"] == path.name.removesuffix(".gz") and r["binarize"] == t)
            ref = krippendorff.alpha(np.vstack([x >= t, g >= t]).astype(float), level_of_measurement="ordinal")
            assert row["krippendorff_alpha_ordinal"] == pytest.approx(ref, abs=1e-12)
            assert row["parsed"] == 4423



def test_a_gold_file_matching_no_item_says_so(runs, tmp_path):
    """--gold whose keys match none of the runs' items: the error names the gold file and what to check, not
    'give --gold' (it was given)."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"query_id": "zz", "corpus_id": "zz", "original_qrel_score": 2}\n')
    res = run("agreement", runs[0], "--parser", TOY.name, "--gold", gold)
    assert res.exit_code == 2
    assert f"Error: the gold file {gold} (--gold) covers none of the 12 items of run 'a'" in res.output
    assert "give --gold" not in res.output
