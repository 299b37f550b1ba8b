"""`items --plots DIR` and the K-trial verification note's figure: P+ up, P- down and delta beside them, per cell."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.trials.engine import analyse_items
from replicate.trials.load import read_trials

pytest.importorskip("matplotlib")
ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "fixtures" / "trials-path" / "trials.jsonl.gz"
runner = CliRunner()


def test_the_bars_are_the_cells_shares_and_delta():
    from matplotlib.figure import Figure

    from replicate.trials.items_plots import draw_shares

    res = analyse_items(read_trials(TABLE), [("v1", "v2"), ("v2", "v3")], n_null=0)
    fig = Figure()
    draw_shares(fig, res.cells)
    (ax,) = fig.axes
    bars = [p.get_height() for p in ax.patches]
    n = len(res.cells)
    assert n == 4 and len(bars) == 3 * n
    assert bars[:n] == pytest.approx([100 * c.shares.p_plus for c in res.cells])
    assert bars[n:2 * n] == pytest.approx([-100 * c.shares.p_minus for c in res.cells])
    assert bars[2 * n:] == pytest.approx([100 * c.delta for c in res.cells])
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "v1 -> v2\nifeval"


def test_items_plots_writes_png_and_svg(tmp_path):
    r = runner.invoke(app, ["items", str(TABLE), "--edge", "v1:v2", "--null", "0", "--plots", str(tmp_path / "fig")])
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == ["items-shares.png", "items-shares.svg"]
    assert f"wrote 2 figure files to {tmp_path / 'fig'}" in r.stderr
    r = runner.invoke(app, ["items", str(TABLE), "--plots", str(tmp_path / "none")])
    assert r.exit_code == 0 and "plots: no edge: nothing to plot (give --edge)" in r.stderr


def test_the_trial_note_carries_the_figure(tmp_path):
    study = ROOT / "fixtures" / "trials-study"
    note = tmp_path / "note.md"
    r = runner.invoke(app, ["verify", str(study / "claims.toml"), "--root", str(study), "--out", str(note), "--no-fail"])
    assert r.exit_code == 0, r.stderr
    text = note.read_text()
    assert "## Figures" in text and "(note-items-shares.png)" in text
    assert (tmp_path / "note-items-shares.png").is_file() and (tmp_path / "note-items-shares.svg").is_file()
