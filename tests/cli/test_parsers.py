"""`replicate parsers list|show`, in process with CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.cli.base import emit
from replicate.cli.parsers_cmds import render_catalogue, render_parser
from replicate.output import Format
from replicate.parsing import PARSERS

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
BUILTINS = ["umbrela-checked@1", "umbrela-fallback@1", "umbrela-strict@1"]


def test_list_json_lists_builtins_with_origin_and_labels():
    result = runner.invoke(app, ["parsers", "list", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_name = {p["name"]: p for p in data["parsers"]}
    for name in BUILTINS:
        assert by_name[name]["origin"] == "replicate-audit"
        assert by_name[name]["labels"] == [0, 1, 2, 3]
        assert by_name[name]["description"] == PARSERS.get(name).description
    # the released scripts' readings, and the one correction new in this project
    assert [by_name[n]["released"] for n in BUILTINS] == [False, True, True]
    assert data["broken"] == []
    assert set(data) == {"parsers", "broken"}


def test_list_table_has_one_row_per_parser_in_name_order():
    result = runner.invoke(app, ["parsers", "list"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["name", "reading", "description", "origin"]
    assert set(lines[1]) <= {"-", " "}
    names = [line.split()[0] for line in lines[2:]]
    assert names == PARSERS.names()
    readings = {line.split()[0]: line.split()[1] for line in lines[2:]}
    assert readings["umbrela-checked@1"] == "correction"
    assert readings["umbrela-strict@1"] == readings["umbrela-fallback@1"] == "released"
    assert all(line.rstrip().endswith(PARSERS.origin(line.split()[0])) for line in lines[2:])


def test_list_markdown_is_a_github_table():
    result = runner.invoke(app, ["parsers", "list", "-f", "markdown"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| name ") and lines[1].startswith("|---")
    assert "| umbrela-strict@1 " in result.stdout


def test_descriptions_are_short_single_lines():
    for p in PARSERS:
        if PARSERS.origin(p.name) == "replicate-audit":
            assert "\n" not in p.description and len(p.description) <= 100, p.name


def test_show_prints_header_then_the_full_rule_text():
    result = runner.invoke(app, ["parsers", "show", "umbrela-strict@1"])
    assert result.exit_code == 0
    p = PARSERS.get("umbrela-strict@1")
    assert result.stdout == (
        "umbrela-strict@1\n"
        f"{p.description}\n"
        "\n"
        "reading: released\n"
        "origin: replicate-audit\n"
        "labels: 0, 1, 2, 3\n"
        "\n"
        f"{p.details}\n"
    )
    # the rule text is the real thing, not a stub
    for rule in ("1. The first place", "2. Otherwise the first match", "3. Otherwise the last match", "4. Otherwise unparsed"):
        assert rule in result.stdout


def test_show_json_and_markdown():
    result = runner.invoke(app, ["parsers", "show", "umbrela-fallback@1", "--format", "json"])
    data = json.loads(result.stdout)
    assert data["name"] == "umbrela-fallback@1" and data["details"] == PARSERS.get("umbrela-fallback@1").details
    md = runner.invoke(app, ["parsers", "show", "umbrela-checked@1", "-f", "markdown"]).stdout
    assert md.startswith("## `umbrela-checked@1`\n\n")
    assert "- reading: correction\n- origin: replicate-audit\n- labels: 0, 1, 2, 3\n" in md
    assert data["released"] is True


def test_show_unknown_names_exit_2_with_a_hint():
    result = runner.invoke(app, ["parsers", "show", "umbrela-strict"])
    assert result.exit_code == 2
    assert result.stderr == "Error: unknown parser 'umbrela-strict': name its version, one of umbrela-strict@1\n"
    result = runner.invoke(app, ["parsers", "show", "umbrela-strickt@1"])
    assert result.exit_code == 2
    assert "did you mean umbrela-strict@1" in result.stderr


def test_every_builtin_has_a_rule_text_listing_its_rules():
    for name in BUILTINS:
        details = PARSERS.get(name).details
        assert details.count("\n") > 10, name
        assert "1. " in details and "unparsed" in details


# pure renderers: exact text on a hand-made catalogue ------------------------------
CAT = {
    "parsers": [
        {"name": "toy-a@1", "description": "first digit", "released": True, "origin": "toy-dist", "labels": [0, 1]},
        {"name": "toy-b@1", "description": "last digit", "released": False, "origin": "toy-dist", "labels": [0, 1]},
    ],
    "broken": [{"entry_point": "bad", "value": "bad_mod:P", "distribution": None, "error": "ImportError: nope"}],
}


def test_render_catalogue_table_lists_broken_plugins_after_the_parsers():
    assert render_catalogue(CAT, Format.table) == (
        "name     reading     description    origin\n"
        "-------  ----------  -------------  --------\n"
        "toy-a@1  released    first digit    toy-dist\n"
        "toy-b@1  correction  last digit     toy-dist\n"
        "\n"
        "Plugins that failed to load:\n"
        "\n"
        "entry point    value      distribution    error\n"
        "-------------  ---------  --------------  -----------------\n"
        "bad            bad_mod:P  -               ImportError: nope\n"
    )


def test_render_catalogue_markdown_and_json(capsys):
    md = render_catalogue(CAT, Format.markdown)
    assert "\n### Plugins that failed to load\n\n| entry point " in md
    assert "| bad           | bad_mod:P | -              | ImportError: nope |" in md
    # JSON is the catalogue itself, through the one output path (renderers write no JSON)
    emit(CAT, Format.json, text=lambda: render_catalogue(CAT, Format.json))
    assert json.loads(capsys.readouterr().out) == CAT


def test_render_parser_without_rule_text():
    text = render_parser(CAT["parsers"][0], "", Format.table)
    assert text == "toy-a@1\nfirst digit\n\nreading: released\norigin: toy-dist\nlabels: 0, 1\n\n(no rule text given)\n"
    text = render_parser(CAT["parsers"][1], "", Format.table)
    assert text == "toy-b@1\nlast digit\n\nreading: correction\norigin: toy-dist\nlabels: 0, 1\n\n(no rule text given)\n"


def test_writing_a_parser_doc_matches_the_real_output_and_example():
    doc = (ROOT / "docs" / "writing-a-parser.md").read_text(encoding="utf-8")
    listing = runner.invoke(app, ["parsers", "list"]).stdout.splitlines()
    for line in listing:
        if line.split()[0] in BUILTINS or line.startswith(("name ", "-----")):
            assert line in doc, f"docs/writing-a-parser.md shows an outdated line; now: {line!r}"
    module = ROOT / "docs" / "examples" / "replicate-parser-example" / "replicate_parser_example" / "__init__.py"
    code = module.read_text(encoding="utf-8")
    for line in code.splitlines():
        if line.startswith(("_ANSWER_LINE", "@parser", "def ", "    found", "    return", "PARSERS")):
            assert line in doc, f"the example in the doc differs from the package: {line!r}"
