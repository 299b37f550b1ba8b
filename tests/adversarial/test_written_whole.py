"""Issue 43, items 1, 3 and 12: every output is written whole or not at all, and never over a file the command
did not write unless --force (the second adversarial run's cases)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput, UsageError
from replicate.outfile import TMP_SUFFIX, Outputs, replacing, write_file
from support.paths import ROOT

EXAMPLE = ROOT / "fixtures" / "example"
RUN = EXAMPLE / "results" / "alpha-2024-05_annotations.jsonl"
TRIALS = ROOT / "fixtures" / "trials-study" / "release" / "trials.jsonl.gz"
COLLECT = ROOT / "fixtures" / "collect"
OLD = b"the user's own file: a complete note of 23,823 bytes, say\n" * 50

#: A command that writes a file, with the option naming it (``{out}``), as the second run tried them.
WRITERS = {
    "verify --out": ["verify", str(EXAMPLE / "claims.toml"), "--root", str(EXAMPLE), "--out", "{out}", "--no-plots",
                     "--replicates", "0", "--no-fail"],
    "parse --labels": ["parse", str(RUN), "--parser", "umbrela-strict@1", "--labels", "{out}"],
    "items --per-item": ["items", str(TRIALS), "--edge", "mini-1:mini-2", "--null", "0", "--per-item", "{out}"],
    "collect --export-batch": ["collect", str(COLLECT / "config.toml"), "--items", str(COLLECT / "items.jsonl"),
                               "--archive", "{dir}/none.jsonl", "--export-batch", "{out}"],
    "score --out": ["score", "{dir}/archive.jsonl", "--items", "{dir}/items.jsonl", "--out", "{out}"],
    "import --out": ["import", "{dir}/lm.jsonl", "--model", "m", "--benchmark", "b", "--out", "{out}"],
}


def _inputs(d: Path) -> None:
    """The archive and items of 'score', the lm-eval samples of 'import'."""
    (d / "items.jsonl").write_text(json.dumps({"id": "q1", "benchmark": "b", "prompt": "2+2?", "reference": "4",
                                               "scorer": "final-answer-line@1"}) + "\n")
    recs = [{"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x",
             "items": {}},
            *({"type": "trial", "model": "m", "item": "q1", "trial": t, "text": "Final answer: 4",
               "finish_reason": "stop", "refusal": None, "usage": {}, "error_kind": None} for t in range(40))]
    (d / "archive.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    sample = {"doc_id": 0, "doc": {"q": "x"}, "target": "4", "filtered_resps": ["4"], "exact_match": 1.0,
              "filter": "none", "metrics": ["exact_match"]}
    (d / "lm.jsonl").write_text(json.dumps(sample) + "\n")


def _argv(name: str, d: Path, out: Path) -> list[str]:
    return [a.format(out=out, dir=d) for a in WRITERS[name]]


def _run(argv: list[str]):
    return CliRunner().invoke(app, argv)


# -- an existing file the command did not write ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_an_unrelated_file_is_refused_with_one_wording_and_kept(tmp_path, name):
    _inputs(tmp_path)
    out = tmp_path / "mine.jsonl"
    out.write_bytes(OLD)
    res = _run(_argv(name, tmp_path, out))
    option = WRITERS[name][WRITERS[name].index("{out}") - 1]
    command = name.split(" --")[0]
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"Error: {option} {out} exists and was not written by an earlier 'replicate {command}': "
                          "pass --force to replace it\n")
    assert out.read_bytes() == OLD
    assert "Traceback" not in res.output


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_rerun_replaces_its_own_output_and_force_replaces_any(tmp_path, name):
    _inputs(tmp_path)
    out = tmp_path / "o.jsonl"
    first = _run(_argv(name, tmp_path, out))
    assert first.exit_code == 0, first.output
    written = out.read_bytes()
    again = _run(_argv(name, tmp_path, out))  # the same command's own output, unchanged: replaced
    assert again.exit_code == 0, again.output
    assert out.read_bytes() == written
    out.write_bytes(written + b"an edit of the user\n")  # edited since: no longer the command's own
    edited = _run(_argv(name, tmp_path, out))
    assert edited.exit_code == 2 and "pass --force to replace it" in edited.stderr
    forced = _run([*_argv(name, tmp_path, out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert out.read_bytes() == written
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX)]


def test_another_commands_output_is_not_this_ones(tmp_path):
    _inputs(tmp_path)
    out = tmp_path / "t.jsonl"
    assert _run(_argv("score --out", tmp_path, out)).exit_code == 0
    res = _run(_argv("import --out", tmp_path, out))
    assert res.exit_code == 2 and "not written by an earlier 'replicate import'" in res.stderr


def test_export_ifbench_refuses_a_folder_holding_the_users_file_before_writing_any(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "p0", "benchmark": "ifbench", "prompt": "Write.", "scorer": "ifbench@2"}) + "\n")
    recs = [{"type": "header", "schema": "replicate.archive/1", "config": {}, "seed": 0, "params_hash": "x",
             "items": {}}]
    recs += [{"type": "trial", "model": "m", "item": "p0", "trial": t, "text": "reply", "finish_reason": "stop",
              "refusal": None, "usage": {}, "error_kind": None} for t in (0, 1)]
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    out = tmp_path / "out"
    out.mkdir()
    (out / "trial-1.jsonl").write_bytes(OLD)
    argv = ["export", "ifbench", str(arch), "--items", str(items), "--out", str(out)]
    res = _run(argv)
    assert res.exit_code == 2 and "trial-1.jsonl exists and was not written by an earlier 'replicate export ifbench'" \
        in res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["trial-1.jsonl"] and (out / "trial-1.jsonl").read_bytes() == OLD
    assert _run([*argv, "--force"]).exit_code == 0
    assert _run(argv).exit_code == 0  # its own files now
    assert sorted(p.name for p in out.iterdir()) == ["trial-0.jsonl", "trial-1.jsonl"]


def test_verify_figures_beside_the_note_are_checked_before_any_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    note = tmp_path / "note.md"
    (tmp_path / "note-cells.svg").write_bytes(OLD)
    res = _run(["verify", str(EXAMPLE / "claims.toml"), "--root", str(EXAMPLE), "--out", str(note),
                "--replicates", "0", "--no-fail"])
    assert res.exit_code == 2 and "note-cells.svg exists" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["note-cells.svg"]


# -- a write that fails leaves the old file as it was -------------------------------------------------------

_LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
sys.argv = ["replicate", *sys.argv[1:]]
from replicate.cli.entry import main
main()
"""


