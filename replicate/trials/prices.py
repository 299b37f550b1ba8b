"""Per-model token prices (``--prices PRICES.toml``): tokens turned into money.

```toml
source = "https://example.com/pricing"   # where the prices were read (required)
date = 2026-11-30                          # when (required: prices change)
currency = "USD"                           # optional, default USD

[models."gpt-4o-2024-08-06"]
input = 2.50        # per million prompt tokens
output = 10.00      # per million completion tokens
reasoning = 10.00   # optional: per million reasoning tokens (default: the output price)
```

A trial's cost is ``(prompt * input + (completion - reasoning) * output +
reasoning * reasoning_price) / 1e6``: reasoning tokens are part of the
completion tokens. With no separate reasoning price (or the same as output)
that is ``(prompt * input + completion * output) / 1e6``; with a different one,
a trial that does not report its reasoning tokens has no cost (null, counted).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from replicate.errors import BadInput

PRICE_FIELDS = ("input", "output", "reasoning")
_TOP = {"source", "date", "currency", "models"}


@dataclass(frozen=True)
class Price:
    """One model's prices per million tokens; ``reasoning`` None = priced as output."""

    input: float
    output: float
    reasoning: float | None = None

    def cost(self, prompt: np.ndarray, completion: np.ndarray, reasoning: np.ndarray) -> np.ndarray:
        """Money per trial (NaN where a count it needs is not reported)."""
        if self.reasoning is None or self.reasoning == self.output:
            return (prompt * self.input + completion * self.output) / 1e6
        return (prompt * self.input + (completion - reasoning) * self.output + reasoning * self.reasoning) / 1e6

    def to_json(self) -> dict:
        return {"input": self.input, "output": self.output,
                "reasoning": self.output if self.reasoning is None else self.reasoning,
                "reasoning_priced_as_output": self.reasoning is None}


@dataclass(frozen=True)
class Prices:
    """A prices file: where and when the prices were read, and each model's :class:`Price`."""

    source: str
    date: str
    currency: str
    models: Mapping[str, Price]
    path: str | None = None

    def to_json(self) -> dict:
        return {"file": self.path, "source": self.source, "date": self.date, "currency": self.currency,
                "per_million_tokens": {m: p.to_json() for m, p in self.models.items()}}


def _line(text: str, pattern: str) -> int | None:
    rx = re.compile(pattern)
    for i, line in enumerate(text.splitlines(), 1):
        if rx.search(line):
            return i
    return None


def _price(name: str, spec: Any, path: str, text: str) -> Price:
    line = _line(text, r"^\s*\[\s*models\s*\.\s*[\"']?" + re.escape(name) + r"[\"']?\s*\]")
    if not isinstance(spec, dict):
        raise BadInput(f"models.{name} must be a table of prices (input, output, reasoning)", path=path, line=line)
    unknown = sorted(set(spec) - set(PRICE_FIELDS))
    if unknown:
        raise BadInput(f"models.{name}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(PRICE_FIELDS)}",
                       path=path, line=line)
    values: dict[str, float | None] = {}
    for f in PRICE_FIELDS:
        v = spec.get(f)
        if v is None:
            if f != "reasoning":
                raise BadInput(f"models.{name}: missing {f} (price per million {f} tokens)", path=path, line=line)
            values[f] = None
            continue
        if type(v) not in (int, float) or not math.isfinite(v) or v < 0:
            raise BadInput(f"models.{name}.{f} must be a number >= 0 (per million tokens), got {v!r}",
                           path=path, line=line)
        values[f] = float(v)
    return Price(float(values["input"] or 0.0), float(values["output"] or 0.0), values["reasoning"])


def parse_prices(doc: Mapping[str, Any], *, path: str, text: str = "") -> Prices:
    """A :class:`Prices` from a parsed TOML document (``text``, its source, locates errors to a line)."""
    unknown = sorted(set(doc) - _TOP)
    if unknown:
        raise BadInput(f"unknown top-level field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_TOP))}",
                       path=path, line=_line(text, r"^\s*" + re.escape(unknown[0]) + r"\s*="))
    source = doc.get("source")
    if not isinstance(source, str) or not source.strip():
        raise BadInput("missing source: say where the prices were read (a page or a price list)", path=path)
    date = doc.get("date")
    if isinstance(date, str):
        try:
            date = dt.date.fromisoformat(date)
        except ValueError:
            raise BadInput(f"date must be a date like 2026-11-30, got {date!r}", path=path,
                           line=_line(text, r"^\s*date\s*=")) from None
    if not isinstance(date, dt.date) or isinstance(date, dt.datetime):
        raise BadInput("missing date: the day the prices were read (prices change), e.g. date = 2026-11-30",
                       path=path, line=_line(text, r"^\s*date\s*="))
    currency = doc.get("currency", "USD")
    if not isinstance(currency, str) or not currency.strip():
        raise BadInput(f"currency must be a name such as USD, got {currency!r}", path=path)
    models = doc.get("models")
    if not isinstance(models, dict) or not models:
        raise BadInput("no [models.NAME] table of prices", path=path)
    return Prices(source.strip(), date.isoformat(), currency.strip(),
                  {str(m): _price(str(m), spec, path, text) for m, spec in models.items()}, path)


def read_prices(path: str | Path) -> Prices:
    """Read and check a prices file (:class:`BadInput` naming the file, and the line where it can be found)."""
    from replicate.command_input import is_stdio, read_input
    from replicate.tomlfile import read_toml

    doc = read_toml(path, what="prices file")
    # the text again, to find the line of an error (standard input cannot be read twice: no lines then)
    text = "" if is_stdio(Path(path)) else read_input(Path(path), what="prices file").decode("utf-8", "replace")
    return parse_prices(doc, path=str(path), text=text)
