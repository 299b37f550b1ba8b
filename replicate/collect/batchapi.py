"""The provider's Files and Batches endpoints (OpenAI's shapes) over the collection's HTTP client."""

from __future__ import annotations

from typing import Any

import requests

from replicate.collect.batchfile import CHAT_URL
from replicate.collect.client import ChatClient, PermanentFault

#: a batch in one of these states will not change any more
TERMINAL = ("completed", "failed", "expired", "cancelled")


class BatchAPI:
    """Upload, create, get, list, cancel, download: every call over the client's session (key, proxies, CA).

    A transport error or a non-200 answer is a :class:`PermanentFault` naming the call, the key scrubbed.
    """

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.root = client.base_url.rstrip("/")

    def _call(self, method: str, path: str, **kw: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.client._key()}"}
        try:
            r = self.client.session.request(method, self.root + path, headers=headers,
                                            timeout=(self.client.connect_timeout, self.client.timeout), **kw)
        except requests.RequestException as exc:
            raise PermanentFault("connection", self.client.scrub(f"{method} {path}: {type(exc).__name__}")) from None
        if r.status_code != 200:
            info = self.client._error_info(r.content, r.status_code)
            raise PermanentFault(f"http_{r.status_code}", f"{method} {path}: {info.message}")
        return r

    def upload(self, blob: bytes) -> str:
        r = self._call("POST", "/files", files={"file": ("requests.jsonl", blob, "application/jsonl")},
                       data={"purpose": "batch"})
        return str(r.json()["id"])

    def create(self, file_id: str, window: str) -> dict[str, Any]:
        return dict(self._call("POST", "/batches", json={"input_file_id": file_id, "endpoint": CHAT_URL,
                                                          "completion_window": window}).json())

    def get(self, batch_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/batches/{batch_id}").json())

    def cancel(self, batch_id: str) -> dict[str, Any]:
        """Ask the provider to cancel a batch; it answers ``cancelling`` and ends it ``cancelled`` later.

        A batch that ended meanwhile, or is already being cancelled (an earlier cancel that stopped at its
        deadline), is refused by the provider: its current state is returned instead, so the caller polls and
        imports it like any other.
        """
        try:
            return dict(self._call("POST", f"/batches/{batch_id}/cancel").json())
        except PermanentFault:
            batch = self.get(batch_id)
            if batch.get("status") in (*TERMINAL, "cancelling"):
                return batch
            raise

    def find_by_input(self, file_id: str) -> dict[str, Any] | None:
        """The batch created from the upload ``file_id``, if any: every page of the provider's list, newest first.

        (A run killed between upload and create asks this before creating: a batch missed here would be
        created twice.) A provider that pages back to a batch already seen is not followed further.
        """
        params: dict[str, Any] = {"limit": 100}
        seen: set[str] = set()
        while True:
            page = self._call("GET", "/batches", params=params).json()
            data = page.get("data") or []
            found = next((b for b in data if b.get("input_file_id") == file_id), None)
            if found is not None:
                return dict(found)
            ids = [str(b.get("id")) for b in data]
            if not page.get("has_more") or not ids or ids[-1] in seen:
                return None
            seen.update(ids)
            params = {"limit": 100, "after": ids[-1]}

    def content(self, file_id: str) -> bytes:
        return self._call("GET", f"/files/{file_id}/content").content
