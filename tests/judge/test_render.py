"""Rendering of comparisons and four-cell tables: hand-computed text."""

from __future__ import annotations

import numpy as np

from replicate.diagnostics import Diagnostics
from replicate.judge.compare import chain
from replicate.judge.model import LabelledRun
from replicate.judge.render import cells_text, chain_text, comparison_text, identity_line, reading, warnings_text
from replicate.stats.countintervals import cell_figures
from replicate.stats.fourcell import FourCell


def _run(name, labels, gold=(1, 1, 1, 0)):
    keys = np.array(["a", "b", "c", "d"], dtype=object)
    return LabelledRun(name, keys, np.array(gold, np.int16), np.array(labels, np.int8), "toy@1")


def test_reading_sentences_cover_each_case():
    assert reading(FourCell(0, 0, 0, 0)) == "Reading: no item has a usable label on both sides; nothing to compare."
    assert reading(FourCell(0, 0, 3, 2)).startswith(
        "Reading: the old version got nothing right, so there is nothing to lose; independence ratio undefined"
    )
    # 2 of 8 old-correct lost; ratio = (2/20) / ((8/20) * (1 - 9/20)) = 0.1 / 0.22 = 0.4545...
    # Without an interval the reading says what a ratio below 1 does not show (item difficulty alone gives it).
    assert reading(FourCell(6, 2, 3, 9)) == (
        "Reading: the new version loses 25.0% of what the old one got right (2 of 8 items) and gains 3 it got wrong; "
        "independence ratio 0.45 (no interval computed): fewer regressions than the classic baseline, which item "
        "difficulty alone can explain (the classic baseline EM old x (1 - EM new) assumes every item equally hard; "
        "where items differ in difficulty two judges with unrelated errors already score below 1)."
    )
    assert "independence ratio 1.00 (no interval computed): as many regressions as the classic baseline" in reading(FourCell(5, 5, 5, 5))
    # 9/20 observed vs (10/20)(1 - 10/20) = 0.25 expected -> 1.80
    assert "independence ratio 1.80 (no interval computed): more regressions than unrelated errors would give" in reading(
        FourCell(1, 9, 9, 1)
    )


def test_identity_line_fills_in_the_numbers():
    assert identity_line(FourCell(10, 7, 3, 5)) == (
        "identity: regression - backward = 28.00% - 12.00% = 16.00% = EM old - EM new = 68.00% - 52.00% = 16.00%"
        " (holds: the asymmetry says nothing beyond the accuracy difference)"
    )
    assert identity_line(FourCell(0, 0, 0, 0)) == "identity: undefined (n = 0)"


def test_cells_text_markdown_table():
    text = cells_text(cell_figures(FourCell(6252, 5776, 1455, 7163)), "markdown")
    assert "| old right | 6252 (both)     | 5776 (only_old) | 12028   |" in text
    # Wilson 95% of 5776 / 12028, by hand: centre (5776 + 1.92) / (12028 + 3.84), half-width 0.0089
    assert "| regression share of old-correct | only_old / (both + only_old) | 48.02%  | [47.1%, 48.9%]               |" in text
    assert "| 95% CI (independent items)   |" in text and "Intervals assume independent items" in text


def test_comparison_and_chain_text():
    # gold 1,1,1,0; v0 right on a,b,d; v1 right on a,c; v2 right on a,b,c,d
    runs = [_run("v0", [1, 1, 0, 0]), _run("v1", [1, 0, 1, 2]), _run("v2", [1, 1, 1, 0])]
    edges = chain(runs, uncertainty=None)
    text = comparison_text(edges[0], "table")
    assert text.startswith("v0 -> v1\n========\nparser: toy@1; unparsed policy: intersect (items unparsed on either side are dropped)\n")
    assert "shared items: 4; compared n = 4" in text
    assert "v0 right  1 (both)      2 (only_old)  3" in text
    # hand-computed: v0->v1 EM 3/4 and 2/4, change 3/4, ratio 0.5 / (0.75 x 0.5) = 1.33,
    # McNemar (2, 1): 2 x P(X <= 1 | 3, 1/2) = 1; v1->v2 independent rate 0: ratio undefined,
    # McNemar (0, 2): 2 x 1/4 = 0.5
    text = chain_text(edges, "table")
    lines = text.splitlines()
    assert [ln.split() for ln in lines[3:5]] == [
        ["1", "v0", "v1", "4", "1", "2", "1", "0", "0/0"],
        ["2", "v1", "v2", "4", "2", "0", "2", "0", "0/0"],
    ]
    assert [ln.split() for ln in lines[9:11]] == [
        ["1", "75.0%", "50.0%", "50.0%", "66.7%", "25.0%", "75.0%", "1.33", "1.0000"],
        ["2", "50.0%", "100.0%", "0.0%", "0.0%", "50.0%", "50.0%", "-", "0.5000"],
    ]
    assert max(map(len, lines)) <= 100
    md = chain_text(edges, "markdown").splitlines()
    assert [c.strip() for c in md[2].split("|")[1:-1]] == [
        "v0", "v1", "4", "1/2/1/0", "75.0%", "50.0%", "50.0%", "66.7%", "25.0%", "75.0%", "1.33", "1.0000", "0/0"
    ]


def test_chain_text_fits_100_columns_with_the_example_names():
    runs = [_run(f"alpha-2024-0{k}", [1, 1, 0, 0]) for k in range(4)]
    text = chain_text(chain(runs, uncertainty=None), "table")
    assert max(map(len, text.splitlines())) <= 100


def test_warnings_text_groups_by_code_and_limits():
    d = Diagnostics()
    for line in range(1, 6):
        d.warn("blank-line", "blank line (skipped)", path="f.jsonl", line=line)
    d.warn("bom", "file starts with a UTF-8 byte-order mark (ignored)", path="g.jsonl", line=1)
    assert warnings_text(d) == (
        "warning: 6 warning(s) about the input (--strict makes them errors):\n"
        "  blank-line: 5\n"
        "    f.jsonl:1: blank line (skipped) [blank-line]\n"
        "    f.jsonl:2: blank line (skipped) [blank-line]\n"
        "    f.jsonl:3: blank line (skipped) [blank-line]\n"
        "    ... and 2 more\n"
        "  bom: 1\n"
        "    g.jsonl:1: file starts with a UTF-8 byte-order mark (ignored) [bom]\n"
    )
    assert warnings_text(Diagnostics()) == ""


def test_parse_counts_are_a_counter_of_the_values_at_least_zero_in_order_of_first_occurrence():
    from collections import Counter

    from replicate.judge.render.parse import FEW_VALUES, _counts

    rng = np.random.default_rng(5)
    cases = [
        np.array([3, -1, 0, 3, 2, -1, 0], np.int8),
        rng.integers(-1, 5, 10_000).astype(np.int8),
        rng.integers(-1, 4, 5_000).astype(np.int16),
        np.array([FEW_VALUES - 1, 0, FEW_VALUES - 1], np.int16),  # the largest value counted one at a time
        np.array([FEW_VALUES, 2, -1, FEW_VALUES, 300], np.int16),  # larger: sorted (np.unique)
        np.array([-1, -1], np.int8),
        np.empty(0, np.int8),
        [2, 0, 2],
    ]
    for values in cases:
        want = dict(Counter(int(v) for v in values if v >= 0))
        got = _counts(values)
        assert got == want and list(got) == list(want), values
