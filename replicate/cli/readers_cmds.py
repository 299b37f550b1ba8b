"""`replicate readers ...`: the installed readers of released files (built-ins and plugins)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from replicate.cli.base import FormatOpt, app, emit, make_app
from replicate.cli.parsers_cmds import broken_entries, render_broken
from replicate.output import Format, table

readers_app = make_app(
    "readers",
    "List the installed readers of released files and show what each reads.",
)
app.add_typer(readers_app, name="readers")


def reader_entry(reader: Any, origin: str) -> dict[str, Any]:
    """One reader as plain values (what 'readers list -f json' prints per reader)."""
    label_set = getattr(reader, "label_set", None)
    return {
        "name": reader.name,
        "description": reader.description,
        "yields": reader.yields,
        "label_set": None if label_set is None else label_set.to_json(),
        "decided": reader.decided,
        "has_gold": reader.has_gold,
        "key": list(reader.key_names),
        "options": None if getattr(reader, "options", None) is None else list(reader.options),
        "source_rule": None if getattr(reader, "source_rule", None) is None
        else {"unparsed": reader.source_rule.unparsed, "says": reader.source_rule.says},
        "origin": origin,
    }


def catalogue() -> dict[str, Any]:
    """Every registered reader and every reader plugin that failed to load."""
    from replicate.reading.contract import READERS

    return {"readers": [reader_entry(r, READERS.origin(r.name)) for r in READERS], "broken": broken_entries(READERS)}


def _labels(entry: dict[str, Any]) -> str:
    ls = entry["label_set"]
    if ls is None:
        return "-"
    if ls["kind"] == "ordinal":
        return f"ordinal {ls['min']}-{ls['max']}"
    return "categorical " + ", ".join(ls["names"])


def render_catalogue(cat: dict[str, Any], fmt: Format) -> str:
    rows = [[r["name"], r["yields"], r["description"], r["origin"]] for r in cat["readers"]]
    return table(rows, ["name", "yields", "description", "origin"], fmt) + render_broken(cat["broken"], fmt)


def render_reader(entry: dict[str, Any], details: str, fmt: Format) -> str:
    facts = [
        ("yields", entry["yields"]),
        ("key", ", ".join(entry["key"])),
        ("gold in the file", "yes" if entry["has_gold"] else "no (give --gold)"),
        ("labels", _labels(entry)),
    ]
    if entry["decided"]:
        facts.append(("shown as parser", entry["decided"]))
    if entry.get("options") is not None:
        facts.append(("reader options", ", ".join(entry["options"]) or "none"))
    if entry.get("source_rule") is not None:
        rule = entry["source_rule"]
        facts.append(("the source's rule", f"--unparsed {rule['unparsed']} by default ({rule['says']})"))
    facts.append(("origin", entry["origin"]))
    if fmt is Format.markdown:
        head = [f"## `{entry['name']}`", "", entry["description"], ""] + [f"- {k}: {v}" for k, v in facts] + [""]
    else:
        head = [entry["name"], entry["description"], ""] + [f"{k}: {v}" for k, v in facts] + [""]
    return "\n".join(head + [details or "(no description of the format given)"]) + "\n"


@readers_app.command("list")
def list_readers(fmt: FormatOpt = Format.table) -> None:
    """List every installed reader: name, what its records carry, description, origin.

    'yields' says what a reader's records carry: outputs (raw judge text a
    parser reads), labels (decided in the file: no parser needed) or verdicts
    (correct or not, no label or gold). Built-in readers and third-party
    plugins are found through the 'replicate.readers' entry points; a plugin
    that fails to load is listed with its error and does not make the command fail.
    """
    cat = catalogue()
    emit(cat, fmt, text=lambda: render_catalogue(cat, fmt))


@readers_app.command("show")
def show_reader(
    name: Annotated[str, typer.Argument(metavar="NAME@N", help="Versioned reader name, e.g. trec-qrels@1.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Show one reader: the format it reads, the fields it takes and what it refuses."""
    from replicate.reading.contract import READERS

    reader = READERS.get(name)
    entry = reader_entry(reader, READERS.origin(name))
    emit({**entry, "details": reader.details}, fmt, text=lambda: render_reader(entry, reader.details, fmt))
