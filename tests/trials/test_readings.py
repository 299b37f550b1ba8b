"""`replicate items --reading strict|loose|both`: item classes under the loose reading by the same rules.

The loose reading is checked against a plain rewrite of the rows (category from correct_loose, rows
without a loose reading dropped) classified under the strict reading, against scipy's Fisher test on
hand counts, and the side-by-side moves against the two single readings' per-item classes."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import orjson
from scipy import stats
from typer.testing import CliRunner

from replicate.cli.app import app
from support.synth.trials import synthetic_rows

runner = CliRunner()


def rows_with_loose(seed: int = 3) -> list[dict]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.2, 0.8, 90)
    b = a.copy()
    b[:25] = np.clip(a[:25] + 0.5, 0, 1)
    b[25:35] = 0.05
    rows = synthetic_rows({"old": a, "new": b}, k=20, seed=seed, loose_bonus=0.4, api_error_rate=0.05,
                          benchmark=["p" if i % 2 else "q" for i in range(90)])
    for r in rows[::37]:  # some trials without a loose reading
        r["correct_loose"] = None
    return rows


def write(path, rows):
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return str(path)


def plain_loose(rows: list[dict]) -> list[dict]:
    """The loose reading by hand: correct when correct_loose is true, a rejected correct is wrong, no reading out."""
    out = []
    for r in rows:
        r = dict(r)
        if r["category"] != "api_error":
            if r.get("correct_loose") is None:
                continue
            if r["correct_loose"]:
                r["category"] = "correct"
            elif r["category"] == "correct":
                r["category"] = "wrong"
        r.pop("correct_loose", None)
        out.append(r)
    return out


def items_json(*args) -> dict:
    r = runner.invoke(app, ["items", *args, "--edge", "old:new", "--null", "50", "-f", "json"])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_loose_reading_is_the_strict_engine_on_the_loose_rows(tmp_path):
    rows = rows_with_loose()
    loose = items_json(write(tmp_path / "t.jsonl", rows), "--reading", "loose")
    by_hand = items_json(write(tmp_path / "h.jsonl", plain_loose(rows)))
    assert loose["settings"]["reading"] == "loose" and by_hand["settings"]["reading"] == "strict"
    for c_l, c_h in zip(loose["cells"], by_hand["cells"]):
        for key in ("n_items", "delta", "counts", "null_p95", "null", "interval"):
            assert c_l[key] == c_h[key], key
    assert [a["accuracy"] for a in loose["accuracy"]] == [a["accuracy"] for a in by_hand["accuracy"]]
    dropped = sum(r["category"] != "api_error" and r.get("correct_loose") is None for r in rows)
    assert loose["warnings"]["by_code"]["no-loose-reading"] == 1
    assert f"{dropped} non-error trial(s) carry no loose reading" in loose["warnings"]["first"][0]["message"]


def test_loose_fisher_p_of_an_item_is_scipys_on_its_loose_counts(tmp_path):
    rows = rows_with_loose()
    out = tmp_path / "per.jsonl"
    r = runner.invoke(app, ["items", write(tmp_path / "t.jsonl", rows), "--edge", "old:new", "--null", "0",
                            "--reading", "loose", "--per-item", str(out)])
    assert r.exit_code == 0, r.stderr
    per = [json.loads(x) for x in out.read_text().splitlines()]
    assert {p["reading"] for p in per} == {"loose"}
    row = next(p for p in per if p["item"] == "q0003")
    counts = Counter()
    for t in plain_loose(rows):
        if t["item"] == "q0003" and t["category"] != "api_error":
            counts[(t["model"], t["category"] == "correct")] += 1
    a, n1 = counts[("old", True)], counts[("old", True)] + counts[("old", False)]
    b, n2 = counts[("new", True)], counts[("new", True)] + counts[("new", False)]
    assert (row["correct_source"], row["trials_source"], row["correct_target"], row["trials_target"]) == (a, n1, b, n2)
    assert row["p"] == stats.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue


def test_both_sets_the_readings_side_by_side_with_the_items_that_move(tmp_path):
    path = write(tmp_path / "t.jsonl", rows_with_loose())
    both = items_json(path, "--reading", "both")
    strict, loose = items_json(path), items_json(path, "--reading", "loose")
    assert both["reading"] == "both"
    assert both["strict"]["cells"] == strict["cells"] and both["loose"]["cells"] == loose["cells"]

    def classes(reading):
        out = tmp_path / f"{reading}.jsonl"
        runner.invoke(app, ["items", path, "--edge", "old:new", "--null", "0", "--reading", reading,
                            "--per-item", str(out)])
        return {(p["benchmark"], p["item"]): p["class"] for p in map(json.loads, out.read_text().splitlines())}

    s, lo = classes("strict"), classes("loose")
    for m in both["moves"]:
        keys = [k for k in s if k[0] == m["benchmark"] and k in lo]
        expect = Counter((s[k], lo[k]) for k in keys)
        assert {(x["strict"], x["loose"]): x["items"] for x in m["moves"]} == dict(expect)
        assert m["changed_class"] == sum(n for (x, y), n in expect.items() if x != y) > 0
    text = runner.invoke(app, ["items", path, "--edge", "old:new", "--null", "0", "--reading", "both"]).stdout
    assert "Items whose class differs between the readings" in text and "improved -> " in text


def test_loose_reading_needs_correct_loose(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "correct_loose"} for r in rows_with_loose()]
    r = runner.invoke(app, ["items", write(tmp_path / "t.jsonl", rows), "--edge", "old:new", "--reading", "loose"])
    assert r.exit_code == 2
    assert "--reading loose:" in r.stderr and "has no loose reading" in r.stderr
    r = runner.invoke(app, ["items", write(tmp_path / "t.jsonl", rows), "--edge", "old:new", "--reading", "lax"])
    assert r.exit_code == 2 and "--reading must be one of strict, loose, both; got 'lax'" in r.stderr
