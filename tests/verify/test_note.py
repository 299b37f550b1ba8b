"""The note reads as plain text: prose wrapped at 100 columns without changing what markdown renders."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from replicate.output import wrap_markdown
from replicate.verify.note import WIDTH

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "note_example.md"


def _paragraphs(text: str) -> list[str]:
    """Blocks as markdown sees them: blank-line separated, lines joined; list items split."""
    blocks = []
    for block in re.split(r"\n\s*\n", text):
        items = re.split(r"\n(?=- )", block)
        blocks += [" ".join(item.split()) for item in items]
    return blocks


def test_wrapped_prose_renders_the_same():
    long = ("word " * 25).strip()
    text = f"# Title\n\n{long} - 12. # ok\n\n- {long} {long}\n\n| a | b |\n|---|---|\n| {long} | x |\n\n```sh\n{long}\n```\n"
    wrapped = wrap_markdown(text, 40)
    assert _paragraphs(wrapped) == _paragraphs(text)
    for line in wrapped.splitlines():
        if not line.startswith(("|", "word word word word word word word word word word word word")):
            assert len(line) <= 40, line


@pytest.mark.parametrize("word", ["-", "+", "*", ">", "#", "##", "12.", "3)", "=", "---", "|x", "```"])
def test_no_continuation_line_opens_a_markdown_block(word):
    text = "aaaa bbbb cccc " + word + " dddd eeee ffff gggg"
    wrapped = wrap_markdown(text, 14)
    lines = wrapped.splitlines()
    assert len(lines) > 1 and " ".join(wrapped.split()) == text
    assert all(not line.startswith(word + " ") and line != word for line in lines[1:]), wrapped


def test_list_items_continue_indented():
    assert wrap_markdown("- aaaa bbbb cccc dddd", 11) == "- aaaa bbbb\n  cccc dddd"


def test_golden_note_prose_fits_the_width():
    text = GOLDEN.read_text(encoding="utf-8")
    fenced = False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        if not fenced and not line.startswith(("|", "```")):
            assert len(line) <= WIDTH, line


def test_include_patterns_covered_by_a_parent_are_left_out():
    from replicate.provenance import minimal_globs

    assert minimal_globs(["results/**", "results/dl20/**", "top.jsonl", "results/**", "resultsX/**"]) == [
        "results/**", "top.jsonl", "resultsX/**"]
    assert minimal_globs(["a/b/**", "a/**"]) == ["a/**"]


def test_every_vs_floor_verdict_shows_its_n():
    """No verdict without its n: the edge's compared items and the floor's smallest pair, as compare and floor count them.

    alpha-2024-08 -> alpha-2025-01 under umbrela-fallback@1 is compared on 273 items (docs/audit.md) and the
    floor of alpha-2025-01 and its repeat pairs 275 (both pairs: `replicate floor` on the example).
    """
    rows = [line for line in GOLDEN.read_text(encoding="utf-8").splitlines()
            if line.startswith("| alpha-2024-08 -> alpha-2025-01") and "above" in line]
    assert len(rows) == 3
    assert any("`umbrela-fallback@1`" in r and "| above (n = 273; floor n = 275) |" in r for r in rows)
    assert all(re.search(r"\| (above|below|inside|indistinguishable) \(n = \d+; floor n = \d+\) \|", r) for r in rows)


def test_vs_floor_is_what_floor_edge_says_the_paired_test(tmp_path):
    """The note's "vs floor" is ``replicate floor --edge``'s verdict (its paired test by query cluster), not the
    older widened-range rule: 100 queries of 10 items, the new version's two reruns regress on each other on 5%
    of the items, old -> new on 7%; the paired test says above, the widened range indistinguishable."""
    import orjson

    from replicate.judge.floor import floor
    from replicate.judge.model import KEY_SEP, LabelledRun
    from replicate.judge.uncertainty import Uncertainty
    from replicate.verify import verify

    G, per = 100, 10
    wrong_new = [g * per + 3 for g in range(70)]
    wrong = {"old": [], "new": wrong_new, "new2": wrong_new[:20] + [g * per + 4 for g in range(20, 70)]}
    for name, items in wrong.items():
        bad = set(items)
        lines = [orjson.dumps({"query_id": f"q{i // per:03d}", "corpus_id": f"d{i:04d}", "original_qrel_score": 0.0,
                               "model_output": f"##final score: {int(i in bad)}"}) for i in range(G * per)]
        (tmp_path / f"{name}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "claims.toml").write_text(
        '[study]\nparser = "umbrela-fallback@1"\n[runs]\nold = ["old.jsonl"]\nnew = ["new.jsonl"]\nnew2 = ["new2.jsonl"]\n'
        '[[claims]]\nid = "e"\nmetric = "regression_rate"\nold = "old"\nnew = "new"\nvalue = "7.0"\nunit = "percent"\n'
        '[[claims]]\nid = "f"\nmetric = "floor.regression_max"\nruns = ["new", "new2"]\nvalue = "5.0"\n'
        'unit = "percent"\n'
    )
    v = verify(tmp_path / "claims.toml", root=tmp_path, date="2026-12-06", uncertainty=Uncertainty())
    check = v.runs.against_floor[("old", "new", "umbrela-fallback@1", "intersect")]
    # the same check as the floor command's, from the same labels
    keys = np.array([f"q{i // per:03d}{KEY_SEP}d{i:04d}" for i in range(G * per)], dtype=object)

    def run(name):
        lab = np.zeros(G * per, np.int8)
        lab[wrong[name]] = 1
        return LabelledRun(name, keys, np.zeros(G * per, np.int16), lab, "umbrela-fallback@1")

    fl = floor([run("new"), run("new2")], edge=(run("old"), run("new")), uncertainty=Uncertainty())
    assert (check.verdict, fl.edge.verdict) == ("above", "above")
    assert check.range_verdict == fl.edge.range_verdict == "indistinguishable"  # the older rule would not say it
    from replicate.verify.note import render_note

    note = render_note(v)
    assert any(line.startswith("| old -> new | `umbrela-fallback@1`") and line.endswith("| above (n = 1000; floor n = "
               "1000) |") for line in note.splitlines())
