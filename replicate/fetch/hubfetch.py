"""The hub transport: a Hugging Face Hub dataset through ``huggingface_hub``.

``huggingface_hub`` (the Hub's own client) makes every request; the endpoints it calls::

    GET  {endpoint}/api/datasets/{repo}[/revision/{rev}]        commit sha, gated, private, cardData.license
    GET  {endpoint}/api/datasets/{repo}/tree/{sha}?recursive=true   files: oid (git blob id), size, lfs.oid (sha256)
    HEAD {endpoint}/datasets/{repo}/resolve/{sha}/{path}          X-Repo-Commit, ETag / X-Linked-Etag, X-Linked-Size
    GET  the same (or where it redirects)                          the bytes

The revision is resolved once to its full commit sha and every file is asked
for at that sha. An LFS file (every Parquet file, every file over 10 MB) is
checked against the sha256 the tree gives before it enters the cache; any
other file against its git blob id. ``HF_ENDPOINT`` points the client at
another host (tests use 127.0.0.1); ``HF_TOKEN`` is sent when the user has
one, never stored or printed. A gated
dataset without a token, and any refusal of the Hub, is an error giving the
Hub's reason. huggingface_hub's telemetry is switched off, and it writes
nothing outside replicate's cache (its downloads go to a temporary folder
there, no token saved on disk is read).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.fetch.cache import Cache, read_blocks
from replicate.fetch.errors import (
    FetchError,
    PathNotFound,
    RateLimited,
    RepositoryNotFound,
    RevisionNotFound,
    TransportError,
)
from replicate.fetch.manifest import RepositoryMeta
from replicate.fetch.safety import LfsPointer
from replicate.fetch.source import Source
from replicate.fetch.tree import TreeEntry

DEFAULT_ENDPOINT = "https://huggingface.co"


@dataclass(frozen=True)
class HubSettings:
    """Where the Hub is and the user's token (sent, never printed)."""

    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    timeout: float = 30.0

    def __repr__(self) -> str:  # keep the token out of reprs and tracebacks
        return (f"HubSettings(endpoint={self.endpoint!r}, token={'***' if self.token else None}, "
                f"timeout={self.timeout})")

    @classmethod
    def from_env(cls, **overrides: Any) -> HubSettings:
        """Settings from HF_ENDPOINT and HF_TOKEN (read now, not when huggingface_hub was imported)."""
        values: dict[str, Any] = {
            "endpoint": (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            "token": os.environ.get("HF_TOKEN") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def _hub():
    try:
        import huggingface_hub
        from huggingface_hub import constants
    except ImportError:  # a dependency; missing only in a broken install
        raise TransportError("the hub transport needs huggingface_hub (pip install huggingface_hub)") from None
    # No telemetry: huggingface_hub would otherwise fetch an "agent harnesses" registry from its default
    # endpoint (whatever HF_ENDPOINT says now) and write it under HF_HOME, outside replicate's cache.
    constants.HF_HUB_DISABLE_TELEMETRY = True
    return huggingface_hub


class HubTransport:
    via = "hub"

    def __init__(self, source: Source, settings: HubSettings, *, bars: bool = False) -> None:
        if source.hub is None:
            raise ValueError("HubTransport needs a Hub source")
        self.source = source
        self.repo_id = source.hub
        self.settings = settings
        self.bars = bars  # huggingface_hub's own progress bars on stderr
        self._info: Any = None
        self._api: Any = None

    def _token(self) -> str | bool:
        # HF_TOKEN only: False keeps huggingface_hub from sending a token saved on disk by other tools.
        return self.settings.token or False

    def open(self) -> None:
        hub = _hub()
        self._api = hub.HfApi(endpoint=self.settings.endpoint, token=self._token())

    def _call(self, what: str, fn: Callable[[], Any], *, rev: str | None = None, path: str | None = None) -> Any:
        """Run one huggingface_hub call, turning its errors into fetch errors that say what to do."""
        from huggingface_hub import errors as hub_errors

        name = f"dataset {self.repo_id}"
        try:
            return fn()
        except hub_errors.GatedRepoError:
            raise FetchError(
                f"{name} is gated on the Hub and {'your token has not been granted access' if self.settings.token else 'no token was given'}: "
                f"accept its conditions on {self._page()} and set HF_TOKEN to a token of that account"
            ) from None
        except hub_errors.DisabledRepoError:
            raise FetchError(f"{name} has been disabled on the Hub: its files cannot be fetched") from None
        except hub_errors.RevisionNotFoundError:
            raise RevisionNotFound(f"{name} has no revision {rev!r} on the Hub (branch, tag or commit)") from None
        except hub_errors.RemoteEntryNotFoundError:
            raise PathNotFound(f"{name}: {path} is listed in the tree but the Hub has no such file") from None
        except hub_errors.RepositoryNotFoundError:
            raise RepositoryNotFound(
                f"{name} not found on the Hub at {self.settings.endpoint} (check the name; a private dataset "
                "needs HF_TOKEN of an account that can read it)"
            ) from None
        except hub_errors.HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            if status == 429:
                raise RateLimited(f"rate limited by the Hub (HTTP 429) on {what}; wait, or set HF_TOKEN "
                                  "for a higher limit") from None
            if status == 401:
                raise FetchError(f"{what}: HTTP 401, the Hub refused the token in HF_TOKEN") from None
            if status == 403:
                raise FetchError(f"{what}: HTTP 403, the Hub refused access to {name}") from None
            raise TransportError(f"{what} failed for {name}: HTTP {status}") from None
        except OSError as exc:  # connection refused, timeouts (httpx errors are not OSErrors: below)
            raise TransportError(f"{what} failed for {name}: {type(exc).__name__}: {exc}") from None
        except Exception as exc:
            if type(exc).__module__.split(".")[0].startswith("httpx"):
                raise TransportError(f"{what} failed for {name}: cannot reach {self.settings.endpoint} "
                                     f"({type(exc).__name__})") from None
            raise

    def _page(self) -> str:
        return f"{self.settings.endpoint}/datasets/{self.repo_id}"

    def resolve(self, rev: str | None) -> str:
        info = self._call("GET dataset info", lambda: self._api.dataset_info(
            self.repo_id, revision=rev, timeout=self.settings.timeout), rev=rev)
        sha = getattr(info, "sha", None)
        if not isinstance(sha, str) or len(sha) != 40:
            raise FetchError(f"dataset {self.repo_id}: the Hub's answer has no 40-hex commit 'sha'")
        gated = getattr(info, "gated", False)
        if gated and not self.settings.token:
            raise FetchError(
                f"dataset {self.repo_id} is gated on the Hub ({gated} approval): its files need an accepted "
                f"access request; accept its conditions on {self._page()} and set HF_TOKEN to a token of that "
                "account (a token is sent, never stored or printed)"
            )
        self._info = info
        return sha

    def repository(self) -> RepositoryMeta:
        info = self._info
        card = getattr(info, "card_data", None)
        licence = getattr(card, "license", None) if card is not None else None
        if isinstance(licence, list):
            licence = ", ".join(map(str, licence)) or None
        created = getattr(info, "created_at", None)
        return RepositoryMeta(
            "hf-api",
            "main",  # the Hub's repositories all have main as their default branch
            created.strftime("%Y-%m-%dT%H:%M:%SZ") if created is not None else None,
            str(licence) if licence is not None else None,
            description=getattr(card, "pretty_name", None) if card is not None else None,
        )

    def list_tree(self, commit: str, includes) -> tuple[list[TreeEntry], bool]:
        from huggingface_hub.hf_api import RepoFile

        def listing() -> list:
            return list(self._api.list_repo_tree(self.repo_id, recursive=True, revision=commit,
                                                 repo_type="dataset"))

        out = []
        for item in self._call("GET tree", listing, rev=commit):
            if not isinstance(item, RepoFile):
                continue
            lfs = LfsPointer(item.lfs.sha256, int(item.lfs.size)) if item.lfs is not None else None
            out.append(TreeEntry(item.path, "100644", item.blob_id, int(item.size), lfs))
        return out, True

    def prepare(self, entries: list[TreeEntry]) -> dict[str, int]:
        return {e.sha: e.size for e in entries if e.size is not None}

    def download_all(self, entries: list[TreeEntry], cache: Cache, commit: str,
                     note: Callable[[str, str], None]) -> None:
        """Download ``entries`` at ``commit`` through ``hf_hub_download``, each checked before it enters the cache."""
        for i, e in enumerate(entries, 1):
            note("download", f"{e.path} ({i}/{len(entries)})")
            self.download(e, cache, commit)

    def download(self, e: TreeEntry, cache: Cache, commit: str) -> None:
        hub = _hub()
        work = cache.root / "tmp"
        work.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="hub-", dir=work))
        try:
            got = self._call(f"GET {e.path}", lambda: hub.hf_hub_download(
                self.repo_id, e.path, repo_type="dataset", revision=commit, local_dir=tmp / "files",
                cache_dir=tmp / "hf-cache", endpoint=self.settings.endpoint, token=self._token(),
                etag_timeout=self.settings.timeout, tqdm_class=None if self.bars else quiet_bars(),
            ), rev=commit, path=e.path)
            what = f"{self.settings.endpoint}/datasets/{self.repo_id}/resolve/{commit[:12]}/{e.path}"
            if e.lfs is not None:
                cache.put_lfs(e.lfs.oid, e.lfs.size, read_blocks(Path(got)), what=what)
            else:
                cache.put_object(e.sha, e.size or 0, read_blocks(Path(got)), what=what)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def close(self) -> None:
        self._api = None


def _quiet_class() -> Any:
    from tqdm.auto import tqdm

    class Quiet(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return Quiet


_QUIET: list[Any] = []


def quiet_bars() -> Any:
    """The tqdm class that draws nothing (huggingface_hub's ``tqdm_class`` when bars are off)."""
    if not _QUIET:
        _QUIET.append(_quiet_class())
    return _QUIET[0]