@pytest.mark.parametrize("name", ["verify --out", "parse --labels", "items --per-item", "collect --export-batch",
                                  "score --out"])
def test_a_write_cut_by_a_file_size_limit_leaves_the_old_file_byte_identical(tmp_path, name):
    _inputs(tmp_path)
    out = tmp_path / "o.jsonl"
    out.write_bytes(OLD)  # 2,900 bytes: more than the limit, so nothing can be written over it in place either
    proc = subprocess.run([sys.executable, "-c", _LIMITED, *_argv(name, tmp_path, out), "--force"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 2, proc.stderr
    assert out.read_bytes() == OLD
    assert proc.stderr.splitlines()[-1] == (f"Error: {out}: cannot write: File too large; nothing was written (an "
                                            "earlier file there is unchanged)")
    assert "Traceback" not in proc.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX)]


def test_the_writer_fsyncs_and_a_failed_fsync_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    target.write_bytes(OLD)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    write_file(target, b"new\n")
    assert target.read_bytes() == b"new\n" and synced  # the file (and its folder) synced before it counts

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_file(target, b"newer\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_an_interrupted_write_removes_its_temporary_file(tmp_path):
    target = tmp_path / "t.txt"
    target.write_bytes(OLD)
    with pytest.raises(KeyboardInterrupt), replacing(target) as fh:
        fh.write(b"half")
        raise KeyboardInterrupt
    assert target.read_bytes() == OLD and sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_chunks_that_fail_midway_leave_the_commands_earlier_output_as_it_was(tmp_path):
    """Outputs.write takes chunks as they are made (score writes its table so): chunks written, then the maker
    raises: the earlier output is byte-identical, no temporary file is left, and the record is not changed."""
    target = tmp_path / "table.jsonl"
    out = Outputs("score", "out")
    out.write(target, [b"first run\n"])
    before = target.read_bytes()

    def chunks():
        yield b'{"item": "q1"}\n' * 1000
        yield b'{"item": "q2"}\n' * 1000
        raise BadInput("a row that cannot be written", path=target)

    with pytest.raises(BadInput):
        out.write(target, chunks())
    assert target.read_bytes() == before
    assert [p for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX)] == []
    out.write(target, [b"second run\n"])  # still this command's own output: replaced without --force
    assert target.read_bytes() == b"second run\n"


def test_outputs_refuse_a_directory_and_a_folder_that_is_a_file(tmp_path):
    with pytest.raises(UsageError, match="is a directory"):
        Outputs("x", "out").check(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="is not a folder"):
        Outputs("x", "out").check_folder(tmp_path / "f", ["a.png"])
    with pytest.raises(BadInput, match="cannot write: No such file or directory"):
        Outputs("x", "out").write(tmp_path / "no" / "a.txt", b"x")


def test_a_new_file_gets_the_users_default_mode_and_a_replaced_one_keeps_its_mode(tmp_path):
    new = tmp_path / "new.txt"
    Outputs("x", "out").write(new, b"a")
    mask = os.umask(0)
    os.umask(mask)
    assert new.stat().st_mode & 0o777 == 0o666 & ~mask
    new.chmod(0o640)
    Outputs("x", "out").write(new, b"b")  # its own earlier output
    assert new.stat().st_mode & 0o777 == 0o640 and new.read_bytes() == b"b"
