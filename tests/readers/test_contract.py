"""The reader contract: registry, content detection, --reader everywhere, provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.load import load_run
from replicate.labels import LabelSet
from replicate.reading.contract import READERS, Reader, Record, Source, reader
from support.paths import ROOT

EXAMPLE = ROOT / "fixtures" / "example"
JSONL = EXAMPLE / "results" / "alpha-2024-05_annotations.jsonl"
P = "umbrela-fallback@1"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_builtins_ship_through_the_entry_point_group():
    assert {"judge-jsonl@1", "exam@1"} <= set(READERS.names())
    assert READERS.origin("judge-jsonl@1") == "replicate-audit"
    exam = READERS.get("exam@1")
    assert exam.yields == "labels" and exam.decided == "exam-grades" and exam.label_set == LabelSet.ordinal(0, 3)


def test_unknown_reader_names_the_registered_ones():
    with pytest.raises(UsageError, match=r"unknown reader 'trec@1'.*registered readers: .*judge-jsonl@1"):
        READERS.get("trec@1")
    res = _run("compare", JSONL, JSONL, "--reader", "nope@1", "-p", P)
    assert res.exit_code == 2 and "unknown reader 'nope@1'" in res.stderr


def test_reader_checks_its_declaration():
    with pytest.raises(ValueError, match="declares its label_set"):
        Reader("x-y@1", "d", lambda h, o: "no", lambda s: [], yields="labels")
    with pytest.raises(ValueError, match="yields must be one of"):
        Reader("x-y@1", "d", lambda h, o: "no", lambda s: [], yields="grades")  # type: ignore[arg-type]


def test_detection_by_content_not_by_name(tmp_path):
    # a flat JSONL file named like an EXAM file, and an EXAM file named .jsonl
    exam_src = EXAMPLE / "exam" / "exam-beta-1.jsonl.gz"
    odd = tmp_path / "looks-like-exam.jsonl.gz"
    import gzip

    odd.write_bytes(gzip.compress(JSONL.read_bytes()))
    exam_named_jsonl = tmp_path / "exam.jsonl.gz"
    exam_named_jsonl.write_bytes(exam_src.read_bytes())
    diag = Diagnostics()
    a = load_run("a", odd, diagnostics=diag)
    b = load_run("b", exam_named_jsonl, diagnostics=diag)
    assert [f.reader for f in a.files] == ["judge-jsonl@1"] and a.files[0].chosen == "by content"
    assert [f.reader for f in b.files] == ["exam@1"] and b.yields == "labels"
    given = load_run("c", JSONL, diagnostics=diag, reader="judge-jsonl@1")
    assert given.files[0].chosen == "given"


def test_unknown_shape_lists_the_readers(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    with pytest.raises(BadInput, match=r"notes.txt: unknown shape: no installed reader recognises this file "
                                       r"\(first line: 'hello'\); readers: .*judge-jsonl@1 \(Flat JSONL"):
        load_run("r", bad, diagnostics=Diagnostics())


def test_ambiguous_shape_is_an_error_naming_both(tmp_path):
    @reader("also-jsonl@1", "Claims every JSON object.", sniff=lambda head, o: "yes" if head.startswith(b"{") else "no")
    def also(source: Source):
        """Test reader."""
        return []

    READERS.register(also)
    try:
        with pytest.raises(BadInput, match=r"ambiguous shape: several readers recognise this file: also-jsonl@1, judge-jsonl@1"):
            load_run("r", JSONL, diagnostics=Diagnostics())
        # naming the reader settles it
        assert len(load_run("r", JSONL, diagnostics=Diagnostics(), reader="judge-jsonl@1")) == 128
    finally:
        READERS.unregister("also-jsonl@1")


def test_a_plugin_reader_of_verdicts_feeds_compare(tmp_path):
    """A reader yielding verdicts only (no label, no gold): cells work, the parser is its pseudo-parser."""

    def sniff(head: bytes, options) -> str:
        return "yes" if head.startswith(b"id,correct") else "no"

    @reader("csv-verdicts@1", "id,correct CSV.", sniff=sniff, yields="verdicts", key_names=("id",), has_gold=False)
    def verdicts(source: Source):
        """id,correct per line."""
        for line_no, line in source.lines():
            if line_no == 1:
                continue
            item, correct = line.decode().split(",")
            yield Record((item,), line_no, correct={"1": True, "0": False, "": None}[correct])

    READERS.register(verdicts)
    try:
        old, new = tmp_path / "old.csv", tmp_path / "new.csv"
        old.write_text("id,correct\na,1\nb,1\nc,0\nd,0\ne,1\n")
        new.write_text("id,correct\na,1\nb,0\nc,1\nd,0\ne,\n")
        res = _run("compare", old, new, "-f", "json")
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        # shared and scored on both sides: a, b, c, d (e unscored on the new side, dropped by intersect)
        assert out["cells"] == {"both": 1, "only_old": 1, "only_new": 1, "neither": 1}
        assert out["reader"] == "csv-verdicts@1" and out["old"]["files"][0]["reader"] == "csv-verdicts@1"
        assert "reader: csv-verdicts@1 (chosen by content" in res.stderr
    finally:
        READERS.unregister("csv-verdicts@1")


@pytest.mark.parametrize("rows,message", [
    ("a,yes\nb,1\n", r"v\.csv:2: reader gave a verdict that is not True/False/None: 'yes'"),
    ("a,[1]\n", r"v\.csv:2: reader gave a verdict that is not True/False/None: '\[1\]'"),
    ("@bad,[1]\n", r"v\.csv:2: reader gave a key that is not a non-empty tuple of strings: 'bad'"),
    ("a,1\n@b,0\n", r"v\.csv:3: reader gave a key that is not a non-empty tuple of strings: 'b'"),
])
def test_a_plugin_readers_bad_verdict_or_key_is_bad_input(tmp_path, rows, message):
    """What a plugin reader of verdicts gives that is not a verdict (or a key that is not a tuple, which wins
    over the verdict on the same record) is bad input naming the file and the line, never a traceback."""

    @reader("raw-verdicts@1", "id,correct CSV, the cell as written.", sniff=lambda h, o: "no", yields="verdicts",
            key_names=("id",), has_gold=False)
    def verdicts(source: Source):
        """id,correct per line; the correct cell passed on as text (1/0 as booleans); a key after @ as a str."""
        for line_no, line in source.lines():
            if line_no == 1:
                continue
            item, correct = line.decode().split(",")
            key = item[1:] if item.startswith("@") else (item,)
            yield Record(key, line_no, correct={"1": True, "0": False}.get(correct, correct))  # type: ignore[arg-type]

    READERS.register(verdicts)
    try:
        f = tmp_path / "v.csv"
        f.write_text("id,correct\n" + rows)
        with pytest.raises(BadInput, match=message):
            load_run("r", f, diagnostics=Diagnostics(), reader="raw-verdicts@1")
        res = _run("parse", f, "--reader", "raw-verdicts@1")
        assert res.exit_code == 2 and "Error: " in res.output, res.output  # bad input, not a traceback (exit 1)
    finally:
        READERS.unregister("raw-verdicts@1")


def test_reader_is_in_every_output_provenance(tmp_path):
    other = EXAMPLE / "results" / "alpha-2024-08_annotations.jsonl"
    res = _run("compare", JSONL, other, "-p", P, "-f", "json", "--reader", "judge-jsonl@1")
    out = json.loads(res.stdout)
    assert out["reader"] == "judge-jsonl@1" and out["parser"] == P
    assert [f["reader"] for f in out["old"]["files"]] == ["judge-jsonl@1"]
    assert res.stderr == ""  # named, so no choice to report
    md = _run("compare", JSONL, other, "-p", P, "-f", "markdown").stdout
    assert "### Input" in md and "- Reader: `judge-jsonl@1` (every file)" in md
    floor = json.loads(_run("floor", JSONL, other, "-p", P, "-f", "json").stdout)
    assert floor["reader"] == "judge-jsonl@1"
    mat = json.loads(_run("matrix", JSONL, other, "-p", P, "-f", "json").stdout)
    assert mat["reader"] == "judge-jsonl@1"
    parse = json.loads(_run("parse", JSONL, "-p", P, "-f", "json").stdout)
    assert parse["runs"][0]["reader"] == "judge-jsonl@1"


def test_runs_toml_names_a_reader_per_run(tmp_path):
    exam = EXAMPLE / "exam" / "exam-beta-1.jsonl.gz"
    (tmp_path / "runs.toml").write_text(
        "[runs]\n"
        f'one = {{ files = ["{exam}"], reader = "exam@1" }}\n'
        f'two = {{ files = ["{exam}"], reader = "judge-jsonl@1" }}\n'
    )
    res = _run("chain", "--runs", tmp_path / "runs.toml", "-f", "json")
    # judge-jsonl@1 named for an EXAM file: its error names file and line, it does not guess
    assert res.exit_code == 2 and "expected a JSON object, got a JSON array" in res.stderr
    (tmp_path / "runs.toml").write_text("[runs]\n" f'one = {{ files = ["{exam}"], reader = 3 }}\n')
    res = _run("chain", "--runs", tmp_path / "runs.toml")
    assert res.exit_code == 2 and "reader must be a reader name" in res.stderr


def test_readers_list_and_show():
    res = _run("readers", "list", "-f", "json")
    names = [r["name"] for r in json.loads(res.stdout)["readers"]]
    assert "judge-jsonl@1" in names and "exam@1" in names
    show = _run("readers", "show", "exam@1")
    assert show.exit_code == 0 and "shown as parser: exam-grades" in show.stdout and "round(3 x covered / total)" in show.stdout
    assert _run("readers", "show", "exam").exit_code == 2


def test_records_path_equals_bulk_path():
    """judge-jsonl@1's records() gives the items its bulk path gives (the contract is one reading)."""
    from replicate.judge.load.items import Items
    from replicate.judge.load.readfile import read_file
    from replicate.judge.load.records import load_records
    from replicate.reading.contract import ReadOptions
    from replicate.reading.jsonl import FieldSpec

    bulk = load_run("r", JSONL, diagnostics=Diagnostics())
    r = READERS.get("judge-jsonl@1")
    acc = Items.empty()
    f = read_file(Path(JSONL))
    load_records(r, f, 0, ReadOptions(fields=FieldSpec()), acc, [f], Diagnostics(), "results")
    assert acc.keys.tolist() == list(bulk.keys) and list(acc.outputs_from([f])) == list(bulk.outputs)
    assert acc.gold_array().tolist() == bulk.gold.tolist()


