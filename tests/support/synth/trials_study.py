"""A SYNTHETIC K-trial migration study with known truth, for the worked example of ``verify`` on trials.

Three versions of one model, ``mini-1 -> mini-2 -> mini-3``, asked K = 10 times
on every item of three benchmarks. The truth is set per item:

- ``mini-1 -> mini-2`` **truly changes**: on ``arith`` and ``logic`` a fifth of
  the items move from a pass rate of 0.15 to 0.85 and a tenth from 0.85 to 0.15;
- ``mini-2 -> mini-3`` **does not**: ``mini-3`` has exactly ``mini-2``'s rates;
- ``easy`` is too easy to tell the versions apart (every version answers
  every trial right), so it fails the screening rule.

:func:`write_study` writes the released trials table (drawn from the rates
with a seeded generator, in the shape ``replicate score`` writes), the items
file, a ``replicate sim-server`` config with the same rates (a fresh collection
from it replicates the study), a collection config and the claims file of the
study's "printed" figures: recomputed from the release and rounded as a paper
would, three of them planted wrong (``PLANTED``).
"""

from __future__ import annotations

import gzip
from fractions import Fraction
from pathlib import Path

import numpy as np
import orjson

from support.synth.trials import synthetic_rows

SEED = 20261202
K = 10
MODELS = ("mini-1", "mini-2", "mini-3")
BENCHMARKS = {"arith": 80, "logic": 80, "easy": 20}
SCORER = "final-answer-line@1"
TABLE = "release/trials.jsonl.gz"

#: Claims whose printed value is planted wrong (id -> what is wrong with it).
PLANTED = {
    "t1-acc-mini-2-arith": "printed 15 points too high",
    "t3-plus-mini-3-arith": "claims a change where there is none",
    "t3-regressed-logic": "a count off by one",
}


def rates(seed: int = SEED) -> dict[str, dict[str, float]]:
    """Per model, per item id: the true pass rate."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, float]] = {m: {} for m in MODELS}
    for bench, n in BENCHMARKS.items():
        for i in range(n):
            item = f"{bench}-{i:03d}"
            if bench == "easy":
                a = b = 1.0
            else:
                a = float(np.round(rng.uniform(0.2, 0.8), 2))
                b = a
                if i % 10 in (0, 1):  # a fifth improve
                    a, b = 0.15, 0.85
                elif i % 10 == 2:  # a tenth regress
                    a, b = 0.85, 0.15
            out["mini-1"][item], out["mini-2"][item], out["mini-3"][item] = a, b, b
    return out


def items() -> list[dict]:
    """The items file: a question whose reference the simulated endpoint answers with."""
    out = []
    for bench, n in BENCHMARKS.items():
        for i in range(n):
            x, y = 3 + i, 7 + 2 * i
            out.append({"id": f"{bench}-{i:03d}", "benchmark": bench,
                        "prompt": f"[{bench}] What is {x} + {y}? End with a line 'Final answer: N'.",
                        "reference": str(x + y), "scorer": SCORER})
    return out


def released_rows(seed: int = SEED) -> list[dict]:
    """The released trials table, one row per trial (columns as ``replicate score`` writes them)."""
    truth = rates(seed)
    ids = [it["id"] for it in items()]
    benches = [it["benchmark"] for it in items()]
    rows = synthetic_rows({m: [truth[m][i] for i in ids] for m in MODELS}, k=K, benchmark=benches,
                          seed=seed + 1, item_prefix="")
    for r in rows:  # synthetic_rows numbers items; use the items' own ids
        r["item"] = ids[int(r["item"])]
        r["scorer"] = SCORER
    return rows


def sim_toml(seed: int = SEED + 7) -> str:
    truth = rates()
    lines = ["# A simulated provider with the study's true pass rates (generated: tools/make_trials_example.py).",
             "# Start it with: replicate sim-server --config fixtures/trials-study/sim.toml --port 8765",
             f"seed = {seed}", 'items = "items.jsonl"', ""]
    for m in MODELS:
        lines += [f"[models.{m}]", "p = 0.5", f"[models.{m}.items]"]
        lines += [f'"{item}" = {p}' for item, p in truth[m].items()]
        lines.append("")
    return "\n".join(lines)


COLLECT_TOML = """# A fresh collection of the study from the simulated provider (generated: tools/make_trials_example.py).
[endpoint]
base_url = "http://127.0.0.1:8765/v1"
api_key_env = "SIM_API_KEY"      # the name of the variable, never the key itself

[collection]
models = ["mini-1", "mini-2", "mini-3"]
k = 10
concurrency = 8
seed = 20261203
timeout = 5.0
max_retries = 0
backoff_base = 0.05
backoff_max = 1.0

