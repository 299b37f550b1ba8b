"""The Typer application object, shared options and the one place errors are printed."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from replicate.errors import ReplicateError
from replicate.output import Format


class ReplicateGroup(TyperGroup):
    """Prints :class:`ReplicateError` as ``Error: <message>`` and exits with its code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ReplicateError as exc:
            for i, line in enumerate(str(exc).splitlines() or [""]):
                typer.echo(("Error: " if i == 0 else "       ") + line, err=True)
            ctx.exit(exc.exit_code)


def make_app(name: str | None = None, help: str | None = None) -> typer.Typer:
    return typer.Typer(
        name=name,
        help=help,
        cls=ReplicateGroup,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,  # never print API keys held in locals
        rich_markup_mode=None,
    )


app = make_app(
    "replicate",
    "Audit published LLM-judge and benchmark outputs across model versions.",
)

# Shared option types -----------------------------------------------------------
FormatOpt = Annotated[
    Format, typer.Option("--format", "-f", help="Output format: table, markdown or json.")
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Treat every warning about the input as an error.")
]


def echo(text: str) -> None:
    """Write command output to stdout without adding a newline to text that has one."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def warn(text: str) -> None:
    typer.echo(text, err=True)


@app.callback()
def _root() -> None:
    """Audit published LLM-judge and benchmark outputs across model versions.

    Every verb that computes figures offers --format table|markdown|json.
    Exit codes: 0 success, 1 a check failed, 2 bad usage or bad input.
    """
