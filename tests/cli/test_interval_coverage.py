"""Every figure-producing command: each rate in its JSON has an interval, and its text shows those intervals.

The commands come from the Typer app itself, so a new command is not missed: each one is either run
here on the bundled example release (``FIGURE_COMMANDS``) or named in an allow-list with why it is
not (``NO_JUDGE_RATES``). A rate is a JSON key that names one (``RATE_KEY``); it must sit beside an
``interval`` entry of the same name carrying low, high, method, replicates and cluster.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.parsing import PARSERS

ROOT = Path(__file__).resolve().parents[2]
P = "umbrela-fallback@1"
RUNS = "fixtures/example/runs.toml"
A, B = "fixtures/example/results/alpha-2024-05_annotations.jsonl", "fixtures/example/results/alpha-2024-08_annotations.jsonl"
TRIALS = "fixtures/trials-study/release/trials.jsonl.gz"

#: command -> its arguments on the bundled example (``--format`` is added).
FIGURE_COMMANDS: dict[str, list[str]] = {
    "compare": [A, B, "-p", P],
    "chain": ["--runs", RUNS, "-p", P],
    "matrix": ["--runs", RUNS, "-p", P],
    "floor": ["--runs", RUNS, "alpha-2025-01", "alpha-2025-01-repeat", "--edge", "alpha-2024-08:alpha-2025-01",
              "--main", "alpha-2024-08", "-p", P],
    "verify": ["fixtures/example/claims.toml", "--root", "fixtures/example", "--no-plots", "--no-fail"],
    "cells": ["6252", "5776", "1455", "7163"],
    "parsers audit": ["-p", "umbrela-strict@1", "-p", P, "--runs", RUNS, "--edge", "alpha-2024-05:alpha-2024-08"],
    "demo": [],
    "items": [TRIALS, "--edge", "mini-1:mini-2", "--null", "20"],
    "screen": [TRIALS],
    "parse": [A, "-p", P],
    "agreement": ["--runs", RUNS, "-p", P, "--binarize", "2", "--pairs"],
}

#: Commands that give no judge rates, and why.
NO_JUDGE_RATES: dict[str, str] = {
    "version": "prints the version",
    "fetch": "downloads files",
    "collect": "asks models for responses",
    "score": "writes the trials table",
    "import": "writes the trials table from benchmark logs",
    "sim-server": "serves a simulated API",
    "repair-archive": "drops duplicate records from an archive",
    "export ifbench": "writes IFBench's input format",
    "parsers list": "lists parsers", "parsers show": "shows a parser's rules",
    "readers list": "lists readers", "readers show": "shows a reader",
    "scorers list": "lists scorers", "scorers show": "shows a scorer's rules",
    "rankings": "rank correlations of system orderings over TREC runs, not judge rates; each carries its topic-bootstrap "
                "interval (checked in tests/cli/test_rankings.py on runs it generates)",
    "regrade": "a sample size and the precision a simulation gives it (a plan, not an estimate from the data); "
               "tests/stats/test_regrade.py checks it",
    "draw": "writes a seeded item sample and its record (no figures)",
    "path": "counts of items by class on an upgrade path's three edges (each class decided as 'items' decides "
            "it, whose shares carry their intervals); its two hidden shares are ratios of those counts, printed "
            "beside them (tests/trials/test_paths.py checks them against the edges' per-item classes)",
    "costs": "token costs: the bundled release reports no usage, so tests/cli/test_costs.py checks that every "
             "figure of an edge has its interval in the JSON and the text, on a table with usage",
    "harness-claims": "writes the harnesses' printed figures as a claims file: nothing is estimated (verify "
                      "recomputes them)",
    "mtbench": "MT-Bench means over FastChat files the bundled release lacks: every mean carries its interval, "
               "checked in tests/pairwise/test_intervals.py",
    "pairwise": "pairwise tallies over FastChat, Arena-Hard and AlpacaEval files the bundled release lacks: every "
                "share and win rate carries its interval, checked in tests/pairwise/test_intervals.py",
    "plan": "K-trial power: probabilities computed exactly (or by a seeded simulation with its MC s.e.), "
            "not estimated from a sample of items",
}

#: A key naming a rate or a ratio (fractions of items and their ratios).
RATE_KEY = re.compile(r"(^|_)(rate|ratio|em|em_old|em_new|share|agreement|difference)$|_rate_|^rate$"
                      r"|^(cohen_kappa|scott_pi|krippendorff_alpha|kendall_tau|spearman)")
#: Agreement coefficients (-1 to 1, not rates): shown as numbers to 3 decimals.
COEFFICIENT = re.compile(r"^(cohen_kappa|scott_pi|krippendorff_alpha|kendall_tau|spearman)")

#: K-trial figures (items, screen): shares of items and mean accuracies, by their JSON names.
TRIAL_RATE_KEY = re.compile(r"^(accuracy|delta|p_plus|p_minus|p_chg|equivalent|inconclusive|share)$")
#: K-trial JSON parts that are not estimates from the sample, each with why (skipped by the check).
TRIAL_NOT_ESTIMATES = {
    "counts": "class counts (integers), not rates",
    "null_p95": "the permutation null's percentiles: a reference distribution, not an estimate",
    "null": "the permutation null's summaries (mean shares, false discoveries): a reference distribution",
    "power_at_reference": "a power computed exactly for a stated move, not estimated from a sample",
    "settings": "the command's settings",
}
TRIAL_COMMANDS = {"items", "screen"}

#: Rates in JSON that carry no interval yet, each with why (issue 12's remaining gaps; see docs/concepts.md).
KNOWN_GAPS: dict[str, str] = {
}

INTERVAL_FIELDS = {"low", "high", "method", "replicates", "cluster"}


def command_names(group, prefix: str = "") -> list[str]:
    """Every leaf command of the app, ``parsers audit`` style (a group is anything with ``commands``)."""
    out = []
    for name, cmd in group.commands.items():
        full = f"{prefix}{name}"
        out += command_names(cmd, full + " ") if hasattr(cmd, "commands") else [full]
    return out


def test_every_command_is_checked_or_allowed_with_a_reason():
    names = set(command_names(typer.main.get_command(app)))
    listed = set(FIGURE_COMMANDS) | set(NO_JUDGE_RATES)
    assert names == listed, f"not listed: {sorted(names - listed)}; listed but gone: {sorted(listed - names)}"
    assert not set(FIGURE_COMMANDS) & set(NO_JUDGE_RATES)


def _run(command: str, fmt: str, tmp_path: Path) -> tuple[str, str]:
    args = [*command.split(), *FIGURE_COMMANDS[command], "-f", fmt]
    note = tmp_path / f"note-{fmt}.md"
    if command == "verify":
        args += ["--out", str(note)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.stdout, note.read_text(encoding="utf-8") if command == "verify" else res.stdout


def missing_intervals(node, path: str = "", *, rate_key: re.Pattern = RATE_KEY, skip=frozenset()) -> list[str]:
    """Paths of rates with no complete interval beside them."""
    out: list[str] = []
    if isinstance(node, dict):
        ivs = node.get("interval") if isinstance(node.get("interval"), dict) else default_intervals(node.get("ci"))
        for k, v in node.items():
            if k in ("interval", "intervals", "ci") or k in skip:
                continue
            here = f"{path}.{k}"
            if isinstance(v, float | int) and not isinstance(v, bool) and rate_key.search(k):
                iv = ivs.get(k)
                known = any(here.endswith(g) for g in KNOWN_GAPS)
                if not known and not (isinstance(iv, dict) and INTERVAL_FIELDS <= set(iv)):
                    out.append(re.sub(r"\[\d+\]", "[]", here))
            out += missing_intervals(v, here, rate_key=rate_key, skip=skip)
    elif isinstance(node, list):
        for k, v in enumerate(node):
            out += missing_intervals(v, f"{path}[{k}]", rate_key=rate_key, skip=skip)
    return out


def default_intervals(ci) -> dict:
    """Figure -> the interval a ``ci`` map names its default (the one the readings use)."""
    if not isinstance(ci, dict):
        return {}
    return {fig: entry.get(entry.get("default")) for fig, entry in ci.items() if isinstance(entry, dict)}


def intervals_of(node, key: str = ""):
    """(figure, low, high) of every interval in the JSON (in a ``ci`` map, its default)."""
    if isinstance(node, dict):
        if key in ("interval", "ci"):
            for fig, iv in (node if key == "interval" else default_intervals(node)).items():
                if isinstance(iv, dict) and iv.get("low") is not None and iv.get("high") is not None:
                    yield fig, iv["low"], iv["high"]
            return
        for k, v in node.items():
            yield from intervals_of(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from intervals_of(v)


def shown(text: str, figure: str, low: float, high: float) -> bool:
    """The interval appears in the text as ``[lo, hi]`` or ``lo-hi``: percent to 1 decimal, or percentage points
    (``[-0.9, +0.2 pp]``, a difference between parsers); ratios to 2 decimals."""
    if COEFFICIENT.match(figure):
        lo, hi = re.escape(f"{low:.3f}"), re.escape(f"{high:.3f}")
    elif "ratio" in figure:
        lo, hi = re.escape(f"{low:.2f}"), re.escape(f"{high:.2f}")
    else:
        lo, hi = rf"\+?{re.escape(f'{100 * low:.1f}')}%?", rf"\+?{re.escape(f'{100 * high:.1f}')}(%| pp)"
    pattern = rf"{lo}(, |-| to ){hi}"
    return re.search(pattern, text) is not None


@pytest.mark.skipif("umbrela-strict@1" not in PARSERS, reason="built-in parsers not installed")
@pytest.mark.parametrize("command", sorted(FIGURE_COMMANDS))
def test_every_rate_has_an_interval_and_the_text_shows_it(command, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out, _ = _run(command, "json", tmp_path)
    js = json.loads(out)
    if command in TRIAL_COMMANDS:
        assert missing_intervals(js, rate_key=TRIAL_RATE_KEY, skip=frozenset(TRIAL_NOT_ESTIMATES)) == []
    else:
        assert missing_intervals(js) == []
    found = list(intervals_of(js))
    assert found, "no interval at all"
    for fmt in ("table", "markdown"):
        _, text = _run(command, fmt, tmp_path)
        unseen = sorted({fig for fig, lo, hi in found if not shown(text, fig, lo, hi)})
        assert unseen == [], f"{fmt}: intervals in the JSON not shown: {unseen}"


#: The single draw's rates, beside the K-trial figures, in the breakdowns' check.
BREAKDOWN_RATE_KEY = re.compile(TRIAL_RATE_KEY.pattern[:-2] + r"|correct_to_incorrect|incorrect_to_correct|changed)$")


def test_items_breakdowns_have_intervals_and_the_text_shows_them(tmp_path):
    """Strata, sensitivity rows and the single draw (which the bundled table has no column for) carry intervals too."""
    import numpy as np

    from support.synth.trials import synthetic_rows, write_jsonl

    p = np.linspace(0.1, 0.9, 40)
    q = p.copy()
    q[:8] = np.clip(q[:8] + 0.6, 0, 1)
    rows = synthetic_rows({"old": p, "new": q}, k=30, seed=3, metadata={"difficulty": ["easy", "hard"] * 20})
    write_jsonl(rows, tmp_path / "t.jsonl")
    args = ["items", str(tmp_path / "t.jsonl"), "--edge", "old:new", "--null", "20", "--strata", "difficulty",
            "--sensitivity", "0.1,0.3", "--single-draw"]
    res = CliRunner().invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    js = json.loads(res.stdout)
    cell = js["cells"][0]
    assert len(cell["strata"]) == 2 and len(cell["sensitivity"]) == 2 and "single_draw" in cell
    assert missing_intervals(js, rate_key=BREAKDOWN_RATE_KEY, skip=frozenset(TRIAL_NOT_ESTIMATES)) == []
    found = list(intervals_of(js))
    for fmt in ("table", "markdown"):
        text = CliRunner().invoke(app, [*args, "-f", fmt]).stdout
        unseen = sorted({fig for fig, lo, hi in found if not shown(text, fig, lo, hi)})
        assert unseen == [], f"{fmt}: intervals in the JSON not shown: {unseen}"
