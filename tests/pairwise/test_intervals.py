"""replicate mtbench and replicate pairwise: every mean and share in the JSON carries its interval, and the text shows it.

(The bundled example release has no FastChat, Arena-Hard or AlpacaEval files, so tests/cli/test_interval_coverage.py
names these two commands and points here.)
"""

from __future__ import annotations

import json

from tests.pairwise.test_alpacaeval import PREFS, annotations
from tests.pairwise.test_mtbench import judgments  # noqa: F401  (fixture)
from tests.pairwise.test_pairwise import _run, arena_hard, fastchat_pairs  # noqa: F401  (fixture)

FIELDS = {"low", "high", "method", "replicates", "cluster", "seed"}


def _intervals(obj) -> list[dict]:
    """Every {value, interval} pair's interval in a JSON document (a figure over nothing has none: AlpacaEval's
    position share, with no second game)."""
    out = []
    if isinstance(obj, dict):
        if "interval" in obj and obj.get("n", 1) != 0:
            out.append(obj["interval"])
        for v in obj.values():
            out += _intervals(v)
    elif isinstance(obj, list):
        for v in obj:
            out += _intervals(v)
    return out


def _check(*args) -> None:
    r = _run(*args, "-f", "json", "--cluster", "item", "--replicates", "100")
    assert r.exit_code == 0, r.output
    ivs = _intervals(json.loads(r.stdout))
    assert ivs and all(iv is not None and FIELDS <= set(iv) for iv in ivs)
    shown = [iv for iv in ivs if iv["low"] is not None]
    assert shown and all(iv["replicates"] == 100 and iv["cluster"] is None for iv in shown)
    text = _run(*args, "--cluster", "item", "--replicates", "100").stdout
    assert "Intervals: 95% bootstrap" in text and "items resampled one by one, 100 replicates, seed 0" in text


def test_mtbench_means_have_intervals(judgments):  # noqa: F811
    _check("mtbench", judgments)


def test_pairwise_shares_have_intervals(fastchat_pairs, tmp_path):  # noqa: F811
    _check("pairwise", fastchat_pairs)
    _check("pairwise", arena_hard(tmp_path, "v2.0"))
    _check("pairwise", annotations(tmp_path / "annotations.json", PREFS))
