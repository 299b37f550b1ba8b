"""The Typer application object, shared options and the one place errors are printed."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

from replicate.cli.help import ReplicateContext, ReplicateTyper, tidy_params
from replicate.cli.pipes import PIPE_CLOSED, fail_for, quiet_streams
from replicate.cli.rootflags import hoist
from replicate.diagnostics import Diagnostics, summary_text
from replicate.errors import Namer, ReplicateError
from replicate.output import Format, dumps_json, printable, printable_json
from replicate.secrets import scrub

F = TypeVar("F", bound=Callable[..., Any])


def flags(**param_flags: str) -> Callable[[F], F]:
    """Which option of this command stands for a library parameter of another name.

    Library errors name parameters (``n_null must be >= 0``); the command line
    shows its options instead. A parameter named like one of the command's own
    (``alpha`` -> ``--alpha``) needs no entry; ``@flags(n_null="--null")`` names the rest.
    """

    def mark(f: F) -> F:
        f.__dict__["replicate_flags"] = dict(param_flags)
        return f

    return mark


#: Library parameters several commands show as one option of another name
#: (used for a command that has that option).
COMMON_FLAGS = {"parsers": "--parser", "output_fields": "--output-field", "runs_toml": "--runs"}


def _namer(command: Any) -> Namer:
    """Library parameter -> this command's option (its first long name), else None."""
    if command is None:
        return lambda name: None
    options = [p for p in command.params if p.param_type_name == "option" and p.name]
    given = {o for p in options for o in p.opts}
    table = {k: v for k, v in COMMON_FLAGS.items() if v in given}
    table.update({p.name: next((o for o in p.opts if o.startswith("--")), p.opts[0]) for p in options})
    table.update(getattr(command.callback, "replicate_flags", {}))
    return table.get


