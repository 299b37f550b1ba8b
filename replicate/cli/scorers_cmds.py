"""`replicate scorers ...`: the installed answer scorers (built-ins and plugins).

The same shape as ``replicate parsers list|show``: a catalogue of every scorer
registered through the ``replicate.scorers`` entry points, and one scorer's
full rule text.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from replicate.cli.base import FormatOpt, app, emit, make_app
from replicate.cli.parsers_cmds import broken_entries, render_broken
from replicate.output import Format, table

scorers_app = make_app(
    "scorers",
    "List the installed answer scorers and show their exact rules.",
)
app.add_typer(scorers_app, name="scorers")


def _entry(scorer: Any, origin: str) -> dict[str, Any]:
    return {
        "name": scorer.name,
        "description": scorer.description,
        "origin": origin,
        "needs": list(getattr(scorer, "needs", ())),
        "has_loose": bool(getattr(scorer, "has_loose", False)),
    }


def catalogue() -> dict[str, Any]:
    """Every registered scorer and every plugin that failed to load, as plain values."""
    from replicate.scoring.base import SCORERS

    return {"scorers": [_entry(s, SCORERS.origin(s.name)) for s in SCORERS], "broken": broken_entries(SCORERS)}


def _needs(entry: dict[str, Any]) -> str:
    return ", ".join(entry["needs"]) or "-"


def render_catalogue(cat: dict[str, Any], fmt: Format) -> str:
    rows = [[s["name"], s["description"], _needs(s), s["origin"]] for s in cat["scorers"]]
    return table(rows, ["name", "description", "needs", "origin"], fmt) + render_broken(cat["broken"], fmt)


def render_scorer(entry: dict[str, Any], details: str, fmt: Format) -> str:
    loose = "yes" if entry["has_loose"] else "no"
    if fmt is Format.markdown:
        head = [f"## `{entry['name']}`", "", entry["description"], ""]
        head += [f"- needs: {_needs(entry)}", f"- loose verdict: {loose}", f"- origin: {entry['origin']}", ""]
    else:
        head = [entry["name"], entry["description"], "", f"needs: {_needs(entry)}", f"loose verdict: {loose}",
                f"origin: {entry['origin']}", ""]
    return "\n".join(head + [details or "(no rule text given)"]) + "\n"


@scorers_app.command("list")
def list_scorers(fmt: FormatOpt = Format.table) -> None:
    """List every installed scorer: name, one-line description, resources it needs, origin distribution.

    Built-in scorers and third-party plugins are found through the
    'replicate.scorers' entry points. A plugin that fails to load is listed
    with its error after the scorers; it does not make the command fail.
    """
    cat = catalogue()
    emit(cat, fmt, text=lambda: render_catalogue(cat, fmt))


@scorers_app.command("show")
def show_scorer(
    name: Annotated[str, typer.Argument(metavar="NAME@N", help="Versioned scorer name, e.g. mcq-letter@1.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Show one scorer's full rule text: exactly how it reads and judges an answer."""
    from replicate.scoring.base import SCORERS

    scorer = SCORERS.get(name)
    entry, details = _entry(scorer, SCORERS.origin(name)), inspect.cleandoc(scorer.details)
    emit({**entry, "details": details}, fmt, text=lambda: render_scorer(entry, details, fmt))
