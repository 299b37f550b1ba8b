"""`replicate path OLD:MIDDLE:NEW`: the direct edge against its two steps, checked against the per-item
classes `replicate items --per-item` gives the three edges, joined and counted by hand."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.stats.classify import CLASSES
from replicate.trials.paths import compose
from support.synth.trials import synthetic_rows

runner = CliRunner()


def write_path_table(path) -> str:
    n = 100
    a, b, c = (np.full(n, 0.5) for _ in range(3))
    a[:20], b[:20], c[:20] = 0.9, 0.1, 0.9  # down then up
    a[20:35], b[20:35], c[20:35] = 0.1, 0.9, 0.1  # up then down
    a[35:50], b[35:50], c[35:50] = 0.2, 0.5, 0.8  # a drift: two small steps, one large direct move
    a[50:60], b[50:60], c[50:60] = 0.9, 0.9, 0.1  # regressed on the second step only
    rows = synthetic_rows({"A": a, "B": b, "C": c}, k=30, seed=11, benchmark=["u" if i % 3 else "v" for i in range(n)])
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return str(path)


@pytest.mark.parametrize("first", CLASSES)
@pytest.mark.parametrize("second", CLASSES)
def test_compose_by_hand(first, second):
    sign = {"improved": 1, "regressed": -1}
    s1, s2 = sign.get(first, 0), sign.get(second, 0)
    expect = ("cancelled" if s1 * s2 == -1 else "improved" if s1 + s2 > 0 else "regressed" if s1 + s2 < 0
              else "unflagged")
    assert compose(CLASSES.index(first), CLASSES.index(second)) == expect


def test_path_counts_are_the_three_edges_per_item_classes_joined(tmp_path):
    table = write_path_table(tmp_path / "t.jsonl")
    per = {}
    for src, tgt in (("A", "B"), ("B", "C"), ("A", "C")):
        out = tmp_path / f"{src}{tgt}.jsonl"
        r = runner.invoke(app, ["items", table, "--edge", f"{src}:{tgt}", "--null", "0", "--per-item", str(out)])
        assert r.exit_code == 0, r.stderr
        per[(src, tgt)] = {(x["benchmark"], x["item"]): x for x in map(json.loads, out.read_text().splitlines())}
    r = runner.invoke(app, ["path", table, "A:B:C", "-f", "json"])
    assert r.exit_code == 0, r.stderr
    js = json.loads(r.stdout)
    assert js["path"] == ["A", "B", "C"] and len(js["cells"]) == 2
    sign = {"improved": 1, "regressed": -1}
    pairs = {(x["direct"], x["path"]) for cell in js["cells"] for x in cell["crosstab"]}
    assert ("improved", "unflagged") in pairs and ("inconclusive", "cancelled") in pairs  # a drift, a cancellation
    for cell in js["cells"]:
        keys = [k for k in per[("A", "C")] if k[0] == cell["benchmark"]]
        s1 = {k: per[("A", "B")][k]["class"] for k in keys}
        s2 = {k: per[("B", "C")][k]["class"] for k in keys}
        d = {k: per[("A", "C")][k]["class"] for k in keys}
        down_up = sum((s1[k], s2[k]) == ("regressed", "improved") for k in keys)
        up_down = sum((s1[k], s2[k]) == ("improved", "regressed") for k in keys)
        assert (cell["regressed_then_recovered"], cell["improved_then_regressed"]) == (down_up, up_down)
        assert down_up > 0 and up_down > 0
        moves = sum(c in sign for k in keys for c in (s1[k], s2[k]))
        assert cell["step_moves"] == moves
        assert cell["hidden_by_direct"] == float(Fraction(2 * (down_up + up_down), moves))
        flagged = [k for k in keys if d[k] in sign]
        path_sign = {k: sign.get(s1[k], 0) + sign.get(s2[k], 0) for k in keys}
        shown = sum(1 for k in flagged if sign.get(s1[k], 0) * sign.get(s2[k], 0) != -1
                    and np.sign(path_sign[k]) == sign[d[k]])
        assert cell["direct_flagged"] == len(flagged)
        assert cell["hidden_by_path"] == float(Fraction(len(flagged) - shown, len(flagged)))
        assert sum(x["items"] for x in cell["crosstab"]) == cell["n_items"] == len(keys)
        assert cell["counts"]["direct"] == dict(Counter(d.values()) | {c: 0 for c in CLASSES if c not in d.values()})
        # the mean change adds up over the items, exactly
        dd = [Fraction(per[e][k]["d_exact"]) for e in (("A", "B"), ("B", "C"), ("A", "C")) for k in keys]
        m = len(keys)
        step1, step2, direct = sum(dd[:m]) / m, sum(dd[m:2 * m]) / m, sum(dd[2 * m:]) / m
        assert step1 + step2 == direct
        assert cell["delta"] == {"step1": float(step1), "step2": float(step2), "direct": float(direct)}


def test_path_per_item_and_bad_paths(tmp_path):
    table = write_path_table(tmp_path / "t.jsonl")
    out = tmp_path / "per.jsonl"
    r = runner.invoke(app, ["path", table, "A:B:C", "--by", "none", "--per-item", str(out)])
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 100 and {r["path"] for r in rows} == {"improved", "regressed", "cancelled", "unflagged"}
    assert "down then up" in r.stdout and "Benchmark (all)" in r.stdout
    for bad, words in (("A:B", "must look like OLD:MIDDLE:NEW"), ("A:B:Z", "unknown model(s) Z"),
                       ("A:B:A", "three different models")):
        r = runner.invoke(app, ["path", table, bad])
        assert r.exit_code == 2 and words in r.stderr, r.stderr