[params]
temperature = 1.0
"""


def _claim(cid: str, where: str, metric: str, value: str, unit: str, **names: str) -> dict:
    return {"id": cid, "where": where, "metric": metric, "trials": "study", **names, "value": value, "unit": unit}


def _pct(x: Fraction | float, places: int = 1) -> str:
    """A fraction as a percent, rounded half up on its exact value (as the note's matching reads it)."""
    from replicate.printed import Printed, rounded

    return rounded(Printed.parse("0." + "0" * places, "percent"), x)


def printed_claims() -> list[dict]:
    """The study's printed figures: the release's values rounded, except the planted ones."""
    import tempfile

    from replicate.trials.counts import aggregate
    from replicate.trials.engine import accuracy_table, analyse_items
    from replicate.trials.load import read_trials
    from replicate.trials.screen import screen

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in released_rows()))
        table = read_trials(path)
    acc = {(a.model, a.benchmark): a.accuracy or 0.0 for a in accuracy_table(aggregate(table)[0])}
    edges = [("mini-1", "mini-2"), ("mini-2", "mini-3")]
    cells = {(c.source, c.target, c.benchmark): c for c in analyse_items(table, edges, n_null=200, seed=SEED).cells}
    pooled = {(c.source, c.target): c for c in analyse_items(table, edges, by="none", n_null=0).cells}
    scr = {r.benchmark: r for r in screen(table).rows}
    c12a, c23a, c12l = cells[("mini-1", "mini-2", "arith")], cells[("mini-2", "mini-3", "arith")], \
        cells[("mini-1", "mini-2", "logic")]
    a_n = c12a.shares.n_items
    claims = [
        _claim("t1-acc-mini-1-arith", "Table 1", "accuracy", _pct(acc[("mini-1", "arith")]), "percent",
               model="mini-1", benchmark="arith"),
        _claim("t1-acc-mini-2-arith", "Table 1", "accuracy", _pct(acc[("mini-2", "arith")] + 0.15), "percent",
               model="mini-2", benchmark="arith"),
        _claim("t1-acc-mini-3-logic", "Table 1", "accuracy", _pct(acc[("mini-3", "logic")]), "percent",
               model="mini-3", benchmark="logic"),
        _claim("t2-n-arith", "Table 2", "items.n", str(a_n), "count", edge="mini-1:mini-2", benchmark="arith"),
        _claim("t2-plus-arith", "Table 2", "items.p_plus", _pct(Fraction(c12a.shares.improved, a_n)), "percent",
               edge="mini-1:mini-2", benchmark="arith"),
        _claim("t2-minus-arith", "Table 2", "items.p_minus", _pct(Fraction(c12a.shares.regressed, a_n)), "percent",
               edge="mini-1:mini-2", benchmark="arith"),
        _claim("t2-delta-arith", "Table 2", "items.delta", _pct(c12a.delta or 0), "percent",
               edge="mini-1:mini-2", benchmark="arith"),
        _claim("t2-null-plus-arith", "Table 2", "items.null_p95.p_plus", _pct(c12a.null_p95["p_plus"]), "percent",
               edge="mini-1:mini-2", benchmark="arith"),
        _claim("t3-chg-mini-3-arith", "Table 3", "items.p_chg",
               _pct(Fraction(c23a.shares.improved + c23a.shares.regressed, c23a.shares.n_items)), "percent",
               edge="mini-2:mini-3", benchmark="arith"),
        _claim("t3-plus-mini-3-arith", "Table 3", "items.p_plus", "15.0", "percent",
               edge="mini-2:mini-3", benchmark="arith"),
        _claim("t3-regressed-logic", "Table 3", "items.regressed", str(c12l.shares.regressed + 1), "count",
               edge="mini-1:mini-2", benchmark="logic"),
        _claim("t3-chg-pooled", "Table 3", "items.p_chg",
               _pct(Fraction(pooled[("mini-1", "mini-2")].shares.improved
                             + pooled[("mini-1", "mini-2")].shares.regressed,
                             pooled[("mini-1", "mini-2")].shares.n_items)), "percent", edge="mini-1:mini-2"),
        _claim("s1-screen-easy", "Section 5", "screen.passes", "fail" if not scr["easy"].passes else "pass", "flag",
               benchmark="easy"),
        _claim("s1-screen-arith", "Section 5", "screen.share",
               _pct(Fraction(scr["arith"].informative, scr["arith"].n_items)), "percent", benchmark="arith"),
    ]
    return claims


def _toml_value(v: str) -> str:
    return orjson.dumps(v).decode()


def claims_toml() -> str:
    lines = [
        "# The printed figures of a SYNTHETIC K-trial migration study (generated: tools/make_trials_example.py).",
        "# Three are planted wrong: " + "; ".join(f"{k} ({v})" for k, v in PLANTED.items()) + ".",
        "[study]",
        'title = "A synthetic migration study: mini-1 -> mini-2 -> mini-3, K = 10"',
        'reference = "fixtures/trials-study (synthetic)"',
        f"seed = {SEED}                  # the permutation null's seed, as the study's code used it",
        "null = 200",
        'tolerance = "0.1"               # a replication agrees when fresh - printed is within +-10 points',
        "",
        "[trials]",
        f'study = ["{TABLE}"]',
        "",
    ]
    for c in printed_claims():
        lines.append("[[claims]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in c.items()]
        lines.append("")
    return "\n".join(lines)


def write_study(target: str | Path) -> list[Path]:
    """Write the example study under ``target``; returns the files written."""
    target = Path(target)
    (target / "release").mkdir(parents=True, exist_ok=True)
    body = b"".join(orjson.dumps(r) + b"\n" for r in released_rows())
    files = {
        TABLE: gzip.compress(body, compresslevel=9, mtime=0),
        "items.jsonl": b"".join(orjson.dumps(it) + b"\n" for it in items()),
        "sim.toml": sim_toml().encode(),
        "collect.toml": COLLECT_TOML.encode(),
        "claims.toml": claims_toml().encode(),
    }
    out = []
    for rel, data in files.items():
        p = target / rel
        p.write_bytes(data)
        out.append(p)
    return out
