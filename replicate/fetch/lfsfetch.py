"""LFS objects over the git and http transports: the Git LFS batch API of the source's remote.

A selected file whose blob is a Git LFS pointer names the real content by its
sha256 (``oid``) and size. It is fetched the way ``git lfs`` does, without
running git-lfs or any filter::

    POST {endpoint}/objects/batch     {"operation": "download", "transfers": ["basic"],
                                       "objects": [{"oid": ..., "size": ...}], "hash_algo": "sha256"}
    GET  {actions.download.href}      with the headers the batch answer gives (and only those)

The endpoint is ``{remote}.git/info/lfs`` (git-lfs's default for an https
remote), or what ``--lfs-url`` names; a repository on this machine has none.
Every object is checked against the pointer's size and sha256 before it enters
the cache (``lfs/`` by sha256), and ``--max-size`` applies to the object's size
before anything is downloaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from replicate.errors import Message, Param
from replicate.fetch.cache import Cache
from replicate.fetch.errors import FetchError, OfflineMissing, TransportError
from replicate.fetch.httpfetch import DEFAULT_API, GitHubClient, HttpSettings
from replicate.fetch.manifest import Skipped
from replicate.fetch.plan import lfs_pointer, too_large
from replicate.fetch.safety import LFS_MAX_POINTER, LfsPointer, parse_lfs_pointer
from replicate.fetch.source import Source
from replicate.fetch.tree import TreeEntry

_LFS_JSON = "application/vnd.git-lfs+json"
_BATCH = 100  # objects per batch request (git-lfs sends at most 100)


@dataclass(frozen=True)
class LfsOptions:
    """Whether LFS objects are fetched (``--no-lfs``: no) and from which endpoint (``--lfs-url``)."""

    enabled: bool = True
    url: str | None = None


def lfs_endpoint(src: Source, options: LfsOptions, http: HttpSettings | None) -> str | None:
    """The LFS endpoint of ``src`` (None: none is known, pointers stay unresolved).

    ``--lfs-url`` wins; a GitHub source uses github.com's endpoint only when the
    http transport talks to GitHub itself (a test server or mirror has no known
    LFS endpoint); an https git remote uses ``{remote}.git/info/lfs``; a
    repository on this machine has none.
    """
    if options.url:
        return options.url.rstrip("/")
    if src.kind in ("file", "path"):
        return None
    if src.github is not None and http is not None and http.api_url.rstrip("/") != DEFAULT_API:
        return None
    url = src.git_url.rstrip("/")
    return (url if url.endswith(".git") else url + ".git") + "/info/lfs"


def cached_pointer(cache: Cache, e: TreeEntry) -> LfsPointer | None:
    """The LFS pointer held by the cached blob of ``e``, if it is one."""
    path = cache.object_path(e.sha)
    if path.stat().st_size > LFS_MAX_POINTER:
        return None
    return parse_lfs_pointer(cache.object_head(e.sha, LFS_MAX_POINTER + 1))


def resolve_pointers(
    entries: list[TreeEntry], cache: Cache, *, endpoint: str | None, options: LfsOptions, limit: int,
    allow_large: bool, online: bool, source: str, commit: str,
) -> tuple[list[TreeEntry], list[TreeEntry], list[Skipped]]:
    """Split cached entries into (files to write, LFS objects to download first, skipped).

    A pointer becomes an entry of its LFS object (``lfs`` set, ``size`` the
    object's); it is skipped as ``lfs-pointer`` with ``--no-lfs`` or when no
    endpoint is known, as ``too-large`` when the object is over ``limit``.
    Offline, an object not in the cache is an error naming the files.
    """
    out: list[TreeEntry] = []
    need: list[TreeEntry] = []
    skipped: list[Skipped] = []
    for e in entries:
        ptr = e.lfs if e.lfs is not None else cached_pointer(cache, e)
        if ptr is None:
            out.append(e)
            continue
        pointer_size = cache.object_size(e.sha) if e.lfs is None else None
        if not options.enabled:
            skipped.append(lfs_pointer(e.path, pointer_size, ptr, "--no-lfs"))
            continue
        if endpoint is None and e.lfs is None:
            skipped.append(lfs_pointer(e.path, pointer_size, ptr, "no LFS endpoint known for this source: pass --lfs-url"))
            continue
        if ptr.size > limit and not allow_large:
            skipped.append(too_large(e.path, ptr.size, limit))
            continue
        obj = replace(e, lfs=ptr, size=ptr.size)
        out.append(obj)
        if not cache.has_content(obj) and all(n.lfs != ptr for n in need):
            need.append(obj)
    if need and not online:
        names = ", ".join(e.path for e in need[:20]) + (", ..." if len(need) > 20 else "")
        raise OfflineMissing(Message(
            Param("offline"), f": {len(need)} LFS object(s) of {source} at {commit[:12]} are not in the "
            f"cache: {names}; fetch once online"
        ))
    return out, need, skipped


class LfsClient:
    """The Git LFS batch API (basic transfer) of one endpoint, with the http transport's retries."""

    def __init__(self, endpoint: str, settings: HttpSettings, *, token: str | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 on_retry: Callable[[str], None] | None = None) -> None:
        self.endpoint = endpoint
        self.settings = settings
        self.token = token  # sent to the batch endpoint only, never to the download hrefs
        self.client = GitHubClient(replace(settings, token=None), sleep=sleep, on_retry=on_retry)

    def batch(self, objects: list[TreeEntry]) -> dict[str, tuple[str, dict[str, str]]]:
        """The download href and headers of each object (by oid); an object the server lacks is an error."""
        url = f"{self.endpoint}/objects/batch"
        headers = {"Accept": _LFS_JSON, "Content-Type": _LFS_JSON}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        out: dict[str, tuple[str, dict[str, str]]] = {}
        for i in range(0, len(objects), _BATCH):
            part = objects[i:i + _BATCH]
            body = {"operation": "download", "transfers": ["basic"], "hash_algo": "sha256",
                    "objects": [{"oid": e.lfs.oid, "size": e.lfs.size} for e in part if e.lfs is not None]}
            resp = self.client.request("POST", url, api=False, headers=headers, json=body, refused=_refused,
                                       not_found=lambda: FetchError(
                                           f"POST {url}: HTTP 404, no LFS server there (check --lfs-url, "
                                           "or pass --no-lfs)"))
            try:
                data = resp.json()
            except ValueError:
                raise FetchError(f"POST {url}: the answer is not JSON") from None
            if data.get("transfer", "basic") != "basic":
                raise FetchError(f"POST {url}: the server chose transfer {data.get('transfer')!r}; "
                                 "only the basic transfer is supported")
            answered = {o.get("oid"): o for o in data.get("objects") or [] if isinstance(o, dict)}
            for e in part:
                assert e.lfs is not None
                out[e.lfs.oid] = _action(answered.get(e.lfs.oid), e, url)
        return out

    def download_all(self, objects: list[TreeEntry], cache: Cache, note: Callable[[str, str], None]) -> None:
        """Fetch ``objects`` (entries with ``lfs`` set) into the cache, each checked against its oid."""
        actions = self.batch(objects)
        for i, e in enumerate(objects, 1):
            assert e.lfs is not None
            href, headers = actions[e.lfs.oid]
            note("download", f"{e.path} (LFS object, {i}/{len(objects)})")
            self._download(e, href, headers, cache)

    def _download(self, e: TreeEntry, href: str, headers: dict[str, str], cache: Cache) -> None:
        import requests

        assert e.lfs is not None
        s = self.settings
        last = ""
        for attempt in range(s.retries + 1):
            if attempt:
                self.client.wait_before_retry(attempt, href, last)
            resp = self.client.get(href, api=False, stream=True, headers=headers, not_found=lambda: FetchError(
                f"GET {href}: HTTP 404, the LFS server's download link for {e.path} leads nowhere"))
            try:
                with resp:
                    cache.put_lfs(e.lfs.oid, e.lfs.size, _chunks(resp),
                                  what=f"LFS object of {e.path} (oid sha256:{e.lfs.oid[:12]}...)")
                return
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
                last = f"download interrupted ({type(exc).__name__})"
        raise TransportError(f"GET {href} failed after {s.retries + 1} attempts: {last}")

    def close(self) -> None:
        self.client.session.close()


class LfsStep:
    """One fetch's LFS step: which pointers become objects, and fetching the objects not yet in the cache."""

    def __init__(self, options: LfsOptions, src: Source, http: HttpSettings | None,
                 sleep: Callable[[float], None], note: Callable[[str, str], None], *, online: bool) -> None:
        self.options, self.src, self.sleep, self.note, self.online = options, src, sleep, note, online
        self.http = http or HttpSettings.from_env()
        self.endpoint = lfs_endpoint(src, options, self.http)

    def run(self, entries: list[TreeEntry], cache: Cache, limit: int, allow_large: bool,
            commit: str) -> tuple[list[TreeEntry], list[Skipped]]:
        out, need, skipped = resolve_pointers(
            entries, cache, endpoint=self.endpoint, options=self.options, limit=limit, allow_large=allow_large,
            online=self.online, source=self.src.canonical, commit=commit)
        if need:
            assert self.endpoint is not None
            # GITHUB_TOKEN goes to GitHub's own LFS endpoint only, never to one --lfs-url names
            token = self.http.token if self.src.github is not None and not self.options.url else None
            client = LfsClient(self.endpoint, self.http, token=token, sleep=self.sleep,
                               on_retry=lambda text: self.note("retry", text))
            try:
                client.download_all(need, cache, self.note)
            finally:
                client.close()
        return out, skipped


def _chunks(resp) -> Iterator[bytes]:
    yield from resp.iter_content(chunk_size=1 << 20)


def _refused(status: int) -> str:
    return ("the LFS server refused access (a private repository's LFS objects need a token; or pass --no-lfs "
            "to skip LFS files)")


def _action(obj: dict | None, e: TreeEntry, url: str) -> tuple[str, dict[str, str]]:
    assert e.lfs is not None
    what = f"{e.path} (LFS oid sha256:{e.lfs.oid[:12]}..., {e.lfs.size} bytes)"
    if obj is None:
        raise FetchError(f"POST {url}: the LFS server did not answer for {what}")
    err = obj.get("error")
    if isinstance(err, dict):
        raise FetchError(f"the LFS server has no object for {what}: {err.get('code')} {err.get('message', '')}"
                         "; pass --no-lfs to skip LFS files".replace("  ", " "))
    download = (obj.get("actions") or {}).get("download")
    if not isinstance(download, dict) or not isinstance(download.get("href"), str):
        raise FetchError(f"POST {url}: the LFS server gave no download action for {what}")
    headers = download.get("header") or {}
    return download["href"], {str(k): str(v) for k, v in headers.items()}
