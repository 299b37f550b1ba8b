"""Label sets: ordinal vs categorical, and figures that say why they are absent."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.labels import LabelSet, absent_figures, grade_code
from replicate.parsing import PARSERS, Parser
from replicate.reading.contract import READERS, Record, Source, reader


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_label_sets():
    assert str(LabelSet.ordinal(1, 10)) == "ordinal 1-10" and LabelSet.ordinal(1, 10).codes == tuple(range(1, 11))
    cats = LabelSet.categorical("A", "B", "tie")
    assert cats.code("tie") == 2 and cats.code("C") is None and cats.show(1) == "B" and not cats.is_ordinal
    assert [grade_code(v) for v in (2, 2.0, "2", " 3 ", 2.5, -1, "x", True)] == [2, 2, 2, 3, None, None, None, None]
    with pytest.raises(ValueError, match="distinct names"):
        LabelSet.categorical("A", "A")
    with pytest.raises(ValueError, match="0 <= low <= high"):
        LabelSet.ordinal(3, 1)


def test_umbrela_parsers_declare_ordinal_0_3():
    for name in ("umbrela-strict@1", "umbrela-fallback@1", "umbrela-checked@1"):
        assert PARSERS.get(name).label_set == LabelSet.ordinal(0, 3)
    listed = json.loads(_run("parsers", "list", "-f", "json").stdout)["parsers"]
    assert all(p["label_set"] == {"kind": "ordinal", "min": 0, "max": 3} for p in listed if p["name"].startswith("umbrela"))
    # a parser without an explicit set gets the ordinal range of its labels
    assert Parser("x-y@1", "d", lambda t: None, labels=(1, 5, 10)).label_set == LabelSet.ordinal(1, 10)


class _R:
    def __init__(self, name, yields="outputs", label_set=None):
        self.name, self.yields, self.label_set = name, yields, label_set


def test_absent_figures_say_why():
    assert absent_figures([_R("a"), _R("b", label_set=LabelSet.ordinal(0, 3))]) == {}
    v = absent_figures([_R("a"), _R("b", "verdicts")])
    assert set(v) == {"change_rate", "label_agreement", "mae", "pearson_r"}
    assert v["change_rate"] == "change_rate needs labels; run(s) b carry correctness verdicts only, no labels"
    c = absent_figures([_R("a", label_set=LabelSet.categorical("A", "B", "tie"))])
    assert set(c) == {"mae", "pearson_r"} and "categorical A, B, tie" in c["mae"]


@pytest.fixture
def verdict_reader():
    @reader("tsv-verdicts@1", "id<TAB>correct lines.", sniff=lambda h, o: "yes" if h.startswith(b"#verdicts") else "no",
            yields="verdicts", key_names=("id",), has_gold=False)
    def records(source: Source):
        """id and 1/0 per line after a '#verdicts' header."""
        for n, line in source.lines():
            if n > 1:
                item, ok = line.decode().split("\t")
                yield Record((item,), n, correct=ok == "1")

    READERS.register(records)
    yield
    READERS.unregister("tsv-verdicts@1")


def test_correctness_only_runs_give_every_correctness_figure(tmp_path, verdict_reader):
    rows = {"r1": "1101100", "r2": "1001110", "r3": "1101101"}
    paths = []
    for name, bits in rows.items():
        p = tmp_path / f"{name}.tsv"
        p.write_text("#verdicts\n" + "".join(f"i{k}\t{b}\n" for k, b in enumerate(bits)))
        paths.append(p)
    cmp = json.loads(_run("compare", paths[0], paths[1], "-f", "json").stdout)
    # by hand over i0..i6: r1 1101100, r2 1001110 -> both i0,i3,i4; only_old i1; only_new i5; neither i2,i6
    assert cmp["cells"] == {"both": 3, "only_old": 1, "only_new": 1, "neither": 2}
    assert cmp["change_rate"] is None and cmp["changed"] is None
    assert cmp["absent"]["change_rate"].startswith("change_rate needs labels")
    floor = json.loads(_run("floor", *paths, "-f", "json").stdout)
    assert floor["regression_rate"]["max"] is not None and floor["change_rate"]["min"] is None
    assert "change_rate" in floor["absent"]
    mat = json.loads(_run("matrix", *paths, "-f", "json").stdout)
    assert all(b["mae"] is None and b["pearson_r"] is None and b["em"] is not None for b in mat["runs"])
    assert {f["code"] for f in mat["flags"]}.isdisjoint({"r_undefined"})
    assert set(mat["absent"]) == {"change_rate", "label_agreement", "mae", "pearson_r"}
    text = _run("matrix", *paths)
    assert text.exit_code == 0, text.output


# --- gold read through the label set it is compared with ---------------------------

def test_gold_code_maps_text_through_the_label_set():
    from replicate.labels import LabelSet, gold_code

    pair = LabelSet.categorical("A", "B", "tie")
    five = LabelSet.named_ordinal("B>>A", "B>A", "A=B", "A>B", "A>>B")
    assert [gold_code(v, pair) for v in ("A", "tie", "B", "C", 0, "0", True)] == [0, 2, 1, None, None, None, None]
    assert [gold_code(v, five) for v in ("A>>B", "A=B", "B>>A", 3, "3", "A>>>B")] == [4, 2, 0, 3, 3, None]
    ordinal = LabelSet.ordinal(0, 3)
    assert [gold_code(v, ordinal) for v in ("3", 3, 3.0, " 2 ", 2.5, -1, "x", True)] == [3, 3, 3, 2, None, None, None, None]
    assert [gold_code(v, None) for v in ("3", 3.0, "tie")] == [3, 3, None]


def test_named_ordinal_shows_and_reads_its_names():
    from replicate.labels import LabelSet

    five = LabelSet.named_ordinal("B>>A", "B>A", "A=B", "A>B", "A>>B")
    assert five.is_ordinal and (five.low, five.high) == (0, 4)
    assert five.show(4) == "A>>B" and five.show(9) == "9" and five.code("A>B") == 3 and five.code(1) == 1
    assert five.to_json() == {"kind": "ordinal", "min": 0, "max": 4, "names": ["B>>A", "B>A", "A=B", "A>B", "A>>B"]}
    with pytest.raises(ValueError, match="names each grade 0-1 once"):
        LabelSet("ordinal", 0, 1, ("a",))


def test_text_gold_of_a_flat_file_maps_through_the_parsers_set(tmp_path):
    from replicate.diagnostics import Diagnostics
    from replicate.errors import BadInput
    from replicate.judge.load import load_run
    from replicate.labels import LabelSet
    from replicate.reading.contract import ReadOptions

    pair = LabelSet.categorical("A", "B", "tie")
    rows = [("1", "tie", "[[C]]"), ("2", "A", "[[A]]"), ("3", "B", "[[A]]")]
    path = tmp_path / "pair.jsonl"
    path.write_text("".join(
        json.dumps({"query_id": q, "corpus_id": "x", "original_qrel_score": g, "model_output": o}) + "\n"
        for q, g, o in rows))
    run = load_run("r", path, diagnostics=Diagnostics(), options=ReadOptions(gold_labels=pair))
    assert run.gold.tolist() == [2, 0, 1]
    # ordinal text gold without a parser's set: "3" is 3
    path.write_text(json.dumps({"query_id": "1", "corpus_id": "x", "original_qrel_score": "3", "model_output": "3"}) + "\n")
    assert load_run("r", path, diagnostics=Diagnostics()).gold.tolist() == [3]
    # an unknown gold names the file, the line and the set
    path.write_text("".join(
        json.dumps({"query_id": q, "corpus_id": "x", "original_qrel_score": g, "model_output": "[[A]]"}) + "\n"
        for q, g in (("1", "A"), ("2", "draw"))))
    with pytest.raises(BadInput, match=r"pair.jsonl:2: gold field 'original_qrel_score': gold 'draw' is not a label "
                                       r"of the set categorical A, B, tie: one of A, B, tie"):
        load_run("r", path, diagnostics=Diagnostics(), options=ReadOptions(gold_labels=pair))
