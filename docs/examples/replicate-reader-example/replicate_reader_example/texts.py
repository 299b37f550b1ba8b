"""A second example reader, built on the reader toolkit: a judge's raw texts in JSONL.

One object a line, ``{"qid": "q1", "docid": "p1", "text": "... Final grade: 2"}``;
the texts are read into labels by ``--parser`` (e.g. ``umbrela-fallback@1``).
The toolkit (:mod:`replicate.reading.stream`, :mod:`replicate.reading.jsonl`) does
what every JSONL reader needs: lines streamed, a BOM removed, a blank line
skipped with a warning, a torn last line or a line that is not JSON refused
naming file and line, key values compared as text.
"""

from __future__ import annotations

from typing import Iterator

from replicate.reading.contract import Match, ReadOptions, Record, Source, reader
from replicate.reading.jsonl import json_objects
from replicate.reading.stream import describe, first_json, key_text

KEY = ("qid", "docid")


def sniff(head: bytes, options: ReadOptions) -> Match:
    """'yes' when the first line is a JSON object with qid, docid and text."""
    opens, obj = first_json(head, b"{")
    if not opens:
        return "no"
    return "yes" if isinstance(obj, dict) and all(k in obj for k in (*KEY, "text")) else "no"


@reader(
    "jsonl-texts@1",
    "JSONL of {qid, docid, text}: a judge's raw text per pair, read into labels by --parser.",
    sniff=sniff,
    yields="outputs",
    key_names=KEY,
    has_gold=False,
    format="jsonl",
)
def read_texts(source: Source) -> Iterator[Record]:
    """One JSON object a line with qid, docid (strings or integers, compared
    as text) and text (the judge's raw output; null reads as unparsed).
    Refused, naming file and line: a line that is not a JSON object, a
    missing or non-text key, a text that is not a string."""
    for line, obj in json_objects(source):
        key = tuple(key_text(obj.get(name)) for name in KEY)
        if None in key:
            raise source.bad("qid and docid must be strings or integers", line)
        text = obj.get("text")
        if text is not None and not isinstance(text, str):
            raise source.bad(f"'text' must be a string, got {describe(text)}", line)
        yield Record(key, line, output=text)  # type: ignore[arg-type]  # None was refused above
