"""One definition per figure: compare, matrix, floor and verify agree on every figure of docs/design/design.md.

Two runs A and B over ten items, built so that the edge A -> B has the cells
written below; every expected value is computed here by hand from those cells
(fractions of the counts), never by the code under test. Each command is asked
through the library (exact fractions where it offers them, float views) and
through the CLI's JSON (floats, which must equal the correctly rounded
fraction exactly).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.judge.api import load_runs
from replicate.judge.compare import compare
from replicate.judge.floor import floor
from replicate.judge.matrix import matrix
from replicate.judge.select import runs_from_toml
from replicate.output import dumps_json
from replicate.parsing import PARSERS
from replicate.verify.api import verify

pytestmark = pytest.mark.skipif("umbrela-fallback@1" not in PARSERS, reason="built-in parsers not installed")

PARSER = "umbrela-fallback@1"

# (gold, A's label, B's label) per item; every label is parsed.
ITEMS = [
    (2, 2, 2), (1, 1, 1), (0, 0, 0),  # both right: 3
    (3, 3, 1), (2, 2, 0),  # only A right (regressions A -> B): 2
    (1, 0, 1),  # only B right: 1
    (0, 1, 1), (2, 0, 0),  # both wrong, same label: 2
    (3, 2, 1), (1, 3, 2),  # both wrong, labels differ: 2
]
# The edge A -> B by hand: both 3, only_old 2, only_new 1, neither 4, N 10;
# labels differ on the 2 + 1 flips and the 2 wrong-but-different items: 5.
BOTH, ONLY_OLD, ONLY_NEW, NEITHER, CHANGED = 3, 2, 1, 4, 5
N = BOTH + ONLY_OLD + ONLY_NEW + NEITHER


def expected(both: int, only_old: int, only_new: int, neither: int, changed: int) -> dict[str, Fraction]:
    """design.md's definitions written out for this test (the reverse edge swaps only_old and only_new)."""
    n = both + only_old + only_new + neither
    em_old, em_new = Fraction(both + only_old, n), Fraction(both + only_new, n)
    independent = em_old * (1 - em_new)
    return {
        "em_old": em_old,
        "em_new": em_new,
        "regression_rate": Fraction(only_old, n),
        "regression_share_of_old_correct": Fraction(only_old, both + only_old),
        "backward_rate": Fraction(only_new, n),
        "accuracy_difference": em_old - em_new,
        "change_rate": Fraction(changed, n),
        "independent_regression_rate": independent,
        "independence_ratio": Fraction(only_old, n) / independent,
    }


FORWARD = expected(BOTH, ONLY_OLD, ONLY_NEW, NEITHER, CHANGED)
BACKWARD = expected(BOTH, ONLY_NEW, ONLY_OLD, NEITHER, CHANGED)
FIGURES = sorted(FORWARD)


def test_the_hand_computed_values():
    # the numbers this file checks everything against, spelled out once
    assert FORWARD == {
        "em_old": Fraction(1, 2), "em_new": Fraction(2, 5), "regression_rate": Fraction(1, 5),
        "regression_share_of_old_correct": Fraction(2, 5), "backward_rate": Fraction(1, 10),
        "accuracy_difference": Fraction(1, 10), "change_rate": Fraction(1, 2),
        "independent_regression_rate": Fraction(3, 10), "independence_ratio": Fraction(2, 3),
    }


