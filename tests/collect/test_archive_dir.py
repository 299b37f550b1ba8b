"""An archive in a directory that does not exist is bad input naming it, not a traceback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "collect"


def test_collect_into_a_missing_directory_is_bad_input(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_API_KEY", "x")
    archive = tmp_path / "no-such-dir" / "archive.jsonl"
    r = CliRunner().invoke(app, ["collect", str(FIX / "config.toml"), "--items", str(FIX / "items.jsonl"),
                                 "--archive", str(archive)])
    assert r.exit_code == 2
    assert f"{archive}: cannot create the archive: its directory does not exist" in r.output
    assert not archive.parent.exists()
