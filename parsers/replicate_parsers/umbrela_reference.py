"""The released umbrela readings transcribed literally from their rule texts (slow, obvious).

Not registered: the reference the fast parsers in :mod:`replicate_parsers.umbrela`
must agree with (property tests) and are timed against (``bench/bench_parsers.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable


def naive_strict(text: str) -> int | None:
    text = str(text).strip()
    n = r"([0-3](?:\.\d+)?)"
    for pattern, take in (
        (r"final\s*score\s*(?:for\s+this\s+passage\s*)?(?:is\s*)?:?\s*[*]*" + n + r"[*]*", "first"),
        (r"overall(?:\s*score)?\s*(?:\(O\))?\s*[:=]\s*[*]*" + n + r"[*]*", "first"),
        (r"(?:^|\n)\s*#{0,6}\s*O\s*(?:\(\s*Final\s+Score\s*\))?\s*[:=]\s*\**" + n + r"\**", "last"),
    ):
        if take == "first":
            m = re.search(pattern, text, re.IGNORECASE)
            found = m.group(1) if m else None
        else:
            all_ = re.findall(pattern, text, re.IGNORECASE)
            found = all_[-1] if all_ else None
        if found is not None:
            value = float(found)
            return int(value) if value.is_integer() else None
    return None


def naive_fallback(text: str) -> int | None:
    text = str(text).strip()
    m = re.search(r"final\s*score:?\s*[*]*([0-3])", text, re.IGNORECASE)
    if m:
        return int(m.group(1))
    found = re.findall(r"\b([0-3])\b", text)
    return int(found[-1]) if found else None


NAIVE: dict[str, Callable[[str], int | None]] = {"umbrela-strict@1": naive_strict, "umbrela-fallback@1": naive_fallback}
