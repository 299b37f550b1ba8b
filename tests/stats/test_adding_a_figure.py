"""Adding a four-cell figure is one declaration: registered from outside the package, a new figure is in the
bootstrap's intervals, an edge's JSON, the rendered tables, matrix, verify's metric names and the docs' table.

The figure added here, the share of what the old version got wrong that the new one fixes,
``only_new / (only_new + neither)``, is no figure of the package; every expected value is computed
by hand from the cells of ten items written out below, never by the code under test.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from replicate.judge.api import load_runs
from replicate.judge.compare import chain, compare
from replicate.judge.matrix import matrix
from replicate.judge.render import chain_text, comparison_text
from replicate.judge.render.matrix import matrix_text
from replicate.judge.select import runs_from_toml
from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import PARSERS
from replicate.stats.bootstrap import Clusters, bootstrap_pairs
from replicate.stats.countintervals import cell_figures
from replicate.stats.few_clusters import WILSON
from replicate.stats.fourcell import FIGURES, Figure, FourCell, register_figure
from replicate.verify.api import verify
from replicate.verify.metrics import metric, metric_names
from replicate.verify.note import render_note
from support.tools import load_tool

pytestmark = pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")

PARSER = "umbrela-fallback@1"
NAME = "fixed_share_of_old_wrong"
FIXED = Figure(
    NAME, lambda c: (c.only_new, c.only_new + c.neither), "only_new / (only_new + neither)",
    "fixed share of old-wrong", "fixed/old-wrong", "the share of what the old version got wrong that the new one fixes",
    proportion=True, views=frozenset({"edge", "chain", "matrix"}),
)

# (gold, A's label, B's label) per item, each in two queries' worth of clusters; every label is parsed.
ITEMS = [
    (2, 2, 2), (1, 1, 1), (0, 0, 0),  # both right: 3
    (3, 3, 1), (2, 2, 0),  # only A right: 2
    (1, 0, 1),  # only B right: 1
    (0, 1, 1), (2, 0, 0),  # both wrong, same label: 2
    (3, 2, 1), (1, 3, 2),  # both wrong, labels differ: 2
]
ONLY_NEW, NEITHER = 1, 4
FORWARD = Fraction(ONLY_NEW, ONLY_NEW + NEITHER)  # A -> B: 1/5
BACKWARD = Fraction(2, 2 + NEITHER)  # B -> A: only_new is A's 2 regressions: 1/3


@pytest.fixture()
def fixed():
    register_figure(FIXED)
    try:
        yield FIXED
    finally:
        del FIGURES[NAME]


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("adding")
    for column, name in ((0, "A"), (1, "B")):
        rows = [{"query_id": f"q{i % 5}", "corpus_id": f"d{i}", "original_qrel_score": gold,
                 "model_output": f"M: 1\nT: 1\nO: 1\n##final score: {labels[column]}"}
                for i, (gold, *labels) in enumerate(ITEMS)]
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "runs.toml").write_text('[runs]\nA = ["A.jsonl"]\nB = ["B.jsonl"]\n', encoding="utf-8")
    (root / "claims.toml").write_text(
        '[study]\ntitle = "a new figure"\nparser = "umbrela-fallback@1"\n\n[runs]\nA = ["A.jsonl"]\nB = ["B.jsonl"]\n\n'
        f'[[claims]]\nid = "fixed"\nmetric = "{NAME}"\nold = "A"\nnew = "B"\nvalue = "{100 * float(FORWARD):.1f}"\n'
        'unit = "percent"\n', encoding="utf-8")
    return root


def test_the_figure_is_no_figure_of_the_package():
    assert NAME not in FIGURES
    assert metric(NAME) is None


def test_the_bootstrap_gives_it_an_interval_never_narrower_than_wilson(fixed):
    labels = np.array([[a for _, a, _ in ITEMS], [b for _, _, b in ITEMS]])
    gold = np.array([g for g, _, _ in ITEMS])
    codes = np.arange(len(ITEMS)) % 5
    boot = bootstrap_pairs(labels, gold, [(0, 1), (1, 0)], clusters=Clusters(codes, 5, "query_id"), n_resamples=200)
    forward, backward = boot.intervals()
    assert forward[NAME].at_least == WILSON and forward[NAME].low is not None
    assert forward[NAME].low <= FORWARD <= forward[NAME].high and backward[NAME].low <= BACKWARD <= backward[NAME].high
    # its replicate values are its ratio of each replicate's counts (both, only_old, only_new, neither x 2)
    reps = boot.replicates[:, 0]
    want = reps[:, 2] / (reps[:, 2] + reps[:, 3] + reps[:, 4])
    np.testing.assert_array_equal(boot.values(NAME)[:, 0], want)


def test_an_edge_shows_it_in_json_text_and_the_interval_tables(fixed, study):
    a, b = load_runs(runs_from_toml(study / "runs.toml")).labelled(PARSER)
    cmp = compare(a, b, uncertainty=Uncertainty(replicates=100))
    js = cmp.to_json()
    assert cmp.cells.exact(NAME) == FORWARD and js[NAME] == float(FORWARD) == getattr(cmp.cells, NAME)
    assert js["ci"][NAME]["default"] == "cluster-bootstrap-t-percentile" and "wilson-score" in js["ci"][NAME]
    text = comparison_text(cmp, "table")
    assert re.search(r"\nfixed share of old-wrong +only_new / \(only_new \+ neither\) +20\.00% +\[", text)
    assert "fixed/" not in text and "fixed/" in chain_text([cmp], "table").split("intervals:")[1]
    _two_line_header(chain_text([cmp], "table").split("intervals:\n")[1].split("\n\n")[1])
    assert re.search(r"\| fixed share of old-wrong +\| only_new / \(only_new \+ neither\) +\| 20\.00% +\|",
                     comparison_text(cmp, "markdown"))
    assert re.search(r"\| fixed/old-wrong +\|", chain_text([cmp], "markdown").split("intervals:")[1])


def test_a_table_of_counts_gives_its_wilson_interval(fixed):
    figs = cell_figures(FourCell(3, 2, 1, 4))
    assert figs.to_json()[NAME] == 0.2 and figs.to_json()["ci"][NAME]["default"] == "wilson-score"


def test_matrix_and_chain_show_it(fixed, study):
    runs = load_runs(runs_from_toml(study / "runs.toml")).labelled(PARSER)
    m = matrix(list(runs))
    assert m.figures[NAME][0, 1] == float(FORWARD) and m.figures[NAME][1, 0] == float(BACKWARD)
    assert "fixed share of old-wrong (only_new / (only_new + neither))" in matrix_text(m, "markdown")
    assert re.search(r"\| fixed/old-wrong +\|", chain_text(chain(list(runs)), "markdown"))
    _two_line_header(chain_text(chain(list(runs)), "table").split("\n\n")[1])


def test_verify_can_name_it(fixed, study):
    assert NAME in metric_names("runs") and metric(NAME).units == ("percent", "fraction")  # type: ignore[union-attr]
    v = verify(study / "claims.toml", root=str(study), date="2026-01-01")
    (result,) = v.runs.results
    assert result.computed[PARSER].value == FORWARD and v.ok


def test_the_verify_note_shows_it_last_in_its_tables_of_edges(fixed, study):
    v = verify(study / "claims.toml", root=str(study), date="2026-01-01", uncertainty=Uncertainty(replicates=100))
    edges = render_note(v).split("## Edges")[1]
    rates = next(line for line in edges.splitlines() if line.startswith("| edge ") and "floor of new" in line)
    assert re.search(r"\| change +\| fixed/old-wrong +\| floor of new", rates)
    assert re.search(r"\| A -> B +\|.* 20\.00% +\| - +\| - +\|", edges)  # its value, then no floor
    intervals = next(line for line in edges.splitlines() if "McNemar p (clustered)" in line)
    assert re.search(r"\| ratio 95% +\| fixed/old-wrong 95% +\| McNemar p", intervals)


def test_verify_tries_it_for_a_figure_counting_the_same_items(fixed, study, tmp_path):
    # only_new over all items is backward_rate (1/10); printed as this figure's 20.0%, it mismatches, and the
    # alternatives find the same count over the old version's wrong items
    claims = (study / "claims.toml").read_text(encoding="utf-8").replace(f'metric = "{NAME}"', 'metric = "backward_rate"')
    (tmp_path / "claims.toml").write_text(claims, encoding="utf-8")
    v = verify(tmp_path / "claims.toml", root=str(study), date="2026-01-01")
    (result,) = v.runs.results
    assert result.computed[PARSER].value == Fraction(ONLY_NEW, len(ITEMS)) and not v.ok
    assert [(a.metric, a.value) for a in result.alternatives.found] == [(NAME, float(FORWARD))]


def test_verify_flags_a_printed_value_outside_its_range(fixed, study, tmp_path):
    claims = (study / "claims.toml").read_text(encoding="utf-8")
    bad = tmp_path / "claims.toml"
    bad.write_text(claims.replace(f'value = "{100 * float(FORWARD):.1f}"', 'value = "120.0"'), encoding="utf-8")
    v = verify(bad, root=str(study), date="2026-01-01")
    assert any(f.kind == "impossible" and "a share cannot be 120.0%" in f.message for f in v.flags)


def test_the_docs_tables_list_it(fixed):
    docgen = load_tool("docgen")
    assert f"| `{NAME}` | only_new / (only_new + neither) | the share of what" in docgen.figures_block()
    assert f"| `{NAME}` | `old` + `new` | only_new / (only_new + neither) | percent, fraction |" in (
        docgen.figure_metrics_block())


@pytest.mark.parametrize("bad, why", [
    (Figure("em_old", lambda c: (c.both, c.both), "", "", "", ""), "registered twice"),
    (Figure("Bad-Name", lambda c: (c.both, c.both), "", "", "", ""), "lower-case letters"),
    (Figure("too_big", lambda c: (c.both + 1, 1), "", "", "", ""), "outside its kind 'rate'"),
    (Figure("not_a_count", lambda c: (-c.only_new, _n(c)), "", "", "", "", kind="difference", proportion=True),
     "a proportion's count must lie within its denominator"),
    (Figure("false_mirror", lambda c: (c.only_old, _n(c)), "", "", "", "", mirror="em_old"),
     "mirrors 'em_old', which mirrors 'em_new'"),
    (Figure("self_mirror", lambda c: (c.only_old, _n(c)), "", "", "", "", mirror="self_mirror"),
     "is not 'self_mirror' of the reverse edge"),
    (Figure("fractional", lambda c: (c.both / 2, _n(c)), "", "", "", ""), "whole numbers"),
    (Figure("nowhere", lambda c: (c.both, _n(c)), "", "", "", "", views=frozenset({"plots"})), "views must be"),
])
def test_a_declaration_is_checked_against_its_own_claims(bad, why):
    with pytest.raises(ValueError, match=why):
        register_figure(bad)
    assert bad.name not in FIGURES or bad.name == "em_old"


def _two_line_header(block: str) -> None:
    """The figure's short name heads its column on two lines: ``fixed/`` above ``old-wrong``."""
    first, second = block.splitlines()[:2]
    assert first.index("fixed/") == second.index("old-wrong"), block


def _n(c):
    return c.both + c.only_old + c.only_new + c.neither
