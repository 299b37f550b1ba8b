"""Category rules added for real providers: content_filter is a refusal; reasoning never scored; a
`score` run that writes no trial exits non-zero."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import make_header
from replicate.collect.config import load_config, load_items
from replicate.diagnostics import Diagnostics
from replicate.scoring import SCORERS
from replicate.scoring.pipeline import score_records

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"


def _rows(recs):
    items = {it.id: it for it in load_items(FIX / "items.jsonl")}
    sc = SCORERS.get("final-answer-line@1")
    rows, _ = score_records(list(enumerate(recs, 2)), items, scorer_for={i: sc for i in items}, resources={},
                            diag=Diagnostics())
    return [r["category"] for r in rows]


def rec(**kw):
    base = {"model": "m", "item": "q01", "trial": 0, "text": None, "finish_reason": "stop", "refusal": None,
            "error_kind": None}
    return {**base, **kw}


def test_content_filter_is_a_refusal_even_with_an_answer_in_the_text():
    assert _rows([rec(text="Final answer: 8", finish_reason="content_filter"),
                  rec(trial=1, text="Final answer: 8")]) == ["refusal", "correct"]


def test_reasoning_is_not_scored():
    # the reasoning holds a correct answer line, the content none: a format failure, not a correct answer
    assert _rows([rec(text=None, reasoning="Final answer: 8"),
                  rec(trial=1, text=None, reasoning="Final answer: 8", finish_reason="length")]) == [
        "format_failure", "truncation"]


def test_score_exits_1_when_it_writes_no_trial(tmp_path):
    import orjson

    cfg = load_config(FIX / "config.toml")
    arch = tmp_path / "a.jsonl"
    arch.write_bytes(orjson.dumps(make_header(cfg, load_items(FIX / "items.jsonl"))) + b"\n")
    res = CliRunner().invoke(app, ["score", str(arch), "--items", str(FIX / "items.jsonl"),
                                   "--out", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 1
    assert "no trial was scored" in res.output
