"""Where the repository, its committed case-study data and the shared data are, for every test."""

from __future__ import annotations

import gzip
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = ROOT.parent / "shared" / "data"
#: The case studies' data, committed whole and gzip-compressed (fixtures/case-studies/<name>/README.md).
CASE_DATA = ROOT / "fixtures" / "case-studies"
LLMJUDGE = CASE_DATA / "llmjudge"
IFBENCH = CASE_DATA / "ifbench"


def text_of(path: Path) -> str:
    """A committed data file's text (``.gz`` undone), for the tests' own plain-loop references."""
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
