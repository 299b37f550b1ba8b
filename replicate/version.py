"""The installed distribution's version, for the modules that record it (kept apart from the package's
``__init__``, which names every public module: a module importing the version from there would sit in an
import circle with it)."""

from __future__ import annotations

from functools import cache


@cache
def tool_version() -> str:
    """The installed distribution's version (looked up on first use: importlib.metadata costs start-up time)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("replicate-audit")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"
