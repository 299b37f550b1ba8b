"""Errors of ``replicate fetch``: each names what failed and what to do about it.

All derive from :class:`replicate.errors.ReplicateError`, so the command line
prints them as ``Error: ...`` and exits with code 2 (1 for a failed check).
"""

from __future__ import annotations

from replicate.errors import ReplicateError


class FetchError(ReplicateError):
    """A fetch could not be completed."""

    exit_code = 2


class RepositoryNotFound(FetchError):
    """The host has no repository of that name (or it is private and no token was given)."""


class RevisionNotFound(FetchError):
    """The repository has no commit, branch or tag of that name."""


class PathNotFound(FetchError):
    """A file listed in the tree is missing at the raw-file address."""


class RateLimited(FetchError):
    """The host refused the request because of rate limiting (403/429)."""

    def __init__(self, message: str, *, reset_at: str | None = None) -> None:
        self.reset_at = reset_at
        super().__init__(message)


class TransportError(FetchError):
    """A network or git operation failed after its retries."""


class IntegrityError(FetchError):
    """Downloaded bytes do not match the hash or size the host listed."""


class OfflineMissing(FetchError):
    """``--offline`` was given and the cache lacks something the fetch needs."""
