"""The panels ``replicate --help`` groups its commands in, and those a command's help groups its options in.

Two tables: :data:`PANELS` (commands; one missing here would be listed under "Other", and
tests/cli/test_help.py fails on it) and :data:`OPTION_PANELS` (options; one not named there is
listed under "Options"). The app prints help with Click's plain formatter (``rich_markup_mode=None``),
which ignores Typer's ``rich_help_panel=``, so the panels are drawn from these tables
(``ReplicateGroup.format_commands``, ``ReplicateCommand.format_options``).
"""

from __future__ import annotations

#: (panel title, its commands in the order shown).
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Start here", ("demo",)),
    ("Audit released judge outputs", ("parse", "compare", "chain", "cells", "agreement", "floor", "matrix",
                                      "rankings", "mtbench", "pairwise", "regrade")),
    ("K-trial studies", ("plan", "screen", "draw", "collect", "score", "import", "items", "path", "costs", "repair-archive",
                         "export", "sim-server")),
    ("Verify a paper and fetch its release", ("verify", "harness-claims", "fetch")),
    ("Plugins", ("parsers", "readers", "scorers")),
)

OTHER = "Other"


def panel_of(name: str) -> str:
    for title, names in PANELS:
        if name in names:
            return title
    return OTHER


def order_of(name: str) -> tuple[int, int]:
    for i, (_, names) in enumerate(PANELS):
        if name in names:
            return i, names.index(name)
    return len(PANELS), 0


#: The panel an option is listed in when the table below does not name it (Click's own section).
OPTIONS = "Options"

#: The judge commands whose bootstrap options (shared from cli/judge_options.py) get their own panel.
INTERVAL_COMMANDS: tuple[str, ...] = (
    "parse", "compare", "chain", "cells", "agreement", "floor", "matrix", "verify", "parsers audit",
)

#: The panels of a command's help after its general options: (panel title, its options by long name,
#: the commands it applies to, None for every command). An option the table does not place is listed
#: under :data:`OPTIONS`, first.
OPTION_PANELS: tuple[tuple[str, tuple[str, ...], tuple[str, ...] | None], ...] = (
    ("Format-specific options", ("--key-field", "--gold-field", "--output-field", "--filter", "--correct-field",
                                 "--inspect-scorer", "--score-map", "--epoch"), None),
    ("Intervals", ("--replicates", "--seed", "--cluster", "--min-items"), INTERVAL_COMMANDS),
    ("Performance", ("--jobs",), None),
)


def option_panel(command: str, option: str) -> str:
    """The help panel of ``option`` (its long name) in ``command`` (``"parsers audit"``): the table's, else OPTIONS."""
    for title, options, commands in OPTION_PANELS:
        if option in options and (commands is None or command in commands):
            return title
    return OPTIONS


def option_panels() -> tuple[str, ...]:
    """Every option panel title in the order shown."""
    return (OPTIONS, *(title for title, _, _ in OPTION_PANELS))