def _write_run(path: Path, column: int) -> None:
    rows = [
        {"query_id": "q1", "corpus_id": f"d{i}", "original_qrel_score": gold,
         "model_output": f"M: 1\nT: 1\nO: 1\n##final score: {labels[column]}"}
        for i, (gold, *labels) in enumerate(ITEMS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


_CLAIM_UNITS = {"independence_ratio": ("ratio", "{:.4f}")}


def _claims_toml() -> str:
    lines = ['[study]\ntitle = "agreement"\nparser = "umbrela-fallback@1"\n',
             '[runs]\nA = ["A.jsonl"]\nB = ["B.jsonl"]\n']
    edge = [f for f in FIGURES if f not in ("em_old", "em_new", "accuracy_difference")]
    for fig in edge:
        unit, form = _CLAIM_UNITS.get(fig, ("percent", "{:.1f}"))
        value = FORWARD[fig] if unit == "ratio" else 100 * FORWARD[fig]
        lines.append(f'[[claims]]\nid = "{fig}"\nmetric = "{fig}"\nold = "A"\nnew = "B"\n'
                     f'value = "{form.format(float(value))}"\nunit = "{unit}"\n')
    for run, fig in (("A", "em_old"), ("B", "em_new")):
        lines.append(f'[[claims]]\nid = "em-{run}"\nmetric = "em"\nrun = "{run}"\n'
                     f'value = "{100 * float(FORWARD[fig]):.1f}"\nunit = "percent"\n')
    lines.append('[[claims]]\nid = "floor"\nmetric = "floor.regression_min"\nruns = ["A", "B"]\n'
                 f'value = "{100 * float(min(FORWARD["regression_rate"], BACKWARD["regression_rate"])):.1f}"\n'
                 'unit = "percent"\n')
    return "\n".join(lines)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("agree")
    _write_run(root / "A.jsonl", 0)
    _write_run(root / "B.jsonl", 1)
    (root / "runs.toml").write_text('[runs]\nA = ["A.jsonl"]\nB = ["B.jsonl"]\n', encoding="utf-8")
    (root / "claims.toml").write_text(_claims_toml(), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def runs(study):
    a, b = load_runs(runs_from_toml(study / "runs.toml")).labelled(PARSER)
    return a, b


def _cli_json(args: list[str]) -> dict:
    res = CliRunner().invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


# --- compare ----------------------------------------------------------------------------
def test_compare(runs, study):
    a, b = runs
    cmp = compare(a, b)
    c = cmp.cells
    assert (c.both, c.only_old, c.only_new, c.neither, cmp.changed, c.n) == (BOTH, ONLY_OLD, ONLY_NEW, NEITHER, CHANGED, N)
    js = _cli_json(["compare", str(study / "A.jsonl"), str(study / "B.jsonl"), "-p", PARSER])
    lib = cmp.to_json()
    for fig in FIGURES:
        assert c.exact(fig) == FORWARD[fig], fig
        assert getattr(c, fig) == float(FORWARD[fig]), fig
        assert lib[fig] == js[fig] == float(FORWARD[fig]), fig
    assert cmp.change_rate == float(FORWARD["change_rate"])


# --- matrix -----------------------------------------------------------------------------
def test_matrix(runs, study):
    m = matrix(list(runs))
    js = _cli_json(["matrix", "--runs", str(study / "runs.toml"), "-p", PARSER])
    label_agreement = {"forward": 1 - FORWARD["change_rate"], "backward": 1 - BACKWARD["change_rate"]}
    for (i, j), want, agree in (((0, 1), FORWARD, label_agreement["forward"]), ((1, 0), BACKWARD, label_agreement["backward"])):
        for fig, arr in m.figures.items():
            value = agree if fig == "label_agreement" else want[fig]
            assert arr[i, j] == float(value), (fig, i, j)
    pairs = {(p["old"]["name"], p["new"]["name"]): p for p in js["pairs"]}
    lib_pairs = {(c.old.name, c.new.name): c for c in m.comparisons()}
    for key, want in ((("A", "B"), FORWARD), (("B", "A"), BACKWARD)):
        for fig in FIGURES:
            assert lib_pairs[key].cells.exact(fig) == want[fig], (key, fig)
            assert pairs[key][fig] == float(want[fig]), (key, fig)
    ems = {r["name"]: r["em"] for r in js["runs"]}
    assert ems == {b.name: b.em for b in m.baselines} == {"A": float(FORWARD["em_old"]), "B": float(FORWARD["em_new"])}


# --- floor ------------------------------------------------------------------------------
def test_floor(runs, study):
    a, b = runs
    fl = floor([a, b], edge=(a, b))
    js = _cli_json(["floor", "--runs", str(study / "runs.toml"), "A", "B", "--edge", "A:B", "-p", PARSER])
    for p, jp, want in zip(fl.pairs, js["pairs"], (FORWARD, BACKWARD)):
        assert (p.old, p.new) == (jp["old"], jp["new"])
        assert p.regression == want["regression_rate"] and p.change == want["change_rate"]
        assert p.regression_rate == jp["regression_rate"] == float(want["regression_rate"])
        assert p.change_rate == jp["change_rate"] == float(want["change_rate"])
    assert fl.regression_span.lo == min(FORWARD["regression_rate"], BACKWARD["regression_rate"])
    assert [r["em"] for r in js["repeats"]] == [float(FORWARD["em_old"]), float(FORWARD["em_new"])]
    assert fl.edge.regression.exact == FORWARD["regression_rate"]
    for fig in FIGURES:
        assert fl.edge.comparison.cells.exact(fig) == FORWARD[fig], fig
        assert js["edge"][fig] == float(FORWARD[fig]), fig


# --- verify -----------------------------------------------------------------------------
def test_verify(study):
    from replicate.judge.uncertainty import Uncertainty

    # the CLI's defaults: 1,000 bootstrap replicates, seed 0, clusters by query_id
    v = verify(study / "claims.toml", root=str(study), date="2026-01-01", uncertainty=Uncertainty())
    lib = json.loads(dumps_json(v))
    js = _cli_json(["verify", str(study / "claims.toml"), "--root", str(study), "--date", "2026-01-01"])
    assert lib["ok"] and js["ok"]
    computed = {r.claim.id: r.computed[PARSER].value for r in v.runs.results}
    edge_figures = [f for f in FIGURES if f in computed]
    assert len(edge_figures) == 6  # every edge metric a claim can name
    for fig in edge_figures:
        assert computed[fig] == FORWARD[fig], fig  # exact, as verify matches
    assert computed["em-A"] == FORWARD["em_old"] and computed["em-B"] == FORWARD["em_new"]
    assert computed["floor"] == min(FORWARD["regression_rate"], BACKWARD["regression_rate"])
    (edge,) = [e for e in js["edges"] if e["parser"] == PARSER]
    assert edge in lib["edges"]
    for fig in FIGURES:
        assert edge[fig] == float(FORWARD[fig]), fig
