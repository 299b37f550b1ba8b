"""The interval the readings use, read from a JSON document's ``ci`` map (one entry per figure, by method)."""

from __future__ import annotations


def used(doc: dict) -> dict:
    """Figure -> the interval each ``ci`` entry names its default (the one text prints and verdicts read)."""
    return {fig: entry[entry["default"]] for fig, entry in doc["ci"].items()}