class ReplicateGroup(TyperGroup):
    """Prints :class:`ReplicateError` as ``Error: <message>`` and exits with its code.

    Parameters the message names are shown as the failing command's options.
    """

    context_class = ReplicateContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tidy_params(self.params)

    def get_params(self, ctx: Any) -> list[Any]:
        """Also the options Typer adds after ``__init__`` (completion, help), as ours."""
        params = super().get_params(ctx)
        tidy_params(params)
        return params

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The root's commands in the panels of :mod:`replicate.cli.panels`; a sub-group lists its own plainly."""
        if ctx.parent is not None:
            return super().format_commands(ctx, formatter)
        from replicate.cli.panels import order_of, panel_of

        shown = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                shown.append((name, cmd))
        if not shown:
            return None
        width = formatter.width - 6 - max(len(n) for n, _ in shown)
        panels: dict[str, list[tuple[str, str]]] = {}
        for name, cmd in sorted(shown, key=lambda nc: order_of(nc[0])):
            panels.setdefault(panel_of(name), []).append((name, cmd.get_short_help_str(width)))
        for title, rows in panels.items():
            with formatter.section(title):
                formatter.write_dl(rows)
        return None

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if ctx.parent is None:  # the root group: its flags may follow the command too
            args = hoist(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # the reader of our output left (``| head``): end quietly, not with 1 ("a check failed")
            quiet_streams()
            ctx.exit(PIPE_CLOSED)
        except ReplicateError as exc:
            sub = ctx.invoked_subcommand
            text = scrub(exc.message_for(_namer(self.get_command(ctx, sub) if sub else None)))
            for i, line in enumerate(printable(text).splitlines() or [""]):
                typer.echo(("Error: " if i == 0 else "       ") + line, err=True)
            ctx.exit(exc.exit_code)
        except (OSError, UnicodeError) as exc:
            # the system failed under the command (disk full, output to /dev/full, a name the locale cannot
            # encode): one line and exit 2, never a traceback
            ctx.exit(fail_for(exc))


def make_app(name: str | None = None, help: str | None = None, *, completion: bool = False) -> typer.Typer:
    """A command group; ``completion`` adds ``--install-completion``/``--show-completion``
    (the root application only)."""
    return ReplicateTyper(
        name=name,
        help=help,
        cls=ReplicateGroup,
        no_args_is_help=True,
        add_completion=completion,
        pretty_exceptions_show_locals=False,  # never print API keys held in locals
        rich_markup_mode=None,
    )


app = make_app(
    "replicate",
    "Audit published LLM-judge and benchmark outputs across model versions.\n\n"
    "Start with 'replicate demo' (the bundled example: every upgrade item by item), then 'replicate compare "
    "OLD NEW' on your own files; docs/worked-audit.md walks through a whole audit.",
    completion=True,
)

# Shared option types -----------------------------------------------------------
FormatOpt = Annotated[
    Format, typer.Option("--format", "-f", help="Output format: table, markdown or json.")
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Treat every warning about the input as an error.")
]

ForceOpt = Annotated[
    bool,
    typer.Option("--force", help="Replace an output file that exists although it is not this command's own earlier "
                 "output (unchanged since); without it such a file is refused."),
]


def echo(text: str, *, json: bool = False) -> None:
    """Write command output to stdout without adding a newline to text that has one; control characters
    are shown escaped (:func:`~replicate.output.printable`; JSON: as ``\\u`` escapes, the same JSON)."""
    text = printable_json(scrub(text)) if json else printable(scrub(text))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def warn(text: str) -> None:
    typer.echo(printable(scrub(text)), err=True)


@contextlib.contextmanager
def report_to_stderr(when: bool) -> Iterator[None]:
    """While a command's file goes to standard output (``--out -``), its report goes to stderr."""
    if not when:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _print_version(value: bool) -> None:
    if value:
        from replicate import __version__

        echo(f"replicate {__version__}")
        raise typer.Exit()


#: Set by the root options for the command being run: use the label cache, say what it did.
CACHE_SETTINGS = {"use": True, "verbose": False}


def json_body(result: Any) -> dict[str, Any]:
    """A result's JSON object: its ``to_json()``, or a mapping of results as is."""
    return dict(result.to_json() if hasattr(result, "to_json") else result)


#: Narrower than this, a COLUMNS or terminal width is taken as this (tables of numbers need some room).
MIN_WIDTH = 40


def terminal_width(stream: Any = None) -> int | None:
    """The width to fit plain text to: COLUMNS when set, else the terminal's when ``stream`` (standard
    output when None) is one (:func:`shutil.get_terminal_size`); None for a file or a pipe (the text as it
    comes, the same on every machine, a line per record for grep)."""
    import os
    import shutil

    columns = os.environ.get("COLUMNS", "").strip()
    if not (columns.isdigit() and int(columns) > 0) and not (stream or sys.stdout).isatty():
        return None
    return max(shutil.get_terminal_size().columns, MIN_WIDTH)


def fit_terminal(render: Callable[[], str], fmt: Format) -> Callable[[], str]:
    """``render`` for :func:`emit`'s ``text``, its plain text fitted to :func:`terminal_width` (tables in
    blocks of columns or wrapped cells, prose wrapped: :func:`replicate.output.fitted`,
    :func:`~replicate.output.fit_lines`); markdown, and text to a file or a pipe, as they come."""
    if fmt is not Format.table:
        return render

    def fitted_text() -> str:
        from replicate.output import fit_lines, fitted

        width = terminal_width()
        if width is None:
            return render()
        with fitted(width):
            return fit_lines(render(), width)

    return fitted_text


def emit(
    result: Any,
    fmt: Format,
    diagnostics: Diagnostics | None = None,
    *,
    text: Callable[[], str],
    warnings: Callable[[Diagnostics], str] | None = summary_text,
) -> None:
    """The last step of every command that prints a result: the one output path.

    ``diagnostics`` are the warnings met reading the input: ``warnings``
    renders them to stderr first (None: the text output reports them itself).
    JSON is the result's ``to_json()`` (a mapping of results is taken as is)
    with the input's warnings added as the top-level ``"warnings"`` (counts by
    code and the first ones in full) when ``diagnostics`` is given; renderers
    never write JSON. Other formats print ``text()``. Only the one asked for is built.
    """
    if diagnostics is not None and warnings is not None:
        shown = warnings(diagnostics)
        if shown:
            warn(shown.rstrip("\n"))
    if fmt is Format.json:
        body = json_body(result)
        if diagnostics is not None:
            body["warnings"] = diagnostics.to_json()
        echo(dumps_json(body), json=True)
    else:
        echo(text())


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Read and parse everything again instead of using what an earlier run over the same "
            "files kept (the run and label caches, under REPLICATE_CACHE_DIR or the user cache dir; "
            "see docs/cache.md).",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Say on stderr, per run, whether it came from the run cache and its labels from the label "
            "cache.",
        ),
    ] = False,
) -> None:
    """Audit published LLM-judge and benchmark outputs across model versions.

    Every verb that computes figures offers --format table|markdown|json.
    Exit codes: 0 success, 1 a check failed, 2 bad usage or bad input.
    """
    CACHE_SETTINGS["use"] = not no_cache
    CACHE_SETTINGS["verbose"] = verbose
