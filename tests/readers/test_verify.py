"""verify over runs opened by any reader: a claims file naming each run's reader and a [gold] file."""

from __future__ import annotations

import shutil

from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT

DATA = ROOT / "tests" / "readers" / "data"


def test_verify_qrels_runs_with_separate_gold(tmp_path):
    for name in ("old.txt", "new.txt", "gold.txt"):
        shutil.copy(DATA / name, tmp_path / name)
    claims = tmp_path / "claims.toml"
    claims.write_text(
        '[study]\ntitle = "synthetic qrels"\n\n'
        '[runs]\nold = { files = ["old.txt"], reader = "trec-qrels@1" }\nnew = ["new.txt"]\n\n'
        '[gold]\nfile = "gold.txt"\nreader = "trec-qrels@1"\n\n'
        # by hand (tests/readers/test_qrels.py): only_old 2 of n = 6
        '[[claims]]\nid = "regr"\nwhere = "Table 1"\nmetric = "regression_rate"\nold = "old"\nnew = "new"\n'
        'value = "33.3"\nunit = "percent"\n'
    )
    note = tmp_path / "note.md"
    res = CliRunner().invoke(app, ["verify", str(claims), "--root", str(tmp_path), "--no-plots", "--out", str(note),
                                   "-p", "umbrela-fallback@1"])
    assert res.exit_code == 0, res.output
    text = note.read_text()
    runs = text[text.index("## Runs"):]
    assert "| `trec-qrels@1` |" in runs.splitlines()[4] and "| new " in runs
    assert "reader: trec-qrels@1 (chosen by content; --reader to choose) for " in res.stderr  # new.txt was detected
    claims.write_text(claims.read_text().replace('[gold]\nfile = "gold.txt"', '[gold]\nfile = "../gold.txt"'))
    bad = CliRunner().invoke(app, ["verify", str(claims), "--root", str(tmp_path)])
    assert bad.exit_code == 2 and "[gold]: file must be a path relative to --root without '..'" in bad.stderr
