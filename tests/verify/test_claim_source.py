"""A claim source added from outside the package (docs/verify.md, "Adding a claim source").

A toy source, tallies of numbers in the claims file's own ``[tallies]`` table, is declared here in one place:
its claim fields and parsing (a ClaimSource), its metric (a row of the one table) and its part (what the
verification, the note, the terminal table and the JSON show). Nothing in replicate/verify changes: the
claims parser accepts its claims and table, ``replicate verify`` checks them, and the exit code, the summary
line, the note and the JSON carry them beside the built-in sources.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.errors import BadInput
from replicate.output import md_code
from replicate.verify import metrics
from replicate.verify.claim import SOURCES, ClaimSource, register_source
from replicate.verify.claims_file import parse_claims
from replicate.verify.matching import Computed
from replicate.verify.part import Checked, Part


def _parse(c: Mapping[str, Any], spec: Any, ctx: Any, say: Any) -> dict:
    tallies = ctx.source_tables.get("tallies", {})
    if c.get("tally") not in tallies:
        say(f"unknown tally {c.get('tally')!r}; tallies: {', '.join(tallies) or 'none'}")
    return {"about": {"tally": c.get("tally")}}


@dataclass(frozen=True)
class Tallies(Part):
    results: tuple[Checked, ...]
    name = "tallies"

    def summary_line(self) -> str:
        return f"{sum(r.verdict == 'match' for r in self.results)} of {len(self.results)} tally claims match"

    def to_json(self) -> dict:
        return {"summary_line": self.summary_line(), "claims": [r.to_json() for r in self.results]}

    def summary_note(self) -> list[str]:
        return [f"Tally claims: {len(self.failed)} mismatch."]

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        if stage != "claims":
            return []
        return ["## Tally claims", "", *(f"- {md_code(r.claim.id)}: {r.rounded()} {r.verdict}" for r in self.results), ""]

    def table(self, fmt: Any) -> list[str]:
        return [f"{r.claim.id}: {r.verdict}" for r in self.results]


def _check(claims: tuple, root: Any, claims_file: Any) -> Tallies:
    numbers = claims_file.tables["tallies"]
    out = []
    for c in claims:
        out.append(Checked(c, Computed(sum(numbers[c.about["tally"]]))))
    return Tallies(tuple(out))


SOURCE = ClaimSource("tallies", "tally", ("tally",), ("count",), _parse, "tally", check=_check, tables=("tallies",))
SUM = metrics.Metric("tallies.sum", "tallies", ("tally",), "count", "the sum of a tally's numbers")

CLAIMS = """
[study]
title = "Tallies"

[tallies]
a = [1, 2, 3]
b = [10, 20]

[[claims]]
id = "a-sum"
metric = "tallies.sum"
tally = "a"
value = "6"
unit = "count"

[[claims]]
id = "b-sum"
metric = "tallies.sum"
tally = "b"
value = "31"
unit = "count"
"""


@pytest.fixture
def tallies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(metrics.METRICS, SUM.name, SUM)
    monkeypatch.setitem(SOURCES, SOURCE.name, SOURCE)  # what register_source(SOURCE) does, undone after the test


def test_a_source_of_ones_own_is_verified_beside_the_built_in_ones(tallies, tmp_path):
    path = tmp_path / "claims.toml"
    path.write_text(CLAIMS, encoding="utf-8")
    note = tmp_path / "note.md"
    args = ["verify", str(path), "--root", str(tmp_path), "--date", "2026-01-01"]
    res = CliRunner().invoke(app, [*args, "--out", str(note), "--no-plots"])
    assert res.exit_code == 1  # b sums to 30, printed 31
    assert "1 claim(s) mismatch: b-sum" in res.stderr
    text = note.read_text(encoding="utf-8")
    assert "**1 of 2 tally claims match.**" in text and "Tally claims: 1 mismatch." in text
    assert "- `a-sum`: 6 match\n- `b-sum`: 30 mismatch\n" in text
    assert "## Claims" not in text and "## Edges" not in text  # no claim over runs: the runs part is not shown
    doc = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)
    assert doc["ok"] is False and doc["summary_line"] == "1 of 2 tally claims match"
    got = {c["id"]: (c["computed"], c["verdict"], c["tally"]) for c in doc["tallies"]["claims"]}
    assert got == {"a-sum": (6, "match", "a"), "b-sum": (30, "mismatch", "b")}
    table = CliRunner().invoke(app, args).stdout
    assert table == "a-sum: match\nb-sum: mismatch\n\n1 of 2 tally claims match\n"


def test_its_claims_are_checked_as_the_built_in_ones_are(tallies):
    data = {"tallies": {"a": [1]}, "claims": [
        {"id": "x", "metric": "tallies.sum", "tally": "c", "value": "1", "unit": "percent", "run": "r"},
        {"id": "y", "metric": "tallies.mean", "tally": "a", "value": "1", "unit": "count"}]}
    with pytest.raises(BadInput) as exc:
        parse_claims(data, path="c.toml")
    message = str(exc.value)
    assert "claim 'x': unknown field 'run'" in message and "allowed in a tally claim: id, where, text" in message
    assert "claim 'x': unknown tally 'c'; tallies: a" in message
    assert "claim 'x': unknown unit 'percent'; units of tally figures: count" in message
    assert "claim 'y': unknown tally metric 'tallies.mean' (did you mean 'tallies.sum'?)" in message


def test_a_source_is_registered_once_and_with_its_check():
    with pytest.raises(ValueError, match="registered twice"):
        register_source(SOURCES["trials"])
    with pytest.raises(ValueError, match="gives no check"):
        register_source(ClaimSource("x", "x", ("x",), ("count",), _parse))


def test_a_part_without_a_noun_calls_its_claims_by_its_name():
    """The Part base's summary line and note name the claims by the source's name when it gives no noun."""

    @dataclass(frozen=True)
    class Bare(Part):
        results: tuple[Checked, ...] = ()
        name = "bare"

        def table(self, fmt: Any) -> list[str]:
            return []

    assert Bare().summary_line().endswith("bare claims match"), Bare().summary_line()
    assert Bare().summary_note() == ["Bare claims: none mismatches."]
