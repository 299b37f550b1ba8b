"""The Parquet readers: lighteval-details@1 (flat and nested layouts) and lm-eval-samples-parquet@1.

Files are laid out as lighteval writes them (tests/support/lighteval_details.py); the lm-eval
Parquet files are the hand-counted lm-eval fixtures converted row for row, as the Hub converts JSONL.
"""

from __future__ import annotations

import json
import shutil

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from typer.testing import CliRunner  # noqa: E402

from replicate.cli.app import app  # noqa: E402
from replicate.diagnostics import Diagnostics  # noqa: E402
from replicate.errors import BadInput  # noqa: E402
from replicate.judge.load import load_run  # noqa: E402
from replicate.judge.load.detect import choose_reader  # noqa: E402
from replicate.judge.load.readfile import read_file  # noqa: E402
from replicate.parsing import UNPARSED  # noqa: E402
from replicate.reading.contract import ReadOptions  # noqa: E402
from support.lighteval_details import flat_detail, nested_detail, write_details  # noqa: E402
from support.paths import ROOT  # noqa: E402

LM_EVAL = ROOT / "tests" / "readers" / "data" / "lm_eval"
OLD = "10110"  # acc per document 0..4, by hand
NEW = "11010"
NAME = "details_leaderboard|arc:challenge|25_2024-05-01T10-00-00.000000.parquet"


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _flat(path, bits: str, **kw):
    return write_details(path, [flat_detail(i, {"acc": float(b), "acc_norm": 1.0}) for i, b in enumerate(bits)], **kw)


def _nested(path, bits: str):
    return write_details(path, [nested_detail(i, {"acc": float(b)}) for i, b in enumerate(bits)])


def _reader_of(path) -> str:
    return choose_reader(read_file(path, sniff=True), ReadOptions()).name


def test_each_layout_is_recognised_by_content(tmp_path):
    flat = _flat(tmp_path / "a" / "x.parquet", OLD)
    nested = _nested(tmp_path / "b" / "x.parquet", OLD)
    text = _flat(tmp_path / "c" / "x.parquet", OLD, as_text=True)
    lm = tmp_path / "d" / "x.parquet"
    lm.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(_lines(LM_EVAL / "samples_gsm8k_2024-05-01T10-00-00.000000.jsonl")), lm)
    assert [_reader_of(p) for p in (flat, nested, text, lm)] == [
        "lighteval-details@1", "lighteval-details@1", "lighteval-details@1", "lm-eval-samples-parquet@1"]
    assert pq.ParquetFile(flat).schema_arrow.names == sorted(flat_detail(0, {}))  # lighteval sorts the columns
    assert pq.ParquetFile(nested).schema_arrow.names == ["doc", "metric", "model_response"]


@pytest.mark.parametrize("layout", ["flat", "nested", "text"])
def test_compare_counts_the_hand_table(tmp_path, layout):
    write = {"flat": _flat, "nested": _nested, "text": lambda p, b: _flat(p, b, as_text=True)}[layout]
    a = write(tmp_path / "old" / NAME, OLD)
    b = write(tmp_path / "new" / NAME, NEW)
    extra = ["--correct-field", "acc"] if layout != "nested" else []
    res = _run("compare", a, b, "-f", "json", "--replicates", "0", *extra)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    # by hand: doc 0 both right, 2 only old, 1 only new, 3 both right, 4 neither
    assert out["cells"] == {"both": 2, "only_old": 1, "only_new": 1, "neither": 1}
    assert out["em_old"] == 3 / 5 and out["reader"] == "lighteval-details@1" and out["parser"] == "lighteval-metric"
    f = out["old"]["files"][0]
    assert f["reader_options"]["correct_field"] == "acc" and f["lines"] == 5 and f["records"] == 5
    assert f["reader_options"]["layout"] == ("nested" if layout == "nested" else "flat")
    assert f["about"] == {"task": "leaderboard|arc:challenge|25"}


def test_several_metrics_need_a_choice(tmp_path):
    p = _flat(tmp_path / NAME, OLD)
    with pytest.raises(BadInput, match=r"\.parquet:1: the samples carry 2 metrics \(acc, acc_norm\); name the 0/1 one "
                                       r"with --correct-field"):
        load_run("r", p, diagnostics=Diagnostics(), reader="lighteval-details@1")


def test_fractional_metric_is_refused_and_null_is_unscored(tmp_path):
    p = write_details(tmp_path / "f.parquet", [nested_detail(0, {"f1": 1.0}), nested_detail(1, {"f1": 0.5})])
    with pytest.raises(BadInput, match=r"f\.parquet:2: 'f1' is a JSON float \(0\.5\), not a 0/1 verdict"):
        load_run("r", p, diagnostics=Diagnostics(), reader="lighteval-details@1")
    q = write_details(tmp_path / "g.parquet", [nested_detail(0, {"em": 1.0}), nested_detail(1, {"em": None})])
    diag = Diagnostics()
    run = load_run("r", q, diagnostics=diag, reader="lighteval-details@1")
    assert run.labels.tolist() == [1, UNPARSED] and [w.code for w in diag.warnings] == ["null-metric"]


