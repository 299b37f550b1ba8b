"""The terminal view of verify fits 100 columns (blocks, as `replicate chain` does), and the
note's runs table lists the parsers in the order of its claims table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
STUDIES = [ROOT / "fixtures" / "example", ROOT / "fixtures" / "trials-study"]


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.name)
def test_verify_table_fits_100_columns_and_rows_line_up(study):
    if not (study / "claims.toml").is_file():
        pytest.skip("bundled study not present")
    r = CliRunner().invoke(app, ["verify", str(study / "claims.toml"), "--root", str(study), "--no-fail"])
    assert r.exit_code == 0, r.output
    tables = [b for b in r.stdout.split("\n\n") if b.startswith("id ")]
    assert len(tables) >= 2  # split into blocks (the unsplit table was ~230 / 124 columns wide)
    for block in tables:
        assert max(len(line) for line in block.splitlines()) <= 100, block
    ids = [[ln.split()[0] for ln in b.splitlines()[2:] if ln and not ln.startswith(" ")] for b in tables]
    assert all(i == ids[0] for i in ids[1:])  # every block lists the same claims in the same order
    headers = [h for b in tables for h in re.split(r"\s{2,}", b.splitlines()[0].strip())]
    assert {"where", "figure", "printed", "verdict"} <= set(headers)


def test_note_runs_table_orders_parsers_as_the_claims_table():
    study = STUDIES[0]
    if not (study / "claims.toml").is_file():
        pytest.skip("bundled study not present")
    r = CliRunner().invoke(app, ["verify", str(study / "claims.toml"), "--root", str(study), "--no-fail",
                                 "-f", "markdown", "--date", "2026-01-01"])
    lines = r.stdout.splitlines()
    claims_head = next(ln for ln in lines if ln.startswith("| id "))
    runs_head = next(ln for ln in lines if ln.startswith("| run "))
    claim_parsers = [c.strip() for c in claims_head.strip("|").split("|") if "@" in c]
    run_parsers = [c.strip().removeprefix("unparsed: ") for c in runs_head.strip("|").split("|") if "@" in c]
    assert claim_parsers == ["umbrela-fallback@1", "umbrela-strict@1", "umbrela-checked@1"]
    assert run_parsers == claim_parsers  # they used to be sorted by name
