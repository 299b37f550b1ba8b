"""Degenerate release files found by the release-files hunt (torn, mis-encoded, of the wrong JSON type, corrupt
containers, odd file-system entries) end in `Error: FILE[:LINE]: ...` and exit 2, never a traceback."""

from __future__ import annotations

import os
import shutil

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
