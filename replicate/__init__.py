"""replicate: audit published LLM-judge and benchmark outputs across model versions.

The package is a typed library with a thin command-line layer (``replicate.cli``).
Pure computation (parsing, alignment, statistics, rendering) is kept apart from
input/output (files, git, HTTP); see ``docs/concepts.md`` for the vocabulary.
"""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("replicate-audit")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