def test_nested_row_without_doc_id_is_refused(tmp_path):
    p = write_details(tmp_path / "x.parquet", [nested_detail(0, {"acc": 1.0}, doc_id="")])
    with pytest.raises(BadInput, match=r"x\.parquet:1: the row's doc\.id is empty"):
        load_run("r", p, diagnostics=Diagnostics(), reader="lighteval-details@1")


def test_rows_are_read_by_batch_across_row_groups(tmp_path):
    bits = "".join("1" if (i * 7) % 3 else "0" for i in range(2500))  # three row groups of 1000 rows
    p = write_details(tmp_path / "x.parquet", [flat_detail(i, {"acc": float(b)}) for i, b in enumerate(bits)])
    assert pq.ParquetFile(p).num_row_groups == 3
    run = load_run("r", p, diagnostics=Diagnostics(), reader="lighteval-details@1")
    assert len(run.keys) == 2500 and run.keys[1999] == "1999" and int(run.labels.sum()) == bits.count("1")


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_lm_eval_parquet_reads_as_the_jsonl_reader_does(tmp_path):
    res = {}
    for kind in ("jsonl", "parquet"):
        paths = []
        for src in sorted(LM_EVAL.glob("samples_gsm8k_*.jsonl")):
            if kind == "jsonl":
                dst = tmp_path / kind / src.name
                dst.parent.mkdir(exist_ok=True)
                shutil.copy(src, dst)
            else:
                dst = tmp_path / kind / (src.stem + ".parquet")
                dst.parent.mkdir(exist_ok=True)
                pq.write_table(pa.Table.from_pylist(_lines(src)), dst)
            paths.append(dst)
        # no --unparsed: both readers default to lm-eval's own rule ([invalid] counts as wrong)
        out = _run("compare", *paths, "--filter", "strict-match", "--correct-field", "exact_match", "-f", "json",
                   "--replicates", "0")
        assert out.exit_code == 0, out.output
        res[kind] = json.loads(out.stdout)
    # the hand table of tests/readers/test_lm_eval.py (strict-match)
    assert res["parquet"]["cells"] == res["jsonl"]["cells"] == {"both": 2, "only_old": 1, "only_new": 1, "neither": 2}
    assert res["parquet"]["old"]["extraction_failures"] == 3 and res["parquet"]["reader"] == "lm-eval-samples-parquet@1"
    assert res["parquet"]["old"]["files"][0]["lines"] == 12
    rules = {kind: r["unparsed_rule"] for kind, r in res.items()}
    assert rules["parquet"]["policy"] == rules["jsonl"]["policy"] == "wrong"
    assert list(rules["parquet"]["source_rule_says"].values()) == list(rules["jsonl"]["source_rule_says"].values())


def test_not_parquet_enough(tmp_path):
    p = tmp_path / "broken.parquet"
    p.write_bytes(b"PAR1" + b"\0" * 100)
    with pytest.raises(BadInput, match="unknown shape"):
        load_run("r", p, diagnostics=Diagnostics())
    with pytest.raises(BadInput, match="not a readable Parquet file"):
        load_run("r", p, diagnostics=Diagnostics(), reader="lighteval-details@1")


def test_lighteval_declares_its_rule_every_document_in_the_mean(tmp_path):
    # lighteval averages a metric over every document (np.mean over the logged values); a null metric (which its
    # own mean cannot take) is counted wrong by default, so the denominator stays every document
    old = [nested_detail(i, {"acc": float(b)}) for i, b in enumerate(OLD)]
    old[0] = nested_detail(0, {"acc": None})  # doc 0: right in OLD, now unscored
    a = write_details(tmp_path / "old" / NAME, old)
    b = _nested(tmp_path / "new" / NAME, NEW)
    res = _run("compare", a, b, "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["unparsed_rule"]["policy"] == "wrong" and out["unparsed_rule"]["departs_from_source"] is False and out["unparsed_rule"]["source_rule"] == "wrong"
    assert "every document" in " ".join(out["unparsed_rule"]["source_rule_says"].values())
    # doc 0 now wrong in old, right in new: only_new; docs 1-4 as the hand table: 2 only old, 1 only new, 3 both, 4 neither
    assert out["cells"] == {"both": 1, "only_old": 1, "only_new": 2, "neither": 1}
    given = json.loads(_run("compare", a, b, "-f", "json", "--replicates", "0", "--unparsed", "intersect").stdout)
    assert given["unparsed_rule"]["departs_from_source"] is True and sum(given["cells"].values()) == 4
