"""inspect-log@1: inspect_ai eval logs (.eval zip and .json) read as correctness verdicts.

The fixtures in data/inspect are our own synthetic six-sample logs in the exact
layout inspect_ai writes (written by tools/make_inspect_logs.py from
tests/support/synth/inspect_logs.py), and epochs-rewritten-by-inspect-ai.eval,
epochs.eval read and written again by inspect_ai 0.3.285's own write_eval_log
(zstandard-compressed members, as inspect_ai writes .eval logs today). The
built-in reader of the layout is
tested always; the path through inspect_ai's read_eval_log only where
inspect_ai is installed.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import zipfile

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.judge.load import load_run
from replicate.reading.contract import READERS, ReadOptions
from support.paths import ROOT
from support.synth import inspect_logs as il
from support.synth.inspect_logs import Sample

DATA = ROOT / "tests" / "readers" / "data" / "inspect"
OLD, NEW, OLD_JSON, EPOCHS = DATA / "old.eval", DATA / "new.eval", DATA / "old.json", DATA / "epochs.eval"
REWRITTEN = DATA / "epochs-rewritten-by-inspect-ai.eval"
HAS_ZSTD = importlib.util.find_spec("zstandard") is not None or hasattr(zipfile, "ZIP_ZSTANDARD")
R = "inspect-log@1"
BUILTIN = {"log_reader": "builtin"}
HAS_INSPECT_AI = importlib.util.find_spec("inspect_ai") is not None

# scorer "match" per sample id 1..6 (il.OLD_MATCH, il.NEW_MATCH), by hand:
#   old C C I I C I   new C I C I C C
# both = 1, 5; only_old = 2; only_new = 3, 6; neither = 4.
MATCH_CELLS = {"both": 2, "only_old": 1, "only_new": 2, "neither": 1}
# scorer "model_graded_fact" with P counted wrong (--score-map P=0):
#   old C P I I C C -> 1 0 0 0 1 1   new C C C I P I -> 1 1 1 0 0 0
# both = 1; only_old = 5, 6; only_new = 2, 3; neither = 4.
GRADED_CELLS = {"both": 1, "only_old": 2, "only_new": 2, "neither": 1}


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _load(path, **extra):
    diag = Diagnostics()
    run = load_run("r", path, diagnostics=diag, reader=R, options=ReadOptions(extra={**BUILTIN, **extra}))
    return run, diag


def test_the_fixtures_are_what_the_generator_writes(tmp_path):
    for path in il.write_fixtures(tmp_path):
        assert path.read_bytes() == (DATA / path.name).read_bytes(), f"{path.name}: rerun tools/make_inspect_logs.py"


def test_the_fixtures_hold_the_hand_table():
    with zipfile.ZipFile(OLD) as zf:
        names = zf.namelist()
        assert names[0] == "_journal/start.json" and names[-1] == "header.json"
        values = "".join(json.loads(zf.read(f"samples/{i}_epoch_1.json"))["scores"]["match"]["value"] for i in range(1, 7))
    assert values == "CCIICI" == il.OLD_MATCH
    samples = json.loads(OLD_JSON.read_text())["samples"]
    assert "".join(s["scores"]["model_graded_fact"]["value"] for s in samples) == "CPIICC"


def test_acceptance_compare_cells_equal_the_hand_count(tmp_path):
    a, b = tmp_path / "A.eval", tmp_path / "B.eval"
    shutil.copy(OLD, a)
    shutil.copy(NEW, b)
    res = _run("compare", a, b, "--reader", R, "--inspect-scorer", "match", "-f", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == MATCH_CELLS and out["n"] == 6
    assert out["em_old"] == 3 / 6 and out["em_new"] == 4 / 6
    assert out["reader"] == R and out["parser"] == "inspect-score"
    f = out["old"]["files"][0]
    assert f["reader_options"]["scorer"] == "match" and f["reader_options"]["log_version"] == "2"
    log_reader = f["reader_options"]["log_reader"]
    assert (log_reader == "built-in") if not HAS_INSPECT_AI else log_reader.startswith("inspect_ai ")
    assert f["format"] == "inspect-log" and f["lines"] == 6 and f["records"] == 6
    assert out["absent"]["change_rate"].startswith("change_rate needs labels")


def test_the_json_log_reads_like_the_eval_zip_and_detection_picks_the_reader():
    res = _run("compare", OLD_JSON, NEW, "--inspect-scorer", "model_graded_fact", "--score-map", "P=0", "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == GRADED_CELLS
    assert out["old"]["files"][0]["reader_options"]["score_map"] == "P=0"
    assert f"reader: {R} (chosen by content" in res.stderr
    a, _ = _load(OLD_JSON, scorer="match")
    b, _ = _load(OLD, scorer="match")
    assert a.keys.tolist() == b.keys.tolist() == ["1", "2", "3", "4", "5", "6"]
    assert a.labels is not None and b.labels is not None and a.labels.tolist() == b.labels.tolist() == [1, 1, 0, 0, 1, 0]


def test_sniffing_tells_logs_from_other_json():
    reader, judge = READERS.get(R), READERS.get("judge-jsonl@1")
    opts = ReadOptions()
    assert reader.sniff(OLD.read_bytes()[:4096], opts) == "yes"
    assert reader.sniff(OLD_JSON.read_bytes()[:4096], opts) == "yes"  # cut short: read by its leading fields
    assert reader.sniff(OLD_JSON.read_bytes(), opts) == "yes"  # whole
    compact = json.dumps(json.loads(OLD_JSON.read_text())).encode()
    assert reader.sniff(compact, opts) == "yes"
    flat = (ROOT / "fixtures" / "example" / "results" / "alpha-2024-05_annotations.jsonl").read_bytes()[:4096]
    assert reader.sniff(flat, opts) == "no" and judge.sniff(OLD_JSON.read_bytes()[:4096], opts) == "maybe"
    assert reader.sniff(b'{"version": 2, "results": {}}', opts) == "no"
    other_zip = b"PK\x03\x04" + b"\x00" * 26 + b"word/document.xml"
    assert reader.sniff(other_zip, opts) == "maybe"


def test_several_scorers_and_none_named_is_refused_listing_them():
    res = _run("compare", OLD, NEW)
    assert res.exit_code == 2
    assert f"{OLD}: the log holds 2 scorers (match, model_graded_fact); name the one that says right or wrong with --inspect-scorer" in res.stderr


def test_an_unknown_scorer_is_refused_listing_those_there_are():
    with pytest.raises(BadInput, match=r"old.eval: no sample has the scorer 'includes' \(scorer\); scorers in this log: "
                                       r"match, model_graded_fact"):
        _load(OLD, scorer="includes")
    res = _run("compare", OLD, NEW, "--inspect-scorer", "includes")
    assert "no sample has the scorer 'includes' (--inspect-scorer)" in res.stderr


def test_partial_credit_is_refused_unless_mapped():
    res = _run("compare", OLD, NEW, "--inspect-scorer", "model_graded_fact")
    assert res.exit_code == 2
    assert ("old.eval: member samples/2_epoch_1.json: sample 2 epoch 1: scorer 'model_graded_fact' gave 'P' "
            "(partial credit, 0.5 to inspect_ai), which is neither right nor wrong: say what it counts as with "
            "--score-map (P=0 or P=1)") in res.stderr
    run, _ = _load(OLD, scorer="model_graded_fact", score_map="P=1")
    assert run.labels is not None and run.labels.tolist() == [1, 1, 0, 0, 1, 1]
    with pytest.raises(UsageError, match=r"score_map entry 'P' must be VALUE=1 or VALUE=0"):
        _load(OLD, scorer="model_graded_fact", score_map="C=1,P")


def test_epochs_are_trials_refused_as_one_run_unless_one_is_picked():
    with pytest.raises(BadInput, match=r"epochs.eval:7: the file holds several trials of its items \(trial 1 at line 1, "
                                       r"trial 2 at line 7\); a run takes one reading per item.*keep one with epoch, or read "
                                       r"every trial into a trials table with 'replicate import --reader inspect-log@1'"):
        _load(EPOCHS)
    res = _run("compare", OLD, EPOCHS, "--inspect-scorer", "match", "-f", "json", "--replicates", "0")
    assert res.exit_code == 2 and "keep one with --epoch" in res.stderr
    # epoch 2 of the new model: C C C C C C against old C C I I C I -> both 1, 2, 5; only_new 3, 4, 6
    res = _run("compare", OLD, EPOCHS, "--inspect-scorer", "match", "--epoch", "2", "-f", "json", "--replicates", "0")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["cells"] == {"both": 3, "only_old": 0, "only_new": 3, "neither": 0}
    assert out["new"]["files"][0]["reader_options"]["epoch"] == "2"
    assert out["new"]["files"][0]["lines"] == 12 and out["new"]["files"][0]["records"] == 6
    # the old log was run once: read whole, warned
    assert "single-epoch" in res.stderr
    with pytest.raises(BadInput, match=r"no sample has epoch 3 \(epoch\); epochs in this log: 1, 2"):
        _load(EPOCHS, epoch=3)


def test_the_records_carry_epoch_as_trial():
    reader = READERS.get(R)
    from replicate.reading.contract import Source

    src = Source(EPOCHS, EPOCHS.read_bytes(), ReadOptions(extra=BUILTIN), Diagnostics())
    recs = list(reader.records(src))
    assert [(r.key, r.trial, r.correct) for r in recs[:2]] == [(("1",), 1, True), (("2",), 1, False)]
    assert sorted({r.trial for r in recs}) == [1, 2] and len(recs) == 12
    assert src.used == {"scorer": "match", "log_reader": "built-in", "log_version": "2"}


# bad input ----------------------------------------------------------------------------------
def _members(samples=None, **kw):
    return il.eval_members(samples if samples is not None else il.fixture_samples(il.OLD_MATCH, il.OLD_GRADED),
                           model=il.OLD_MODEL, **kw)


def _write(tmp_path, members, name="bad.eval"):
    return il.write_zip(tmp_path / name, members)


def test_a_truncated_zip_is_refused_naming_the_file(tmp_path):
    p = tmp_path / "cut.eval"
    p.write_bytes(OLD.read_bytes()[:3000])
    with pytest.raises(BadInput, match=r"cut.eval: truncated or corrupt .eval zip \(File is not a zip file\)"):
        _load(p, scorer="match")
    res = _run("compare", p, NEW, "--inspect-scorer", "match")  # by content: still recognised, then refused clearly
    assert res.exit_code == 2 and "cut.eval: truncated or corrupt .eval zip" in res.stderr


def test_a_corrupt_member_is_refused_naming_it(tmp_path):
    data = bytearray(OLD.read_bytes())
    with zipfile.ZipFile(OLD) as zf:
        info = zf.getinfo("samples/3_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 10] ^= 0xFF  # a flipped byte inside the deflated stream
    p = tmp_path / "flipped.eval"
    p.write_bytes(bytes(data))
    with pytest.raises(BadInput, match=r"flipped.eval: member samples/3_epoch_1.json: corrupt zip member"):
        _load(p, scorer="match")


def test_an_unknown_format_version_is_refused_naming_the_known_ones(tmp_path):
    p = _write(tmp_path, _members(version=3))
    with pytest.raises(BadInput, match=r"bad.eval: header.json: inspect log format version 3 is not known to "
                                       r"inspect-log@1 \(known: 1, 2\)"):
        _load(p, scorer="match")
    j = il.write_json_log(tmp_path / "v3.json", il.fixture_samples(il.OLD_MATCH, il.OLD_GRADED), model="m", version=3)
    with pytest.raises(BadInput, match=r"v3.json: the log: inspect log format version 3 is not known"):
        _load(j, scorer="match")


def test_a_sample_without_scores_is_refused_unless_it_errored(tmp_path):
    samples = il.fixture_samples(il.OLD_MATCH, il.OLD_GRADED)
    samples[3] = Sample(4, None)
    with pytest.raises(BadInput, match=r"bad.eval: member samples/4_epoch_1.json: sample 4 epoch 1 has no scores \(and no error\)"):
        _load(_write(tmp_path, _members(samples)), scorer="match")
    samples[3] = Sample(4, None, error="RuntimeError: sandbox died")
    run, diag = _load(_write(tmp_path, _members(samples), "errored.eval"), scorer="match")
    assert run.labels is not None and run.labels.tolist() == [1, 1, 0, -1, 1, 0]
    assert diag.counts() == {"sample-error": 1}
    samples[3] = Sample(4, {"includes": "C"})
    with pytest.raises(BadInput, match=r"member samples/4_epoch_1.json: sample 4 epoch 1 lacks the scorer 'match'; "
                                       r"its scorers: includes"):
        _load(_write(tmp_path, _members(samples), "other.eval"), scorer="match")


def test_the_same_sample_and_epoch_twice_is_refused_naming_both_places(tmp_path):
    samples = il.fixture_samples(il.OLD_MATCH, il.OLD_GRADED)
    twice = samples + [Sample(2, {"match": "I", "model_graded_fact": "I"})]
    j = il.write_json_log(tmp_path / "twice.json", twice, model="m")
    with pytest.raises(BadInput, match=r"twice.json: samples\[2\]: sample 2 epoch 1 is given again \(first in samples\[1\]\)"):
        _load(j, scorer="match")
    members = _members()
    members.insert(3, members[2])
    with pytest.warns(UserWarning, match="Duplicate name"):
        p = _write(tmp_path, members)
    with pytest.raises(BadInput, match=r"member samples/2_epoch_1.json is in the zip twice"):
        _load(p, scorer="match")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("maybe", r"scorer 'match' gave 'maybe', not a right/wrong value .*map it with score_map \(maybe=1 or maybe=0\)"),
        (0.5, r"scorer 'match' gave 0.5, not 1 \(right\) or 0 \(wrong\)"),
        (7, r"scorer 'match' gave 7, not 1 \(right\) or 0 \(wrong\)"),
        ({"accuracy": 1, "f1": 0.5}, r"scorer 'match' gave an object of several values \(accuracy, f1\): .*reads one scalar value per scorer"),
    ],
)
def test_a_value_that_is_no_verdict_is_refused_naming_the_sample(tmp_path, value, message):
    samples = il.fixture_samples(il.OLD_MATCH, il.OLD_GRADED)
    samples[4] = Sample(5, {"match": value})
    with pytest.raises(BadInput, match=r"bad.eval: member samples/5_epoch_1.json: sample 5 epoch 1: " + message):
        _load(_write(tmp_path, _members(samples)), scorer="match")


def test_the_values_inspect_reads_as_one_and_zero(tmp_path):
    values = ["C", "I", "N", 1, 0, 1.0, True, False, "yes", "False", "1", None, 0.5]
    samples = [Sample(i, {"match": v}) for i, v in enumerate(values, 1)]
    p = il.write_json_log(tmp_path / "values.json", samples, model="m")
    run, diag = _load(p, scorer="match", score_map="0.5=1")
    by_key = dict(zip(run.keys.tolist(), run.labels.tolist() if run.labels is not None else []))
    assert [by_key[str(i)] for i in range(1, 14)] == [1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, -1, 1]
    assert diag.counts() == {"unscored": 1}


def test_a_log_whose_eval_did_not_finish_is_read_and_warned(tmp_path):
    p = _write(tmp_path, _members(finished=False))
    run, diag = _load(p, scorer="match")
    assert len(run.keys) == 6 and diag.counts() == {"log-status": 1}
    p = _write(tmp_path, _members(status="cancelled"), "cancelled.eval")
    _, diag = _load(p, scorer="match")
    assert diag.counts() == {"log-status": 1}


def test_a_zip_that_is_no_inspect_log_is_refused(tmp_path):
    p = _write(tmp_path, [("word/document.xml", b"<w/>")], "doc.eval")
    with pytest.raises(BadInput, match=r"doc.eval: not an inspect .eval log: the zip holds neither header.json nor _journal/start.json"):
        _load(p)
    j = tmp_path / "cut.json"
    j.write_bytes(OLD_JSON.read_bytes()[:2000])
    with pytest.raises(BadInput, match=r"cut.json: not valid JSON: .*was it cut short"):
        _load(j)


def test_unknown_fields_are_ignored(tmp_path):
    samples = [Sample(i, {"match": "C"}, extra={"new_field_2030": {"x": [1, 2]}, "sandbox": None}) for i in (1, 2)]
    run, diag = _load(il.write_eval_log(tmp_path / "x.eval", samples, model="m"))
    assert run.labels is not None and run.labels.tolist() == [1, 1] and len(diag) == 0


def test_the_log_inspect_ai_wrote_is_zstandard_compressed():
    with zipfile.ZipFile(REWRITTEN) as zf:
        assert {i.compress_type for i in zf.infolist()} == {93}
        assert "header.json" in zf.namelist() and "samples/6_epoch_2.json" in zf.namelist()


@pytest.mark.skipif(not HAS_ZSTD, reason="neither the zstandard package nor a zipfile with zstd (Python >= 3.14)")
def test_the_builtin_reader_reads_what_inspect_ai_writes_today(tmp_path):
    for epoch in (1, 2):
        ours, _ = _load(EPOCHS, epoch=epoch)
        theirs, diag = _load(REWRITTEN, epoch=epoch)
        assert theirs.keys.tolist() == ours.keys.tolist() == ["1", "2", "3", "4", "5", "6"]
        assert theirs.labels is not None and ours.labels is not None
        assert theirs.labels.tolist() == ours.labels.tolist() and len(diag) == 0
    data = bytearray(REWRITTEN.read_bytes())
    with zipfile.ZipFile(REWRITTEN) as zf:
        info = zf.getinfo("samples/3_epoch_1.json")
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + 20] ^= 0xFF
    p = tmp_path / "flipped.eval"
    p.write_bytes(bytes(data))
    with pytest.raises(BadInput, match=r"flipped.eval: member samples/3_epoch_1.json: corrupt zip member"):
        _load(p, epoch=1)


def test_without_zstandard_the_refusal_says_what_to_install(monkeypatch):
    import sys

    if hasattr(zipfile, "ZIP_ZSTANDARD") or "zipfile_zstd" in sys.modules:
        pytest.skip("this process's zipfile reads zstandard itself (Python >= 3.14, or inspect_ai's zipfile_zstd patch)")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard raises ImportError
    with pytest.raises(BadInput, match=r"epochs-rewritten-by-inspect-ai.eval: member header.json: compressed with "
                                       r"zstandard .*install the 'zstandard' package, or inspect_ai"):
        _load(REWRITTEN, epoch=1)


@pytest.mark.skipif(not HAS_INSPECT_AI, reason="inspect_ai is not installed (optional extra 'inspect')")
def test_inspect_ai_reads_the_fixtures_to_the_same_verdicts():
    for path in (OLD, NEW, OLD_JSON, EPOCHS):
        extra = {"scorer": "match"} if path != EPOCHS else {"epoch": 2}
        via = load_run("r", path, diagnostics=Diagnostics(), reader=R, options=ReadOptions(extra=extra))
        builtin, _ = _load(path, **extra)
        assert via.keys.tolist() == builtin.keys.tolist()
        assert via.labels is not None and builtin.labels is not None
        assert via.labels.tolist() == builtin.labels.tolist()
        assert dict(via.files[0].reader_options)["log_reader"].startswith("inspect_ai ")


def test_a_log_whose_every_sample_errored_says_so(tmp_path):
    """No sample scored because every one failed: the error says so and how to rerun them, not 'score it first'
    (scoring a log of failed samples gives nothing); with some samples merely unscored, 'score it first' stays."""
    samples = [Sample(s.id, None, error=f"RuntimeError: sandbox died ({s.id})")
               for s in il.fixture_samples(il.OLD_MATCH, il.OLD_GRADED)]
    with pytest.raises(BadInput, match=r"errored.eval: every sample of this log errored without a score \(6 samples; "
                                       r"member samples/1_epoch_1.json: sample 1 epoch 1: RuntimeError: sandbox died "
                                       r"\(1\)\): nothing to read; rerun them \(inspect eval-retry LOG\)"):
        _load(_write(tmp_path, _members(samples), "errored.eval"))
    samples[0] = Sample(1, None)
    with pytest.raises(BadInput, match=r"mixed.eval: no sample of this log has scores: score it first"):
        _load(_write(tmp_path, _members(samples), "mixed.eval"))
