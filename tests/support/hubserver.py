"""A Hugging Face Hub-shaped HTTP server on 127.0.0.1 for one small dataset repository, and a Git LFS server.

The Hub part answers exactly what ``huggingface_hub`` asks when ``replicate
fetch hf://datasets/ORG/NAME`` runs (read from huggingface_hub's own source:
``HfApi.dataset_info``, ``HfApi.list_repo_tree``, ``hf_hub_download``)::

    GET  /api/datasets/{repo}                      and  /api/datasets/{repo}/revision/{rev}
    GET  /api/datasets/{repo}/tree/{rev}?recursive=True&expand=False
    HEAD /datasets/{repo}/resolve/{rev}/{path}     X-Repo-Commit, ETag (git blob id) or
                                                   X-Linked-Etag (sha256) + X-Linked-Size for LFS files
    GET  /datasets/{repo}/resolve/{rev}/{path}

The repository is recorded as the Hub lists one: for every file its git blob
id (``oid``: for an LFS file the id of its pointer blob), its size and, for
LFS files, ``lfs.oid`` (sha256) and ``lfs.pointerSize``. Errors come the way
the Hub sends them (``X-Error-Code: RepoNotFound``, ``RevisionNotFound``,
``GatedRepo``), so huggingface_hub raises its own exceptions.

The LFS part answers the Git LFS batch API (basic transfer)::

    POST /lfs/{name}/objects/batch      {"operation": "download", "objects": [{"oid", "size"}]}
    GET  /lfs-objects/{oid}             the object (needs the header the batch answer gave)
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from support.server import QuietHandler, Served


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    return (b"version https://git-lfs.github.com/spec/v1\n"
            b"oid sha256:" + hashlib.sha256(data).hexdigest().encode() + b"\n"
            b"size %d\n" % len(data))


CARD = b"""---
license: cc-by-4.0
pretty_name: Small details release
---
# Small details release

Per-sample details of two models.
"""


def recorded_files() -> dict[str, bytes]:
    """The small repository's files at its main commit."""
    return {
        ".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n",
        "README.md": CARD,
        "results/results_2024-05-01.json": b'{"results": {"arc": {"acc": 0.5}}}\n',
        "details/model_a/details_arc_2024-05-01.parquet": b"PAR1" + bytes(range(256)) * 40 + b"PAR1",
        "details/model_b/details_arc_2024-05-01.parquet": b"PAR1" + bytes(range(255, -1, -1)) * 30 + b"PAR1",
    }


LFS_GLOBS = (".parquet",)


@dataclass
class HubRevision:
    sha: str
    files: dict[str, bytes]

    def is_lfs(self, path: str) -> bool:
        return path.endswith(LFS_GLOBS)

    def tree(self) -> list[dict]:
        """The Hub's recursive tree listing: directories, then files with oid, size and lfs."""
        dirs = sorted({"/".join(p.split("/")[:i]) for p in self.files for i in range(1, p.count("/") + 1)})
        out: list[dict] = [{"type": "directory", "oid": git_blob_id(d.encode()), "size": 0, "path": d}
                           for d in dirs]
        for path, data in sorted(self.files.items()):
            if self.is_lfs(path):
                pointer = lfs_pointer(data)
                out.append({"type": "file", "oid": git_blob_id(pointer), "size": len(data), "path": path,
                            "lfs": {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                                    "pointerSize": len(pointer)}})
            else:
                out.append({"type": "file", "oid": git_blob_id(data), "size": len(data), "path": path})
        return out


@dataclass
class FakeHub(Served):
    repo_id: str = "org/details"
    revisions: dict[str, HubRevision] = field(default_factory=dict)  # branch or tag -> revision
    gated: str | bool = False
    private: bool = False
    granted: bool = True  # a gated dataset: whether the token's account was granted access
    licence: str | list | None = "cc-by-4.0"
    tampered: dict[str, bytes] = field(default_factory=dict)  # path -> bytes served instead
    lfs_objects: dict[str, bytes] = field(default_factory=dict)  # LFS server: oid -> bytes
    lfs_tampered: dict[str, bytes] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self):
        return _make_handler(self)

    @property
    def endpoint(self) -> str:
        return self.base

    def lfs_url(self, name: str = "study") -> str:
        return f"{self.endpoint}/lfs/{name}"

    def revision(self, rev: str) -> HubRevision | None:
        if rev in self.revisions:
            return self.revisions[rev]
        return next((r for r in self.revisions.values() if r.sha == rev), None)

    def add_lfs(self, data: bytes) -> str:
        oid = hashlib.sha256(data).hexdigest()
        self.lfs_objects[oid] = data
        return oid


