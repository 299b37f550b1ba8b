"""Every option of every command sits in a named panel of its help, by one rule (issue 32 item 10).

The rule: an option named in :data:`replicate.cli.panels.OPTION_PANELS` for that command is listed in
that panel; every other option under "Options", which comes first. The help text itself is read
(section titles are the lines ending in ':' at the left margin), so a formatter that ignored the table
would fail here.
"""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.cli.panels import OPTION_PANELS, OPTIONS, option_panel, option_panels

SECTION = re.compile(r"^([A-Z][A-Za-z -]*):$")
OPTION = re.compile(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)")


def _commands() -> dict[str, list[str]]:
    """command path -> its options' long names (every visible leaf command)."""
    root = typer.main.get_command(app)
    ctx = root.make_context("replicate", ["--help"], resilient_parsing=True)
    out: dict[str, list[str]] = {}

    def walk(group, path):
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            if hasattr(sub, "list_commands"):
                walk(sub, [*path, name])
            else:
                out[" ".join([*path, name])] = [
                    next(o for o in p.opts if o.startswith("--")) for p in sub.params
                    if p.param_type_name == "option" and not p.hidden
                ] + ["--help"]

    walk(root, [])
    return out


COMMANDS = _commands()


def _sections(text: str) -> dict[str, list[str]]:
    """Help text -> section title -> the options listed in it, in order."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = SECTION.match(line)
        if m:
            current = out.setdefault(m[1], [])
        elif current is not None and (o := OPTION.match(line)):
            current.append(o[1])
    return out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_is_in_its_panel(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    r = CliRunner().invoke(app, [*command.split(), "--help"])
    assert r.exit_code == 0, r.output
    sections = _sections(r.stdout)
    listed = [o for title, opts in sections.items() if title != "Arguments" for o in opts]
    assert sorted(listed) == sorted(COMMANDS[command])  # each option once, none lost
    for title, opts in sections.items():
        if title == "Arguments":
            continue
        assert title in option_panels()
        for o in opts:
            assert option_panel(command, o) == title, (command, o, title)
    shown = [t for t in sections if t != "Arguments"]
    assert shown == [t for t in option_panels() if t in shown]  # the table's order, Options first
    assert shown[0] == OPTIONS


def test_compare_splits_its_options_as_the_issue_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """compare's 23 options (plus --help): 8 format-specific ones and --jobs in their own panels."""
    monkeypatch.setenv("COLUMNS", "100")
    sections = _sections(CliRunner().invoke(app, ["compare", "--help"]).stdout)
    assert len(COMMANDS["compare"]) == 24
    assert sorted(sections["Format-specific options"]) == sorted([
        "--key-field", "--gold-field", "--output-field", "--filter", "--correct-field", "--inspect-scorer",
        "--score-map", "--epoch",
    ])
    assert sections["Performance"] == ["--jobs"]
    assert sections["Intervals"] == ["--replicates", "--seed", "--cluster", "--min-items"]
    assert "--parser" in sections["Options"] and "--format" in sections["Options"]


def test_the_table_names_only_options_that_exist() -> None:
    """No stale entry: every option of the table is an option of a command it applies to."""
    for title, options, commands in OPTION_PANELS:
        scope = COMMANDS if commands is None else {c: COMMANDS[c] for c in commands}
        assert set(scope) <= set(COMMANDS), title
        for o in options:
            assert any(o in opts for opts in scope.values()), (title, o)


def test_judge_commands_sharing_options_share_their_panels() -> None:
    """A judge option (cli/judge_options.py) is in the same panel in every judge command that has it."""
    judge = [c for c, opts in COMMANDS.items() if "--parser" in opts and "--key-field" in opts]
    assert {"parse", "compare", "chain", "agreement", "floor", "matrix", "parsers audit"} <= set(judge)
    for o in {o for c in judge for o in COMMANDS[c]}:
        assert len({option_panel(c, o) for c in judge if o in COMMANDS[c]}) == 1, o
