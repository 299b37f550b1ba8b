"""Every command that reads runs says the same of the run and label caches under --verbose, and keys its labels in JSON.

In one interpreter (typer's runner), over a copy of the
bundled example, with one cache folder shared by the commands in turn: the
first reads and parses, the later ones find what it kept. For each command
every JSON ``label_cache`` entry (run, parser, key) has its stderr line
``label cache: hit|miss for run RUN under PARSER (KEY[:16])``, and every run
it read has a ``run cache:`` line.
"""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from replicate.cli.app import app

FB, ST = "umbrela-fallback@1", "umbrela-strict@1"
RUNS = ("alpha-2024-05", "alpha-2024-08", "alpha-2025-01", "alpha-2025-04")
LINE = re.compile(r"^(run|label) cache: (hit|miss) for run (\S+)(?: under (\S+))? \(([0-9a-f]{16})\)$")


def lines(stderr: str) -> list[tuple[str, str, str, str | None, str]]:
    """(which cache, hit|miss, run, parser, key prefix) of every cache line, in order."""
    return [m.groups() for m in map(LINE.match, stderr.splitlines()) if m]  # type: ignore[misc]


def command(*args: str, intervals: bool = True) -> tuple[dict, list[tuple[str, str, str, str | None, str]]]:
    res = CliRunner().invoke(app, ["--verbose", *args, "-f", "json", *(["--replicates", "0"] if intervals else [])])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    said = lines(res.stderr)
    label_lines = [(run, parser, key) for what, _, run, parser, key in said if what == "label"]
    entries = [(e["run"], e["parser"], e["key"][:16]) for e in out["label_cache"]["entries"]]
    assert label_lines == entries  # a line per labelling, named as the JSON names it
    return out, said


def events(said, what: str) -> dict[tuple[str, str | None], str]:
    return {(run, parser): event for w, event, run, parser, _ in said if w == what}


def test_every_command_reports_both_caches_alike_and_keys_its_labels(example_copy, monkeypatch):
    monkeypatch.setenv("REPLICATE_CACHE_DIR", str(example_copy.parent / "cache"))
    monkeypatch.chdir(example_copy)
    _, said = command("matrix", "--runs", "runs.toml", "-p", FB)
    assert events(said, "run") == {(r, None): "miss" for r in RUNS}
    assert events(said, "label") == {(r, FB): "miss" for r in RUNS}
    _, said = command("chain", "--runs", "runs.toml", "-p", FB)
    assert events(said, "run") == {(r, None): "hit" for r in RUNS}
    assert events(said, "label") == {(r, FB): "hit" for r in RUNS}
    # files named otherwise: read again (the run cache keys the path as given), labels found by the files' sha256
    a, b = "results/alpha-2024-05_annotations.jsonl", "results/alpha-2024-08_annotations.jsonl"
    _, said = command("compare", a, b, "-p", ST)
    assert set(events(said, "run").values()) == {"miss"} and len(events(said, "run")) == 2
    assert set(events(said, "label").values()) == {"miss"}
    _, said = command("compare", a, b, "-p", ST)
    assert set(events(said, "run").values()) == {"hit"} and set(events(said, "label").values()) == {"hit"}
    # parsers audit labels each run under each parser, through the same cache
    out, said = command("parsers", "audit", "-p", FB, "-p", ST, a, b)
    assert sorted(events(said, "label").values()) == ["hit", "hit", "miss", "miss"]  # ST was seen, FB not for these paths
    assert {(e["run"], e["parser"]) for e in out["label_cache"]["entries"]} == {
        (r, p) for r in (e["run"] for e in out["label_cache"]["entries"]) for p in (FB, ST)}
    _, said = command("floor", "--runs", "runs.toml", *RUNS, "-p", ST)
    assert set(events(said, "run").values()) == {"hit"} and set(events(said, "label").values()) == {"miss"}
    _, said = command("parse", a, b, "-p", ST, intervals=False)
    assert set(events(said, "run").values()) == {"hit"} and set(events(said, "label").values()) == {"hit"}
    # verify: its runs (with the repeat) under two parsers; the four of runs.toml were labelled under both already
    out, said = command("verify", "claims.toml", "--root", ".", "-p", FB, "-p", ST, "--date", "2026-01-01", "--no-fail")
    assert events(said, "run") == {**{(r, None): "hit" for r in RUNS}, ("alpha-2025-01-repeat", None): "miss"}
    assert events(said, "label") == {**{(r, p): "hit" for r in RUNS for p in (FB, ST)},
                                     **{("alpha-2025-01-repeat", p): "miss" for p in (FB, ST)}}
