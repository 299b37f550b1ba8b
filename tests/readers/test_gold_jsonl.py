"""gold-jsonl@1: gold labels kept apart from the runs in JSONL, read with --gold.

The runs are the qrels of test_qrels.py (data/old.txt, data/new.txt); the gold
JSONL holds the same grades as data/gold.txt, so every figure must equal the
hand count made there against the qrels gold.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.judge.load import load_run
from replicate.reading.contract import ReadOptions
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data"
R = "gold-jsonl@1"
# data/gold.txt, line by line: (query, passage, grade)
GOLD = [("q1", "p1", 3), ("q1", "p2", 0), ("q1", "p3", 2), ("q2", "p1", 1), ("q2", "p4", 0), ("q2", "p5", 2), ("q3", "p7", 1)]
# by hand (test_qrels.py): shared items with gold q1/p1..p3, q2/p1, q2/p4, q2/p5 (q9/p9 has no gold)
CELLS = {"both": 2, "only_old": 2, "only_new": 2, "neither": 0}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _write(path, rows: list) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")


def _gold_file(tmp_path, grade=lambda g: g, name="gold.jsonl"):
    path = tmp_path / name
    _write(path, [{"query_id": q, "corpus_id": p, "original_qrel_score": grade(g), "annotator": "h1"} for q, p, g in GOLD])
    return path


def _compare(gold, *flags):
    return _run("compare", DATA / "old.txt", DATA / "new.txt", "--reader", "trec-qrels@1", "--gold", gold,
                "-f", "json", "--replicates", "0", *flags)


def test_gold_jsonl_gives_the_figures_of_the_same_gold_as_qrels(tmp_path):
    res = _compare(_gold_file(tmp_path))
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == CELLS and out["n"] == 6 and out["changed"] == 4
    assert out["gold"]["reader"] == R and out["gold"]["entries"] == 7
    assert out["gold"]["runs"][0]["first_gold_without_item"] == ["q3 / p7"]
    # chosen by content (key and gold fields, no output field), and said so
    assert f"reader: {R} (chosen by content; --reader to choose) for " in res.stderr
    qrels = json.loads(_compare(DATA / "gold.txt").stdout)
    assert {k: qrels[k] for k in ("cells", "n", "changed", "em_old", "em_new")} == \
        {k: out[k] for k in ("cells", "n", "changed", "em_old", "em_new")}


def test_grades_as_text_and_floats_read_as_grades_and_other_fields_are_ignored(tmp_path):
    gold = _gold_file(tmp_path, grade=lambda g: str(g) if g % 2 else float(g))
    res = _compare(gold)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["cells"] == CELLS


def test_other_key_and_gold_fields(tmp_path):
    path = tmp_path / "human.jsonl"
    _write(path, [{"qid": q, "docid": p, "relevance": g} for q, p, g in GOLD])
    res = _compare(path, "--key-field", "qid", "--key-field", "docid", "--gold-field", "relevance", "--gold-reader", R)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["cells"] == CELLS


def test_a_gold_only_file_given_as_a_run_is_refused_pointing_to_gold(tmp_path):
    gold = _gold_file(tmp_path)
    # named as its reader: refused as a run
    res = _run("parse", gold, "--reader", R, "-p", "umbrela-fallback@1")
    assert res.exit_code == 2
    assert f"run 'gold': {gold} holds gold labels only ({R}), not a judge's reading; give it with --gold FILE" in res.stderr
    # by content, a run is never read as gold alone: it is a judge file without its output field
    res = _run("compare", gold, DATA / "new.txt", "--gold", DATA / "gold.txt")
    assert res.exit_code == 2
    assert "gold.jsonl:1: record has no output field: looked for 'model_output', 'gemini_output'" in res.stderr
    assert "a file of gold alone goes with --gold" in res.stderr


def test_a_judge_file_is_not_taken_for_gold_only(tmp_path):
    path = tmp_path / "judge.jsonl"
    _write(path, [{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 3, "model_output": "##final score: 3"}])
    res = _run("parse", path, "-p", "umbrela-fallback@1", "-f", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"][0]["reader"] == "judge-jsonl@1"


def _load(path, **fields):
    from replicate.judge.load import FieldSpec

    spec = FieldSpec(**fields)
    return load_run("gold", [path], fields=spec, diagnostics=Diagnostics(), reader=R, options=ReadOptions(fields=spec))


@pytest.mark.parametrize("rows, message", [
    (['{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 3}', "[1, 2]"], r"gold\.jsonl:2: expected a JSON object, got a JSON array"),
    ([{"query_id": "q1", "original_qrel_score": 3}], r"gold\.jsonl:1: record lacks key field 'corpus_id'"),
    ([{"query_id": "q1", "corpus_id": 1.5, "original_qrel_score": 3}], r"gold\.jsonl:1: key field 'corpus_id' must be a string or an integer"),
    ([{"query_id": "q1", "corpus_id": "p1"}], r"gold\.jsonl:1: gold field 'original_qrel_score' is missing"),
    ([{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": None}], r"gold\.jsonl:1: gold field 'original_qrel_score' is null"),
    ([{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 2.5}], r"gold\.jsonl:1: .*2\.5"),
    ([{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": "relevant"}], r"gold\.jsonl:1: .*'relevant'"),
    ([{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 3}, {"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 1}],
     r"gold\.jsonl:2: duplicate item q1 / p1 with different content \(first at .*gold\.jsonl:1\)"),
])
def test_bad_gold_lines_are_refused_naming_file_and_line(tmp_path, rows, message):
    path = tmp_path / "gold.jsonl"
    _write(path, rows)
    with pytest.raises(BadInput, match=message):
        _load(path)


def test_a_torn_last_line_is_refused_naming_it(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 3}\n{"query_id": "q1", "corp', encoding="utf-8")
    with pytest.raises(BadInput, match=r"gold\.jsonl:2: .*(torn|unterminated|cut)"):
        _load(path)


def test_blank_lines_are_skipped_with_a_warning_and_a_repeated_identical_line_is_kept_once(tmp_path):
    path = tmp_path / "gold.jsonl"
    row = {"query_id": "q1", "corpus_id": "p1", "original_qrel_score": 3}
    _write(path, [row, "", row, {"query_id": "q1", "corpus_id": "p2", "original_qrel_score": 0}])
    diag = Diagnostics()
    from replicate.judge.load import FieldSpec

    run = load_run("gold", [path], fields=FieldSpec(), diagnostics=diag, reader=R, options=ReadOptions(fields=FieldSpec()))
    assert len(run) == 2 and run.gold.tolist() == [3, 0]
    assert diag.counts().get("blank-line") == 1


def test_the_common_case_is_read_in_bulk_and_text_gold_line_by_line(tmp_path):
    """The bulk path takes whole-number grades; text gold falls back to the careful path, same items."""
    from replicate.judge.load.fast import FAST_PATHS
    from replicate.judge.load.items import Items
    from replicate.judge.load.readfile import read_file
    from replicate.reading.contract import READERS
    from replicate.reading.jsonl import FieldSpec

    reader = READERS.get(R)
    for path, bulk in ((_gold_file(tmp_path), True), (_gold_file(tmp_path, grade=str, name="text.jsonl"), False)):
        acc, f = Items.empty(), read_file(path)
        rf = FAST_PATHS[R](reader, f, 0, ReadOptions(fields=FieldSpec()), acc, [f], Diagnostics(), "data")
        assert any(lines is None for *_, lines in acc.blocks) is bulk, path  # a bulk block: lines 1..n
        assert acc.gold_array().tolist() == [g for _, _, g in GOLD] and rf.records == rf.lines == 7
