"""`replicate parsers ...`: the installed judge-output parsers (built-ins and plugins).

``parsers_app`` is the sub-application; other command modules add verbs to it
(e.g. ``replicate parsers audit``) by importing it from here.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from replicate.cli.base import FormatOpt, app, emit, make_app
from replicate.output import Format, table

parsers_app = make_app(
    "parsers",
    "List the installed judge-output parsers and show their exact rules.",
)
app.add_typer(parsers_app, name="parsers")


def _entry(parser: Any, origin: str) -> dict[str, Any]:
    return {
        "name": parser.name,
        "description": parser.description,
        "released": bool(getattr(parser, "released", True)),
        "origin": origin,
        "labels": list(getattr(parser, "labels", ())),
        "label_set": None if getattr(parser, "label_set", None) is None else parser.label_set.to_json(),
    }


def _reading(entry: dict[str, Any]) -> str:
    return "released" if entry["released"] else "correction"


def catalogue() -> dict[str, Any]:
    """Every registered parser and every plugin that failed to load, as plain values."""
    from replicate.parsing import PARSERS

    return {"parsers": [_entry(p, PARSERS.origin(p.name)) for p in PARSERS], "broken": broken_entries(PARSERS)}


def broken_entries(registry: Any) -> list[dict[str, Any]]:
    """The plugins of ``registry`` that failed to load, as plain values."""
    return [
        {"entry_point": b.entry_point, "value": b.value, "distribution": b.distribution, "error": b.error}
        for b in registry.broken
    ]


def render_broken(broken: list[dict[str, Any]], fmt: Format) -> str:
    """The table of plugins that failed to load ('' when none did)."""
    if not broken:
        return ""
    rows = [[b["entry_point"], b["value"], b["distribution"] or "-", b["error"]] for b in broken]
    title = "Plugins that failed to load:" if fmt is Format.table else "### Plugins that failed to load"
    return "\n" + title + "\n\n" + table(rows, ["entry point", "value", "distribution", "error"], fmt)


def render_catalogue(cat: dict[str, Any], fmt: Format) -> str:
    """The catalogue as a table or markdown (JSON is the catalogue itself, through emit)."""
    rows = [[p["name"], _reading(p), p["description"], p["origin"]] for p in cat["parsers"]]
    return table(rows, ["name", "reading", "description", "origin"], fmt) + render_broken(cat["broken"], fmt)


def render_parser(entry: dict[str, Any], details: str, fmt: Format) -> str:
    """One parser's entry and rule text as text or markdown (JSON: the entry with ``details``, through emit)."""
    labels = ", ".join(str(x) for x in entry["labels"])
    if fmt is Format.markdown:
        head = [f"## `{entry['name']}`", "", entry["description"], ""]
        head += [f"- reading: {_reading(entry)}", f"- origin: {entry['origin']}", f"- labels: {labels}", ""]
    else:
        head = [entry["name"], entry["description"], "", f"reading: {_reading(entry)}",
                f"origin: {entry['origin']}", f"labels: {labels}", ""]
    return "\n".join(head + [details or "(no rule text given)"]) + "\n"


@parsers_app.command("list")
def list_parsers(fmt: FormatOpt = Format.table) -> None:
    """List every installed parser: name, reading, one-line description, origin distribution.

    The reading is 'released' for a parser that reproduces a released script's
    or paper's reading, 'correction' for one new in its package that no paper
    used (commands that pick parsers by default try released readings first).
    Built-in parsers and third-party plugins are found through the
    'replicate.parsers' entry points. A plugin that fails to load is listed
    with its error after the parsers; it does not make the command fail.
    """
    cat = catalogue()
    emit(cat, fmt, text=lambda: render_catalogue(cat, fmt))


@parsers_app.command("show")
def show_parser(
    name: Annotated[str, typer.Argument(metavar="NAME@N", help="Versioned parser name, e.g. umbrela-strict@1.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Show one parser's full rule text: exactly how it reads an output."""
    from replicate.parsing import PARSERS

    parser = PARSERS.get(name)
    entry = _entry(parser, PARSERS.origin(name))
    emit({**entry, "details": parser.details}, fmt, text=lambda: render_parser(entry, parser.details, fmt))
