"""Where the note prints a grade (the impossible-MAE flag's scale), a named label set shows its names."""

from __future__ import annotations

from replicate.labels import LabelSet
from replicate.parsing import PARSERS, Parser
from replicate.verify.api import verify_runs
from replicate.verify.claims_file import parse_claims
from replicate.verify.note import render_note

from .test_recompute import make_run

VERDICTS = LabelSet.named_ordinal("B>>A", "B>A", "A=B", "A>B", "A>>B")
NAMED = Parser("testverdict-digit@1", "a bare digit 0-4, named as Arena-Hard verdicts",
               lambda t: int(t) if t in "01234" and len(t) == 1 else None, labels=(0, 1, 2, 3, 4),
               label_set=VERDICTS)
PLAIN = Parser("testgrade-digit@1", "a bare digit 0-4", lambda t: int(t) if t in "01234" and len(t) == 1 else None,
               labels=(0, 1, 2, 3, 4))


def _note(parser: Parser) -> str:
    data = {"runs": {"r": ["r.jsonl"]},
            "claims": [{"id": "m", "metric": "mae", "run": "r", "value": "9.5", "unit": "ratio"}]}
    cf = parse_claims(data, path="c.toml")
    PARSERS.register(parser)
    try:
        run = make_run("r", [0, 4, 2, 1], ["0", "3", "2", "4"])
        v = verify_runs(cf, {"r": run}, parsers=[parser.name], date="2026-01-01")
        return render_note(v)
    finally:
        PARSERS.unregister(parser.name)


def test_the_impossible_mae_flag_names_the_grades_of_a_named_scale():
    note = " ".join(_note(NAMED).split())
    # labels and gold reach 4 (by hand): the scale is B>>A (0) .. A>>B (4)
    assert "an MAE of 9.5 is impossible on a B>>A..A>>B (0-4) scale" in note


def test_grades_without_names_stay_numbers():
    assert "an MAE of 9.5 is impossible on a 0-4 scale" in " ".join(_note(PLAIN).split())
