"""The one backoff formula and the one Retry-After parser of every HTTP client here (the collector's, fetch's).

Standard library only.
"""

from __future__ import annotations

import email.utils
import time


def backoff(retry: int, *, base: float, cap: float) -> float:
    """Seconds before retry number ``retry`` (1-based): ``base`` doubled each time, at most ``cap``."""
    return min(cap, base * 2.0 ** min(max(retry - 1, 0), 64))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds (fractions accepted) or an HTTP date; None when the
    header is missing or unreadable (NaN and infinity included). Never negative."""
    if not value:
        return None
    value = value.strip()
    try:
        secs = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        secs = when.timestamp() - (time.time() if now is None else now)
    if secs != secs or secs in (float("inf"), float("-inf")):
        return None
    return max(0.0, secs)
