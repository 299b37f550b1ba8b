"""Entry point of the ``replicate`` console script: imports every command module."""

from __future__ import annotations

import importlib

from replicate import __version__
from replicate.cli.base import app, echo

# Each module registers its commands on ``app`` when imported. Modules import
# their heavy dependencies (scipy, git, ...) inside the command functions so
# that start-up stays fast.
COMMAND_MODULES = (
    "replicate.cli.judge_cmds",
    "replicate.cli.agreement_cmds",
    "replicate.cli.parsers_cmds",
    "replicate.cli.readers_cmds",
    "replicate.cli.scorers_cmds",
    "replicate.cli.floor_cmds",
    "replicate.cli.fetch_cmds",
    "replicate.cli.trials_cmds",
    "replicate.cli.study_cmds",
    "replicate.cli.import_cmds",
    "replicate.cli.collect_cmds",
    "replicate.cli.verify_cmds",
    "replicate.cli.rankings_cmds",
    "replicate.cli.pairwise_cmds",
)

for _mod in COMMAND_MODULES:
    importlib.import_module(_mod)


@app.command("version", hidden=True)
def version() -> None:
    """Print the version of replicate (as --version does; kept for scripts that call it)."""
    echo(f"replicate {__version__}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
