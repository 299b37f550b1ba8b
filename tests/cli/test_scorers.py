"""`replicate scorers list|show`, in process with CliRunner."""

from __future__ import annotations

import inspect
import json

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.cli.scorers_cmds import render_catalogue
from replicate.output import Format
from replicate.scoring.base import SCORERS

runner = CliRunner()
BUILTINS = ["final-answer-line@1", "ifbench@1", "ifbench@2", "math-equivalence@1", "math-equivalence@2",
            "math-verify@1", "mcq-letter@1"]


def test_list_json_lists_builtins_with_origin_and_needs():
    r = runner.invoke(app, ["scorers", "list", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert set(data) == {"scorers", "broken"} and data["broken"] == []
    by_name = {s["name"]: s for s in data["scorers"]}
    assert sorted(by_name) == BUILTINS
    for name, s in by_name.items():
        scorer = SCORERS.get(name)
        assert s == {"name": name, "description": scorer.description, "origin": "replicate-audit",
                     "needs": list(scorer.needs), "has_loose": scorer.has_loose}
    assert by_name["ifbench@1"]["needs"] == ["ifbench"] and by_name["ifbench@1"]["has_loose"] is True


def test_list_table_has_one_row_per_scorer_in_name_order():
    r = runner.invoke(app, ["scorers", "list"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["name", "description", "needs", "origin"]
    assert [line.split()[0] for line in lines[2:]] == BUILTINS


def test_show_prints_header_then_the_full_rule_text():
    r = runner.invoke(app, ["scorers", "show", "mcq-letter@1"])
    assert r.exit_code == 0, r.output
    scorer = SCORERS.get("mcq-letter@1")
    assert r.stdout == (f"mcq-letter@1\n{scorer.description}\n\nneeds: -\nloose verdict: no\n"
                        f"origin: replicate-audit\n\n{inspect.cleandoc(scorer.details)}\n")
    r = runner.invoke(app, ["scorers", "show", "ifbench@1", "-f", "json"])
    data = json.loads(r.stdout)
    assert data["needs"] == ["ifbench"] and data["details"] == inspect.cleandoc(SCORERS.get("ifbench@1").details)


def test_show_unknown_names_exit_2_and_the_registry_hint_names_a_real_command():
    r = runner.invoke(app, ["scorers", "show", "nope@1"])
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: unknown scorer 'nope@1'; registered scorers: final-answer-line@1")
    # the registry's hint about broken plugins names this command: it must exist
    assert runner.invoke(app, ["scorers", "list", "--help"]).exit_code == 0


def test_broken_plugins_are_listed_after_the_scorers():
    cat = {"scorers": [], "broken": [{"entry_point": "bad", "value": "m:S", "distribution": None, "error": "boom"}]}
    text = render_catalogue(cat, Format.table)
    assert "Plugins that failed to load:" in text and "boom" in text
