"""The http transport: GitHub's REST API for metadata, commit and tree; raw files by commit.

Endpoints (base URLs from :class:`HttpSettings`; tests point them at 127.0.0.1)::

    GET {api}/repos/{owner}/{repo}                      default_branch, created_at, license
    GET {api}/repos/{owner}/{repo}/commits/{rev}        rev -> full commit id and tree id
    GET {api}/repos/{owner}/{repo}/git/trees/{sha}?recursive=1
    GET {raw}/{owner}/{repo}/{commit}/{path}            file contents

Timeouts, connection errors and 5xx answers are retried with exponential
backoff; 404s and rate limits (403/429) raise distinct errors at once.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from replicate.errors import Message, Param
from replicate.fetch.cache import Cache
from replicate.fetch.errors import (
    FetchError,
    IntegrityError,
    PathNotFound,
    RateLimited,
    RepositoryNotFound,
    RevisionNotFound,
    TransportError,
)
from replicate.fetch.manifest import RepositoryMeta
from replicate.fetch.safety import LFS_MAX_POINTER
from replicate.fetch.source import Source
from replicate.fetch.tree import TreeEntry
from replicate.retry import backoff, parse_retry_after

DEFAULT_API = "https://api.github.com"
DEFAULT_RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class HttpSettings:
    """How the http transport talks to the host. ``token`` is sent, never printed."""

    api_url: str = DEFAULT_API
    raw_url: str = DEFAULT_RAW
    token: str | None = None
    timeout: float = 30.0
    retries: int = 4  # further attempts after the first
    backoff: float = 0.5  # seconds before the first retry; doubles each time
    max_backoff: float = 30.0
    jobs: int = 8  # raw files downloaded at the same time

    def __repr__(self) -> str:  # keep the token out of reprs and tracebacks
        return (f"HttpSettings(api_url={self.api_url!r}, raw_url={self.raw_url!r}, "
                f"token={'***' if self.token else None}, timeout={self.timeout}, "
                f"retries={self.retries}, backoff={self.backoff}, jobs={self.jobs})")

    @classmethod
    def from_env(cls, **overrides) -> HttpSettings:
        """Settings from REPLICATE_GITHUB_API, REPLICATE_GITHUB_RAW and GITHUB_TOKEN;
        keyword arguments that are not None win."""
        values: dict[str, Any] = {
            "api_url": os.environ.get("REPLICATE_GITHUB_API") or DEFAULT_API,
            "raw_url": os.environ.get("REPLICATE_GITHUB_RAW") or DEFAULT_RAW,
            "token": os.environ.get("GITHUB_TOKEN") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        values["api_url"] = values["api_url"].rstrip("/")
        values["raw_url"] = values["raw_url"].rstrip("/")
        return cls(**values)


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rate_limit_error(resp, url: str, *, now: float | None = None) -> RateLimited:
    """The error for a 403/429 rate-limit answer, with the reset time the host sent."""
    now = time.time() if now is None else now
    reset_at = None
    hint = ""
    secs = parse_retry_after(resp.headers.get("Retry-After"), now=now)
    reset = resp.headers.get("X-RateLimit-Reset")
    if secs is not None:
        reset_at = _when(now + secs)
        hint = f"retry after {secs:g} s ({reset_at})"
    elif reset and re.fullmatch(r"[0-9]{1,12}", reset.strip()):  # epoch seconds; not "²", not 10**30
        reset_at = _when(int(reset))
        mins = max(0, int(reset) - int(now)) // 60
        hint = f"the limit resets at {reset_at} (in about {mins} min)"
    else:
        hint = "the host gave no reset time"
    return RateLimited(
        f"rate limited by the host (HTTP {resp.status_code}) on GET {url}: {hint}; "
        "set GITHUB_TOKEN for a higher limit",
        reset_at=reset_at,
    )


def _is_rate_limited(resp) -> bool:
    if resp.status_code == 429:
        return True
    return resp.status_code == 403 and (
        resp.headers.get("X-RateLimit-Remaining") == "0" or "Retry-After" in resp.headers
    )


class GitHubClient:
    """GET with retries and GitHub-specific error mapping."""

    def __init__(self, settings: HttpSettings, *, sleep: Callable[[float], None] = time.sleep,
                 on_retry: Callable[[str], None] | None = None) -> None:
        import requests

        from replicate.version import tool_version

        self.settings = settings
        self.sleep = sleep
        self.on_retry = on_retry  # told before each retry what failed and how long it waits
        self.session = requests.Session()
        self.session.headers["User-Agent"] = f"replicate/{tool_version()}"
        pool = max(10, settings.jobs)
        for scheme in ("http://", "https://"):
            self.session.mount(scheme, requests.adapters.HTTPAdapter(pool_connections=pool, pool_maxsize=pool))

    def _headers(self, api: bool) -> dict[str, str]:
        h = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"} if api else {}
        if self.settings.token:
            h["Authorization"] = f"Bearer {self.settings.token}"
        return h

    def get(self, url: str, *, api: bool, not_found: Callable[[], FetchError], stream: bool = False,
            headers: dict[str, str] | None = None):
        """GET ``url``; retry transient failures; raise ``not_found()`` on 404 (and 422)."""
        return self.request("GET", url, api=api, not_found=not_found, stream=stream, headers=headers)

    def request(self, method: str, url: str, *, api: bool, not_found: Callable[[], FetchError],
                stream: bool = False, headers: dict[str, str] | None = None, json: Any = None,
                refused: Callable[[int], str] | None = None):
        """``method`` ``url`` (``headers`` added, ``json`` as the body); retry transient failures; raise
        ``not_found()`` on 404 (and 422); ``refused(status)`` words a 401 or 403 (default: GitHub's)."""
        import requests

        s = self.settings
        last = ""
        for attempt in range(s.retries + 1):
            if attempt:
                self.wait_before_retry(attempt, url, last, method=method)
            try:
                resp = self.session.request(method, url, headers={**self._headers(api), **(headers or {})},
                                            json=json, timeout=s.timeout, stream=stream)
            except requests.Timeout:
                last = f"no answer within {s.timeout:g} s"
                continue
            except requests.ConnectionError as exc:
                last = f"connection failed ({type(exc).__name__})"
                continue
            if resp.status_code >= 500:
                last = f"HTTP {resp.status_code}"
                resp.close()
                continue
            if resp.status_code in (404, 410, 422):
                resp.close()
                raise not_found()
            if _is_rate_limited(resp):
                resp.close()
                raise rate_limit_error(resp, url)
            if resp.status_code in (401, 403) and refused is not None:
                resp.close()
                raise FetchError(f"{method} {url}: HTTP {resp.status_code}, {refused(resp.status_code)}")
            if resp.status_code == 401:
                raise FetchError(f"{method} {url}: HTTP 401, the token in GITHUB_TOKEN was refused")
            if resp.status_code == 403:
                raise FetchError(
                    f"{method} {url}: HTTP 403 forbidden (a private repository needs GITHUB_TOKEN)"
                )
            if resp.status_code != 200:
                raise FetchError(f"{method} {url}: unexpected HTTP {resp.status_code}")
            return resp
        raise TransportError(f"{method} {url} failed after {s.retries + 1} attempts: {last}")

    def wait_before_retry(self, attempt: int, url: str, last: str, *, method: str = "GET") -> None:
        """Sleep the backoff of retry ``attempt`` (1-based), saying first what failed and how long it waits."""
        s = self.settings
        delay = backoff(attempt, base=s.backoff, cap=s.max_backoff)
        if self.on_retry is not None:
            self.on_retry(f"{method} {url}: {last}; retry {attempt} of {s.retries} in {delay:g} s")
        self.sleep(delay)

    def get_json(self, url: str, *, not_found: Callable[[], FetchError]) -> dict:
        resp = self.get(url, api=True, not_found=not_found)
        try:
            data = resp.json()
        except ValueError:
            raise FetchError(f"GET {url}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise FetchError(f"GET {url}: expected a JSON object, got {type(data).__name__}")
        return data


class HttpTransport:
    via = "http"

    def __init__(self, source: Source, settings: HttpSettings, *,
                 sleep: Callable[[float], None] = time.sleep, on_retry: Callable[[str], None] | None = None) -> None:
        if source.github is None:
            raise ValueError("HttpTransport needs a GitHub source")
        self.source = source
        self.owner, self.repo = source.github
        self.client = GitHubClient(settings, sleep=sleep, on_retry=on_retry)
        self.settings = settings
        self._meta: dict = {}
        self._tree_sha: dict[str, str] = {}

    @property
    def _base(self) -> str:
        return f"{self.settings.api_url}/repos/{quote(self.owner)}/{quote(self.repo)}"

    def _no_repo(self) -> FetchError:
        return RepositoryNotFound(
            f"repository {self.owner}/{self.repo} not found on the host "
            "(check the name; a private repository needs GITHUB_TOKEN)"
        )

    def open(self) -> None:
        self._meta = self.client.get_json(self._base, not_found=self._no_repo)

    def repository(self) -> RepositoryMeta:
        lic = self._meta.get("license")
        licence = None if lic is None else (lic.get("spdx_id") or "NOASSERTION") if isinstance(lic, dict) else str(lic)
        return RepositoryMeta(
            "github-api",
            self._meta.get("default_branch"),
            self._meta.get("created_at"),
            licence,
            description=self._meta.get("description"),
        )

    def resolve(self, rev: str | None) -> str:
        name = rev if rev is not None else self._meta.get("default_branch")
        if not name:
            raise RevisionNotFound(Message(f"{self.owner}/{self.repo}: the host names no default branch; pass ",
                                           Param("rev")))
        url = f"{self._base}/commits/{quote(name, safe='')}"
        data = self.client.get_json(url, not_found=lambda: RevisionNotFound(
            f"{self.owner}/{self.repo} has no commit, branch or tag {name!r}"))
        sha = data.get("sha")
        tree = ((data.get("commit") or {}).get("tree") or {}).get("sha")
        if not isinstance(sha, str) or len(sha) != 40:
            raise FetchError(f"GET {url}: the answer has no 40-hex 'sha'")
        if isinstance(tree, str):
            self._tree_sha[sha] = tree
        return sha

    def _tree(self, sha: str, recursive: bool) -> dict:
        url = f"{self._base}/git/trees/{sha}" + ("?recursive=1" if recursive else "")
        return self.client.get_json(url, not_found=lambda: RevisionNotFound(
            f"{self.owner}/{self.repo}: tree {sha} not found"))

    def list_tree(self, commit: str, includes) -> tuple[list[TreeEntry], bool]:
        """All files at ``commit``. When the host truncates the recursive listing,
        walk directory by directory, entering only those the include globs can match;
        the second value is False then (the listing covers only those directories)."""
        root = self._tree_sha.get(commit, commit)
        data = self._tree(root, True)
        if not data.get("truncated"):
            return _entries(data, ""), True
        out: list[TreeEntry] = []
        self._walk(root, "", includes, out, data=self._tree(root, False))
        return out, False

    def _walk(self, sha: str, prefix: str, includes, out: list[TreeEntry], *, data: dict | None = None) -> None:
        if data is None:
            data = self._tree(sha, True)
            if not data.get("truncated"):
                out.extend(_entries(data, prefix))
                return
            data = self._tree(sha, False)
        if data.get("truncated"):
            raise FetchError(Message(
                f"{self.owner}/{self.repo}: the host truncated even the listing of directory "
                f"{prefix or '/'}; it cannot be fetched over http, try ", Param("via"), " git"
            ))
        for item in data.get("tree", []):
            path = prefix + item["path"]
            if item.get("type") == "tree":
                if includes.may_contain(path):
                    self._walk(item["sha"], path + "/", includes, out)
            else:
                out.extend(_entries({"tree": [item]}, prefix))

    def prepare(self, entries: list[TreeEntry]) -> dict[str, int]:
        return {e.sha: e.size for e in entries if e.size is not None}

    def raw_url(self, commit: str, path: str) -> str:
        quoted = "/".join(quote(p, safe="") for p in path.split("/"))
        return f"{self.settings.raw_url}/{quote(self.owner)}/{quote(self.repo)}/{commit}/{quoted}"

    def download_all(self, entries: list[TreeEntry], cache: Cache, commit: str,
                     note: Callable[[str, str], None]) -> None:
        """Download ``entries`` into the cache, ``settings.jobs`` at a time.

        The first failure stops the downloads not yet started and is raised.
        """
        from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

        if self.settings.jobs <= 1 or len(entries) <= 1:
            for i, e in enumerate(entries, 1):
                note("download", f"{e.path} ({i}/{len(entries)})")
                self.download(e, cache, commit)
            return
        with ThreadPoolExecutor(max_workers=self.settings.jobs) as pool:
            futures = [pool.submit(self.download, e, cache, commit) for e in entries]
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for f in pending:
                f.cancel()
            for f in futures:
                error = f.exception() if f in done else None
                if error is not None:
                    raise error
            for i, e in enumerate(entries, 1):
                note("downloaded", f"{e.path} ({i}/{len(entries)})")

    def download(self, entry: TreeEntry, cache: Cache, commit: str) -> None:
        import requests

        url = self.raw_url(commit, entry.path)
        s = self.settings
        last = ""
        for attempt in range(s.retries + 1):
            if attempt:
                self.client.wait_before_retry(attempt, url, last)
            resp = self.client.get(url, api=False, stream=True, not_found=lambda: PathNotFound(
                f"{self.owner}/{self.repo}@{commit}: {entry.path} listed in the tree but not found at {url}"))
            try:
                with resp:
                    cache.put_object(entry.sha, entry.size or 0, _chunks(resp), what=f"GET {url}")
                return
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
                last = f"download interrupted ({type(exc).__name__})"
            except IntegrityError as exc:
                if entry.size is not None and entry.size <= LFS_MAX_POINTER:
                    raise IntegrityError(Message(
                        f"{exc} (a small blob answered with other bytes: the host may have served "
                        "Git LFS content in place of the pointer; try ", Param("via"), " git)"
                    )) from None
                raise
        raise TransportError(f"GET {url} failed after {s.retries + 1} attempts: {last}")

    def close(self) -> None:
        self.client.session.close()


def _chunks(resp) -> Iterator[bytes]:
    yield from resp.iter_content(chunk_size=1 << 20)


def _entries(data: dict, prefix: str) -> list[TreeEntry]:
    out = []
    for item in data.get("tree", []):
        kind = item.get("type")
        if kind == "tree":
            continue
        size = item.get("size")
        out.append(TreeEntry(prefix + item["path"], str(item.get("mode", "100644")), item["sha"],
                             int(size) if isinstance(size, int) else None))
    return out
