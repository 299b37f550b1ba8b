"""Issue 43, leftover: the demo's example writer goes through the one atomic writer; a write that fails part way
(disk full at the Nth file) leaves no half-written example: a new folder is gone again, an earlier example is
kept whole (never half replaced) with the user's other files in it."""

from __future__ import annotations

import errno
import os

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.examples.judge_release import write_example
from replicate.examples.trec_runs import write_runs
from replicate.outfile import TMP_SUFFIX


def _disk_full_after(monkeypatch, n: int) -> None:
    """The (n+1)th fsync of a file fails with ENOSPC, as a full disk would."""
    real = os.fsync
    calls = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) > n:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("n", [0, 3, 9])
def test_a_failed_example_write_into_a_new_folder_leaves_nothing(tmp_path, monkeypatch, n):
    where = tmp_path / "ex"
    _disk_full_after(monkeypatch, n)
    with pytest.raises(OSError) as err:
        write_example(where)
    assert err.value.errno == errno.ENOSPC
    assert not where.exists()
    assert not list(tmp_path.rglob(f"*{TMP_SUFFIX}"))


def _bytes(folder):
    return {f: (folder / f).read_bytes() for f in _files(folder)}


def test_a_failed_rewrite_keeps_the_earlier_example_whole_and_the_users_files(tmp_path, monkeypatch):
    where = write_example(tmp_path / "ex")
    whole = _files(where)
    (where / "claims.toml").write_text("# the user's own claims\n")
    before = _bytes(where)
    with monkeypatch.context() as m:
        _disk_full_after(m, 2)
        with pytest.raises(OSError):
            write_example(where)
    assert _files(where) == sorted([*whole, "claims.toml"])  # the earlier example whole, nothing staged left
    assert all(_bytes(where)[f] == b for f, b in before.items())
    assert write_example(where) == where  # and the rerun writes it
    assert _bytes(where) == before


def test_demo_into_a_new_folder_on_a_full_disk_is_one_line_and_leaves_no_folder(tmp_path, monkeypatch):
    where = tmp_path / "ex"
    _disk_full_after(monkeypatch, 4)
    result = CliRunner().invoke(app, ["demo", str(where)])
    assert result.exit_code == 2
    assert result.output.splitlines() == ["Error: a read or write failed: No space left on device"]
    assert not where.exists()


def test_demo_still_refuses_a_folder_that_is_not_its_own(tmp_path):
    (tmp_path / "ex").mkdir()
    (tmp_path / "ex" / "notes.txt").write_text("mine\n")
    with pytest.raises(FileExistsError):
        write_example(tmp_path / "ex")
    assert _files(tmp_path / "ex") == ["notes.txt"]


def test_a_failed_trec_run_write_keeps_the_earlier_file_byte_identical(tmp_path, monkeypatch):
    write_runs({"sys-a": ["1 Q0 d1 1 3.0 sys-a"]}, tmp_path)
    before = (tmp_path / "sys-a.txt").read_bytes()
    _disk_full_after(monkeypatch, 0)
    with pytest.raises(OSError):
        write_runs({"sys-a": ["1 Q0 d9 1 9.0 sys-a"] * 100}, tmp_path)
    assert (tmp_path / "sys-a.txt").read_bytes() == before
    assert _files(tmp_path) == ["sys-a.txt"]
