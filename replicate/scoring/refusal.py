"""Versioned refusal detectors for responses where the API's refusal field is empty.

A detector is consulted only when the scorer found no answer: a response that
contains a usable answer is scored on that answer, whatever else it says.
``refusal-phrases@1`` fires when the first 300 characters of the response
(lower-cased, curly quotes straightened) contain one of the phrases in
:data:`PHRASES_V1`. The list is frozen: a change is ``refusal-phrases@2``.
"""

from __future__ import annotations

from typing import Callable

PHRASES_V1 = (
    "i can't help with",
    "i cannot help with",
    "i can't assist with",
    "i cannot assist with",
    "i can't provide",
    "i cannot provide",
    "i won't be able to help",
    "i'm not able to help",
    "i am not able to help",
    "i'm unable to help",
    "i am unable to help",
    "i'm sorry, but i can't",
    "i'm sorry, but i cannot",
    "i must decline",
    "i can't comply",
    "i cannot comply",
)


def refusal_phrases_v1(text: str | None) -> bool:
    if not text:
        return False
    head = text[:300].lower().replace("\u2019", "'")
    return any(p in head for p in PHRASES_V1)


#: Detectors by versioned name.
REFUSAL_DETECTORS: dict[str, Callable[[str | None], bool]] = {"refusal-phrases@1": refusal_phrases_v1}


def get_detector(name: str) -> Callable[[str | None], bool]:
    from replicate.errors import UsageError

    try:
        return REFUSAL_DETECTORS[name]
    except KeyError:
        raise UsageError(
            f"unknown refusal detector {name!r}; available: {', '.join(REFUSAL_DETECTORS)}, none"
        ) from None
