"""Which record fields hold what, and the checks on their values (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from replicate.labels import GOLD_MAX  # the largest gold grade the int16 gold array holds


@dataclass(frozen=True)
class FieldSpec:
    """Which fields of a flat JSONL record hold what.

    ``key_fields`` identify an item (values compared as strings: the number
    19335 and the string "19335" are the same key); ``gold_field`` holds the
    reference grade; the first of ``output_fields`` present in a file's first
    record is that file's output field. ``thought_fields`` and
    ``rewritten_field`` are only counted and reported.
    """

    key_fields: tuple[str, ...] = ("query_id", "corpus_id")
    gold_field: str = "original_qrel_score"
    output_fields: tuple[str, ...] = ("model_output", "gemini_output")
    thought_fields: tuple[str, ...] = ("model_thought", "gemini_thought")
    rewritten_field: str = "original_output"

    def __post_init__(self) -> None:
        for name in ("key_fields", "output_fields", "thought_fields"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
        if not self.key_fields:
            raise ValueError("key_fields must name at least one field")
        if not self.output_fields:
            raise ValueError("output_fields must name at least one field")
        for name in ("key_fields", "output_fields", "thought_fields"):
            if not all(isinstance(f, str) and f for f in getattr(self, name)):
                raise ValueError(f"{name} must be non-empty field names")

    def to_json(self) -> dict:
        return {
            "key_fields": list(self.key_fields),
            "gold_field": self.gold_field,
            "output_fields": list(self.output_fields),
        }


def key_text(value: Any) -> str | None:
    """A key field's value as the string it is compared by (None if not a str/int)."""
    t = type(value)
    if t is str:
        return value
    if t is int:
        return str(value)
    return None


def gold_int(value: Any) -> int | None:
    """A gold grade as an int: 2 and 2.0 give 2; 2.5, -1, "2", true, null give None.

    Grades are non-negative: a negative one could not be told apart from the
    unparsed marker (-1) in label arithmetic.
    """
    t = type(value)
    if t is int:
        v = value
    elif t is float and value.is_integer():
        v = int(value)
    else:
        return None
    return v if 0 <= v <= GOLD_MAX else None


def describe(value: Any) -> str:
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, dict):
        return "a JSON object"
    if value is None:
        return "null"
    return f"a JSON {type(value).__name__} ({orjson.dumps(value).decode()[:40]})"


