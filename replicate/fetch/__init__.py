"""``replicate fetch``: released files from public repositories, pinned and verified.

The library entry points are :func:`fetch` and :func:`check`; the command line
in :mod:`replicate.cli.fetch_cmds` is a thin layer over them.
"""

from replicate.fetch.api import DEFAULT_MAX_SIZE, FetchResult, check, fetch
from replicate.fetch.errors import (
    FetchError,
    IntegrityError,
    OfflineMissing,
    PathNotFound,
    RateLimited,
    RepositoryNotFound,
    RevisionNotFound,
    TransportError,
)
from replicate.fetch.httpfetch import HttpSettings
from replicate.fetch.manifest import CheckResult, FileEntry, Manifest, RepositoryMeta, Skipped, read_manifest
from replicate.fetch.source import Source, parse_source

__all__ = [
    "DEFAULT_MAX_SIZE", "CheckResult", "FetchError", "FetchResult", "FileEntry", "HttpSettings",
    "IntegrityError", "Manifest", "OfflineMissing", "PathNotFound", "RateLimited",
    "RepositoryMeta", "RepositoryNotFound", "RevisionNotFound", "Skipped", "Source",
    "TransportError", "check", "fetch", "parse_source", "read_manifest",
]