@pytest.mark.parametrize(
    ("reader_name", "path"),
    [
        ("trec-qrels@1", ROOT / "tests" / "readers" / "data" / "crlf_q0.txt"),
        ("trec-qrels@1", ROOT / "tests" / "readers" / "data" / "old.txt"),
        ("umbrela-judge@1", ROOT / "tests" / "readers" / "data" / "umbrela_a.jsonl"),
        ("umbrela-judge@1", ROOT / "tests" / "readers" / "data" / "umbrela_text.jsonl"),
        ("gold-jsonl@1", ROOT / "tests" / "readers" / "data" / "gold.jsonl"),
    ],
)
def test_bulk_paths_equal_the_records_path(reader_name, path):
    """A reader's bulk path gives exactly the items, labels, lines and warnings of its records()."""
    from replicate.judge.load.items import Items
    from replicate.judge.load.readfile import read_file
    from replicate.judge.load.records import load_records
    from replicate.reading.contract import ReadOptions
    from replicate.reading.jsonl import FieldSpec

    bulk_diag = Diagnostics()
    bulk = load_run("r", path, diagnostics=bulk_diag, reader=reader_name)
    acc, diag = Items.empty(), Diagnostics()
    f = read_file(Path(path))
    rf = load_records(READERS.get(reader_name), f, 0, ReadOptions(fields=FieldSpec()), acc, [f], diag, "data")
    assert acc.keys.tolist() == list(bulk.keys) and list(acc.outputs_from([f])) == list(bulk.outputs)
    assert acc.label_array().tolist() == ([] if bulk.labels is None else bulk.labels.tolist())
    assert acc.gold_array().tolist() == bulk.gold.tolist()
    assert acc.origin_columns()[1].array().tolist() == bulk.origins.line.tolist()
    assert rf.lines == bulk.files[0].lines and rf.records == bulk.files[0].records
    assert [(w.code, w.line) for w in diag.warnings] == [(w.code, w.line) for w in bulk_diag.warnings]
