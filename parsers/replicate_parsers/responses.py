"""``responses@1``: released responses to score, one ``{"prompt", "response"}`` JSON object a line.

The shape IFBench's ``sample_output.jsonl`` has (and the official verifier
reads, and ``replicate export ifbench`` writes): each line a prompt and one
model's response to it, usually without an item id. ``replicate score`` joins
the records to the benchmark's items (by prompt text, or by an id field) and
scores them; see :mod:`replicate.scoring.responses`.
"""

from __future__ import annotations

import inspect
from typing import Any, Iterator

import orjson

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, first_line
from replicate.reading.jsonl import json_values
from replicate.reading.stream import describe

#: The reader options this reader takes (ReadOptions.extra names; the CLI shows --id-field).
OPTIONS = ("id_field",)
PROMPT, RESPONSE = "prompt", "response"


def _sniff(head: bytes, options: ReadOptions) -> Match:
    line = first_line(head)
    if line is None or not line.startswith(b"{"):
        return "no"
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:  # a first line cut at the head's end (a long response)
        return "yes" if line.startswith(b'{"prompt": "') or line.startswith(b'{"prompt":"') else "no"
    if not isinstance(obj, dict):
        return "no"
    if isinstance(obj.get(PROMPT), str) and RESPONSE in obj and "type" not in obj:
        return "yes"
    return "no"


def _text(obj: dict, name: str, src: Source, lineno: int, *, nullable: bool = False) -> str | None:
    if name not in obj:
        have = ", ".join(sorted(obj)) or "none"
        raise src.bad(f"record lacks {name!r} (a responses@1 line has 'prompt' and 'response'; its fields: {have})", lineno)
    value = obj[name]
    if value is None and nullable:
        return None
    if type(value) is not str:
        raise src.bad(f"{name!r} must be a string, got {describe(value)}", lineno)
    return value


def _key(obj: dict, field: str, src: Source, lineno: int) -> str:
    if field not in obj:
        raise src.bad(f"record lacks the id field {field!r} (--id-field)", lineno)
    value = obj[field]
    if type(value) not in (str, int) or (type(value) is str and not value.strip()):
        raise src.bad(f"id field {field!r} must be a non-empty string or an integer, got {describe(value)}", lineno)
    return str(value)


def _records(src: Source) -> Iterator[Record]:
    """Released responses to score: one JSON object a line with ``prompt``
    (the text sent) and ``response`` (the model's reply), as IFBench's
    ``sample_output.jsonl`` and the verifier's input files. Other fields are
    ignored.

    Key: the ``prompt`` text (``replicate score`` joins it to the items'
    prompts: exactly, else with whitespace normalised, reported as such), or
    with ``--id-field FIELD`` that field's value (a string or an integer,
    compared as a string), joined to the item ids. Output: the ``response``;
    ``null`` means no response (warned; scored as an API error).

    Refused, naming file and line: a line that is not a JSON object, a record
    lacking ``prompt`` or ``response`` (or the id field), a prompt or response
    that is not a string, the same prompt (or id) twice in one file (which
    response is the trial's is unclear: one file holds one response per
    prompt, a trial), a line that is not UTF-8, a torn last line."""
    id_field = src.options.get("id_field")
    src.used["key"] = "prompt" if id_field is None else f"id_field={id_field}"
    seen: dict[str, int] = {}
    obj: Any
    taken = (PROMPT, RESPONSE) if id_field is None else (PROMPT, RESPONSE, str(id_field))
    for lineno, obj in json_values(src, taken):  # a blank line skipped (warned), not JSON or a taken key twice refused
        if type(obj) is not dict:
            raise src.bad(f"expected a JSON object (a prompt and its response), got {describe(obj)}", lineno)
        prompt, response = obj.get(PROMPT), obj.get(RESPONSE)
        if type(prompt) is not str or type(response) is not str:  # the common case passes with two checks
            prompt = _text(obj, PROMPT, src, lineno)
            response = _text(obj, RESPONSE, src, lineno, nullable=True)
        key = str(prompt) if id_field is None else _key(obj, str(id_field), src, lineno)
        if key in seen:
            what = "the same prompt" if id_field is None else f"{id_field} {key!r}"
            raise src.bad(f"{what} is given again (first at line {seen[key]}): one file holds one response per "
                          "prompt (a trial); put other trials in other files", lineno)
        seen[key] = lineno
        if response is None:
            src.warn("null-response", "'response' is null (no response: scored as an API error)", lineno)
        yield Record((key,), lineno, output=response)


RESPONSES = Reader(
    "responses@1",
    "Released responses to score: JSONL of {prompt, response} (IFBench sample_output.jsonl), keyed by prompt or --id-field.",
    _sniff,
    _records,
    yields="outputs",
    key_names=("prompt",),
    has_gold=False,
    format="responses",
    details=inspect.cleandoc(_records.__doc__ or ""),
    streams=True,
)
