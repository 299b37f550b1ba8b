"""docs/case-studies/: each case study's verification note is a golden file, rewritten here from ../shared/data.

The command of each case study runs in a scratch directory laid out like a checkout beside the shared data
(`docs/case-studies/<case>/claims.toml` copied, `../shared/data` linked), so the note's relative paths and its
Reproduce line are the committed ones; the note must come back byte for byte. The figures the claims state are
also recomputed here by a plain loop over the files (an independent reference, not the tool). Skips, saying
why, when the shared data is absent.
"""

from __future__ import annotations

import shutil
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from support.paths import ROOT, SHARED_DATA

CASES = ROOT / "docs" / "case-studies"
LLMJUDGE = SHARED_DATA / "llmjudge"
LLMJUDGE_ARGS = ("verify", "docs/case-studies/llmjudge/claims.toml", "--root", "../shared/data/llmjudge",
                 "--date", "2026-12-04", "--no-plots", "--out", "docs/case-studies/llmjudge/note.md")

needs_llmjudge = pytest.mark.skipif(not (LLMJUDGE / "llmjudge_test_qrel_idx.txt").is_file(),
                                    reason="../shared/data/llmjudge is absent (the LLMJudge release is not copied "
                                           "into this repository); the case study cannot be rerun here")


def _rerun(case: str, args: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    work = tmp_path / "checkout"
    (work / "docs" / "case-studies" / case).mkdir(parents=True)
    shutil.copy(CASES / case / "claims.toml", work / "docs" / "case-studies" / case / "claims.toml")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(SHARED_DATA, target_is_directory=True)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return (work / "docs" / "case-studies" / case / "note.md").read_text(encoding="utf-8")


@needs_llmjudge
def test_llmjudge_note_is_the_committed_golden_file(tmp_path, monkeypatch):
    written = _rerun("llmjudge", LLMJUDGE_ARGS, tmp_path, monkeypatch)
    golden = (CASES / "llmjudge" / "note.md").read_text(encoding="utf-8")
    assert written == golden, ("docs/case-studies/llmjudge/note.md differs from what the case study's command "
                               "writes; if intended, rerun from the checkout: replicate " + " ".join(LLMJUDGE_ARGS))


def _grades(path: Path) -> dict[tuple[str, str], int]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, docid, grade = line.split()
        out[qid, docid] = int(grade)
    return out


def _rounds_to(x: Decimal, printed: str) -> bool:
    text = printed.replace(",", "")
    places = -Decimal(text).as_tuple().exponent  # type: ignore[operator]
    half = Decimal(5) * Decimal(10) ** -(places + 1)
    return Decimal(text) - half <= x <= Decimal(text) + half


@needs_llmjudge
def test_llmjudge_claims_agree_with_a_plain_count():
    claims = tomllib.loads((CASES / "llmjudge" / "claims.toml").read_text(encoding="utf-8"))
    gold = _grades(LLMJUDGE / "llmjudge_test_qrel_idx.txt")
    runs = {name: _grades(LLMJUDGE / entry["files"][0]) for name, entry in claims["runs"].items()}
    checked = 0
    for claim in claims["claims"]:
        if claim["metric"] not in ("n", "em", "mae", "change_rate"):
            continue
        if claim["metric"] == "change_rate":
            old, new = runs[claim["old"]], runs[claim["new"]]
            keys = old.keys() & new.keys()
            x = Decimal(100) * sum(old[k] != new[k] for k in keys) / len(keys)
        else:
            labels = runs[claim["run"]]
            keys = labels.keys() & gold.keys()
            if claim["metric"] == "n":
                x = Decimal(len(keys))
            elif claim["metric"] == "em":
                x = Decimal(100) * sum(labels[k] == gold[k] for k in keys) / len(keys)
            else:
                x = Decimal(sum(abs(labels[k] - gold[k]) for k in keys)) / len(keys)
        assert _rounds_to(x, claim["value"]), (claim["id"], x, claim["value"])
        checked += 1
    assert checked == 8 * 3 + 1
