"""One interval map per figure (issue 32 item 4): ``ci`` names every method and one default, text shows that one.

The Wilson bounds are checked against scipy's ``binomtest(...).proportion_ci(method="wilson")``; the
default is checked against the interval the readings use (the library's, computed by the same call) and
against the rule: bootstrap when resampled, Wilson otherwise. The deprecated ``interval`` key beside ``ci``
is gone (issue 40).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

import replicate
from replicate.cli.app import app
from replicate.judge.uncertainty import Uncertainty
from replicate.stats.countintervals import cell_figures
from replicate.stats.fourcell import FourCell

ROOT = Path(__file__).resolve().parents[2]
P = "umbrela-fallback@1"
A, B = "fixtures/example/results/alpha-2024-08_annotations.jsonl", "fixtures/example/results/alpha-2025-01_annotations.jsonl"
PROPORTIONS = {  # figure -> (count, denominator) from the cells
    "em_old": lambda c: (c["both"] + c["only_old"], sum(c.values())),
    "em_new": lambda c: (c["both"] + c["only_new"], sum(c.values())),
    "regression_rate": lambda c: (c["only_old"], sum(c.values())),
    "regression_share_of_old_correct": lambda c: (c["only_old"], c["both"] + c["only_old"]),
    "backward_rate": lambda c: (c["only_new"], sum(c.values())),
}
OTHERS = ("accuracy_difference", "change_rate", "independent_regression_rate", "independence_ratio")


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


def _json(*args: str) -> dict:
    return json.loads(_run(*args, "-f", "json"))


def _check_wilson(doc: dict) -> None:
    for fig, parts in PROPORTIONS.items():
        k, n = parts(doc["cells"])
        want = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        got = doc["ci"][fig]["wilson-score"]
        assert got["low"] == pytest.approx(want.low, abs=1e-12) and got["high"] == pytest.approx(want.high, abs=1e-12)
        assert got["assumes"] == "independent items" and got["method"] == "wilson-score"
    assert "intervals" not in doc  # the deprecated key is gone


def _readings(cluster: str | None) -> dict:
    """The bootstrap intervals the readings of ``compare A B`` use, from the library."""
    loaded = replicate.load_runs(replicate.runs_from_files([A, B]))
    old, new = loaded.labelled(P)
    settings = Uncertainty(key_fields=loaded.key_names, **({"cluster": cluster} if cluster else {}))
    err = replicate.compare(old, new, uncertainty=settings).uncertainty
    assert err is not None
    return json.loads(json.dumps({k: v.to_json() for k, v in err.interval.items()}))


@pytest.mark.parametrize("cluster, method", [(None, "cluster-bootstrap-t-percentile"), ("item", "item-bootstrap-percentile")])
def test_compare_default_is_the_bootstrap(cluster: str | None, method: str) -> None:
    extra = [] if cluster is None else ["--cluster", cluster]
    doc = _json("compare", A, B, "-p", P, *extra)
    _check_wilson(doc)
    assert set(doc["ci"]) == set(PROPORTIONS) | set(OTHERS)
    assert "interval" not in doc
    readings = _readings(cluster)
    for fig, entry in doc["ci"].items():
        assert entry["default"] == method, fig
        assert entry[method] == readings[fig]  # the interval the readings use
        if fig in PROPORTIONS:  # never narrower than the item-level interval
            assert set(entry) == {"default", method, "wilson-score"}
            assert entry[method]["at_least"] == "wilson-score"
            assert entry[method]["low"] <= entry["wilson-score"]["low"] + 1e-15
            assert entry[method]["high"] >= entry["wilson-score"]["high"] - 1e-15
        else:
            assert set(entry) == {"default", method}


def test_compare_without_bootstrap_defaults_to_wilson() -> None:
    doc = _json("compare", A, B, "-p", P, "--replicates", "0")
    _check_wilson(doc)
    assert set(doc["ci"]) == set(PROPORTIONS)  # the other figures have no interval without resampling
    assert {e["default"] for e in doc["ci"].values()} == {"wilson-score"}
    assert "interval" not in doc


def test_text_and_markdown_show_the_default_only() -> None:
    doc = _json("compare", A, B, "-p", P)
    boot = doc["ci"]["regression_rate"]["cluster-bootstrap-t-percentile"]
    wil = doc["ci"]["regression_rate"]["wilson-score"]
    shown_boot = f"[{100 * boot['low']:.1f}%, {100 * boot['high']:.1f}%]"
    shown_wilson = f"[{100 * wil['low']:.1f}%, {100 * wil['high']:.1f}%]"
    assert shown_boot != shown_wilson
    for fmt in ("table", "markdown"):
        text = _run("compare", A, B, "-p", P, "-f", fmt)
        row = next(line for line in text.splitlines() if line.lstrip("| ").startswith("regression rate "))
        assert shown_boot in row and shown_wilson not in row
        assert "95% bootstrap (by query_id)" in text and "CI (Wilson)" not in text
    text = _run("compare", A, B, "-p", P, "--replicates", "0")
    row = next(line for line in text.splitlines() if line.startswith("regression rate "))
    assert shown_wilson in row and "95% CI (Wilson)" in text and "bootstrap (by" not in text


def test_chain_matrix_and_cells_carry_the_map() -> None:
    chain = _json("chain", "--runs", "fixtures/example/runs.toml", "-p", P)
    matrix = _json("matrix", "--runs", "fixtures/example/runs.toml", "-p", P)
    for edge in [*chain["edges"], *matrix["pairs"]]:
        assert edge["ci"]["independence_ratio"]["default"] == "cluster-bootstrap-t-percentile"
        _check_wilson(edge)
    cells = _json("cells", "6252", "5776", "1455", "7163")
    assert "interval" not in cells
    figs = cell_figures(FourCell(6252, 5776, 1455, 7163), n_resamples=1000, seed=0)
    used = json.loads(json.dumps({k: v.to_json() for k, v in figs.interval.items()}))
    for fig, entry in cells["ci"].items():
        assert entry == {"default": used[fig]["method"], entry["default"]: used[fig]}
    assert {cells["ci"][f]["default"] for f in PROPORTIONS} == {"wilson-score"}
    assert {cells["ci"][f]["default"] for f in ("accuracy_difference", "independence_ratio")} == {"item-bootstrap-percentile"}


def test_too_few_clusters_default_is_null_with_its_reason(tmp_path: Path) -> None:
    """3 queries: the cluster bootstrap gives no interval (fewer than 5 clusters), and says why; Wilson's stays
    listed but is not the default, and the text shows no interval rather than the item-level one."""
    rows = [(f"q{q}", f"d{d}", (q + d) % 4, (q * d) % 4) for q in range(3) for d in range(20)]
    for name, col in (("old", 2), ("new", 3)):
        with open(tmp_path / f"{name}.jsonl", "w") as fh:
            for r in rows:
                fh.write(json.dumps({"query_id": r[0], "corpus_id": r[1], "original_qrel_score": 2.0,
                                     "model_output": f"##final score: {r[col]}"}) + "\n")
    args = ["compare", str(tmp_path / "old.jsonl"), str(tmp_path / "new.jsonl"), "-p", P]
    doc = _json(*args)
    entry = doc["ci"]["regression_rate"]
    boot = entry[entry["default"]]
    assert entry["default"] == "cluster-bootstrap-t-percentile"
    assert boot["low"] is None and boot["high"] is None and "too few query_id clusters" in boot["reason"]
    assert entry["wilson-score"]["low"] is not None
    row = next(line for line in _run(*args).splitlines() if line.startswith("regression rate "))
    assert row.rstrip().endswith("no interval (3 clusters)")
