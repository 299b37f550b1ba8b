"""`replicate plan` and `replicate items` explain their tables in lines that fit 100 columns."""

from __future__ import annotations

from typer.testing import CliRunner

from replicate.cli.app import app


def test_plan_text_fits_100_columns():
    r = CliRunner().invoke(app, ["plan", "--n-items", "300", "--move", "0.4:0.6", "--k", "50", "--moving", "0.1",
                                 "--power", "0.8", "--k-max", "60", "--resamples", "50"])
    assert r.exit_code == 0, r.output
    assert max(len(line) for line in r.stdout.splitlines()) <= 100  # the prose lines were 120-330 wide
    md = CliRunner().invoke(app, ["plan", "--n-items", "300", "--move", "0.4:0.6", "--k", "50", "--moving", "0.1",
                                  "--power", "0.8", "--k-max", "60", "--resamples", "50", "-f", "markdown"])
    assert any(len(line) > 100 for line in md.stdout.splitlines())  # markdown keeps paragraphs whole
