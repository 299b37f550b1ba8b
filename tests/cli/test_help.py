"""Every command's --help reads as placeholders and whole names: no Python types, no
name broken across lines; the root offers --version and shell completion."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from replicate import __version__
from replicate.cli.app import app

RAW_TYPE = re.compile(r"<(?:list\[|tuple\[|str>|int>|float>|bool>|path>|Path>|int range>|float range>)")
BROKEN = re.compile(r"[A-Za-z0-9@]-\n\s*[A-Za-z0-9]")  # a line ending inside a hyphenated word


def _command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    ctx = root.make_context("replicate", ["--help"], resilient_parsing=True)
    out: list[list[str]] = [[]]

    def walk(group, path):
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            out.append([*path, name])
            if hasattr(sub, "list_commands"):
                walk(sub, [*path, name])

    walk(root, [])
    return out


PATHS = _command_paths()


def test_every_command_is_scanned():
    names = {" ".join(p) for p in PATHS}
    assert {"", "parse", "items", "score", "fetch", "verify", "parsers list", "parsers audit"} <= names


@pytest.mark.parametrize("columns", ["80", "60"])
@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "replicate")
def test_help_shows_placeholders_and_whole_names(path, columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", columns)
    r = CliRunner().invoke(app, [*path, "--help"])
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert not RAW_TYPE.search(text), RAW_TYPE.search(text)[0]
    m = BROKEN.search(text)
    assert m is None, f"a name broken across lines: {m[0]!r}"
    assert "{" not in text.split("\n", 1)[0]  # usage shows FILE..., not {FILE}...


def test_root_version_option_and_completion():
    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout == f"replicate {__version__}\n"
    assert CliRunner().invoke(app, ["version"]).stdout == r.stdout
    help_text = CliRunner().invoke(app, ["--help"]).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text


def test_shell_completion_script_and_completions(monkeypatch):
    try:
        import shellingham
    except ImportError:  # without shellingham, typer takes the shell as the option's value
        pass
    else:  # with it, --show-completion is a flag and the shell is detected from the process tree,
        # and a pytest started without a shell above it (detached, or by a runner that execs it) has none
        monkeypatch.setattr(shellingham, "detect_shell", lambda *a, **k: ("bash", "/bin/bash"))
    script = CliRunner().invoke(app, ["--show-completion", "bash"])
    assert script.exit_code == 0 and "_replicate_completion" in script.stdout
    monkeypatch.setenv("_REPLICATE_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "replicate par")
    monkeypatch.setenv("COMP_CWORD", "1")
    r = CliRunner().invoke(app, [], prog_name="replicate")
    assert r.stdout.split() == ["parse", "parsers"]


def test_root_help_groups_every_command_in_a_panel():
    from replicate.cli.app import app as root
    from replicate.cli.panels import OTHER, PANELS

    r = CliRunner().invoke(root, ["--help"], env={"COLUMNS": "100"})
    assert r.exit_code == 0
    assert OTHER + ":" not in r.stdout  # every command has a panel
    assert r.stdout.index("Start here:") < r.stdout.index("Audit released judge outputs:")
    assert "Start with 'replicate demo'" in r.stdout
    listed = {n for _, names in PANELS for n in names}
    import typer.main

    group = typer.main.get_command(root)
    visible = {n for n, c in group.commands.items() if not c.hidden}
    assert visible == listed
    assert "version" not in visible  # --version is the one way to print it; the command stays, hidden
