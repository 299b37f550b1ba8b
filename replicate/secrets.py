"""The secrets this process holds (API keys read from the environment), scrubbed from every message.

A module that reads a secret calls :func:`remember`; :func:`scrub` replaces each remembered secret, and
its percent-encoded forms, by ``[API key]`` wherever it sits: in a URL's path (``http://host/<key>/v1``),
userinfo or query, in a header echoed back, in a server's error body. The command line passes everything
it prints (results, warnings, errors) through :func:`scrub`; the collector's archive records get the same
replacement (:func:`replicate.collect.archive.scrub_value`). Standard library only.
"""

from __future__ import annotations

from urllib.parse import quote

#: A secret shorter than this is not scrubbed (it would cut into ordinary text; no API key is so short).
MIN_SECRET = 8
SCRUBBED = "[API key]"

_forms: set[str] = set()


def forms(secret: str) -> set[str]:
    """``secret`` as it may appear in text: as is, and percent-encoded as in a URL path or query."""
    return {secret, quote(secret, safe=""), quote(secret, safe="/"), quote(secret, safe="/:@")} - {""}


def remember(secret: str | None) -> None:
    """Scrub ``secret`` from every message from now on (ignored when shorter than :data:`MIN_SECRET`)."""
    secret = (secret or "").strip()
    if len(secret) >= MIN_SECRET:
        _forms.update(forms(secret))


def scrub(text: str, *extra: str | None) -> str:
    """``text`` with every remembered secret (and each of ``extra``) replaced by ``[API key]``."""
    found = set(_forms)
    for s in extra:
        s = (s or "").strip()
        if len(s) >= MIN_SECRET:
            found |= forms(s)
    for form in sorted(found, key=len, reverse=True):  # a longer form first: one may contain another
        if form in text:
            text = text.replace(form, SCRUBBED)
    return text