def _make_handler(hub: FakeHub):
    class Handler(QuietHandler):
        def _send(self, status: int, body: bytes, headers: dict | None = None, *, head: bool = False,
                  ctype: str = "application/json") -> None:
            self.send_head(status, len(body), headers, ctype)
            if not head:
                self.wfile.write(body)

        def _error(self, status: int, code: str, message: str, *, head: bool = False) -> None:
            self._send(status, json.dumps({"error": message}).encode(), {"X-Error-Code": code,
                                                                         "X-Error-Message": message}, head=head)

        def do_HEAD(self) -> None:  # noqa: N802
            self._route("HEAD")

        def do_GET(self) -> None:  # noqa: N802
            self._route("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST")

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            with hub.lock:
                hub.log.append(f"{method} {self.path}")
                hub.auth.append(self.headers.get("Authorization"))
            head = method == "HEAD"
            if method == "POST" and path.startswith("/lfs/") and path.endswith("/objects/batch"):
                return self._batch()
            if path.startswith("/lfs-objects/"):
                return self._lfs_object(path.rsplit("/", 1)[1])
            api = f"/api/datasets/{hub.repo_id}"
            resolve = f"/datasets/{hub.repo_id}/resolve/"
            if not (path == api or path.startswith(api + "/") or path.startswith(resolve)):
                return self._error(401, "RepoNotFound", "Repository not found", head=head)
            if hub.private and not self.headers.get("Authorization"):
                return self._error(401, "RepoNotFound", "Repository not found", head=head)
            if path == api:
                return self._info("main")
            if path.startswith(api + "/revision/"):
                return self._info(path[len(api + "/revision/"):])
            if path.startswith(api + "/tree/"):
                rev = path[len(api + "/tree/"):].split("/", 1)[0]
                return self._tree(rev, parse_qs(parts.query))
            if path.startswith(resolve):
                rev, _, file = path[len(resolve):].partition("/")
                return self._file(rev, file, head)
            return self._error(404, "EntryNotFound", "not found", head=head)

        def _info(self, rev: str) -> None:
            r = hub.revision(rev)
            if r is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            card = {"license": hub.licence, "pretty_name": "Small details release"} if hub.licence else {}
            body = {"_id": "0" * 24, "id": hub.repo_id, "author": hub.repo_id.split("/")[0], "sha": r.sha,
                    "lastModified": "2024-05-02T10:00:00.000Z", "createdAt": "2024-05-01T09:00:00.000Z",
                    "private": hub.private, "gated": hub.gated, "disabled": False, "tags": [],
                    "cardData": card, "siblings": [{"rfilename": p} for p in sorted(r.files)]}
            self._send(200, json.dumps(body).encode())

        def _tree(self, rev: str, query: dict) -> None:
            r = hub.revision(rev)
            if r is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            items = r.tree() if recursive else [i for i in r.tree() if "/" not in i["path"]]
            self._send(200, json.dumps(items).encode())

        def _file(self, rev: str, file: str, head: bool) -> None:
            r = hub.revision(rev)
            if r is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head=head)
            if hub.gated and not (self.headers.get("Authorization") and hub.granted):
                return self._error(401 if not self.headers.get("Authorization") else 403, "GatedRepo",
                                   "Access to this dataset is restricted", head=head)
            if file not in r.files:
                return self._error(404, "EntryNotFound", f"{file} does not exist", head=head)
            data = hub.tampered.get(file, r.files[file])
            headers = {"X-Repo-Commit": r.sha}
            if r.is_lfs(file):
                headers["X-Linked-Etag"] = f'"{hashlib.sha256(r.files[file]).hexdigest()}"'
                headers["X-Linked-Size"] = str(len(r.files[file]))
                headers["ETag"] = f'"{git_blob_id(lfs_pointer(r.files[file]))}"'
            else:
                headers["ETag"] = f'"{git_blob_id(r.files[file])}"'
            self._send(200, data, headers, head=head, ctype="application/octet-stream")

        def _batch(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(length) or b"{}")
            assert self.headers.get("Accept") == "application/vnd.git-lfs+json"
            objects = []
            for o in req.get("objects", []):
                if o["oid"] in hub.lfs_objects:
                    href = f"{hub.endpoint}/lfs-objects/{o['oid']}"
                    objects.append({"oid": o["oid"], "size": o["size"], "authenticated": True,
                                    "actions": {"download": {"href": href, "header": {"X-Lfs-Ticket": "t-1"}}}})
                else:
                    objects.append({"oid": o["oid"], "size": o["size"],
                                    "error": {"code": 404, "message": "Object does not exist"}})
            self._send(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                       ctype="application/vnd.git-lfs+json")

        def _lfs_object(self, oid: str) -> None:
            if self.headers.get("X-Lfs-Ticket") != "t-1":
                return self._send(403, b'{"message": "no ticket"}')
            if oid not in hub.lfs_objects:
                return self._send(404, b'{"message": "not found"}')
            self._send(200, hub.lfs_tampered.get(oid, hub.lfs_objects[oid]), ctype="application/octet-stream")

    return Handler
