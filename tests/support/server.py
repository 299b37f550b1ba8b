"""A GitHub-shaped HTTP server on 127.0.0.1, backed by a real git repository.

It answers the four requests the http transport makes (repository, commit,
tree, raw file) from the repository's real objects, so both transports can be
compared byte for byte, and it injects faults on request: statuses with
headers, slow answers, dropped connections, wrong bytes.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

import git


@dataclass
class Fault:
    pattern: str  # regex searched in the request path
    times: int = 1
    status: int | None = None
    headers: dict = field(default_factory=dict)
    body: bytes = b'{"message": "fault"}'
    delay: float = 0.0  # seconds to wait before answering
    drop_after: int | None = None  # send a Content-Length answer, then cut it after n bytes
    replace_body: bytes | None = None  # serve these bytes instead of the real ones (200)


class Served:
    """``start()``, ``stop()`` and ``base`` (the URL) of a test server whose ``handler()`` answers requests."""

    httpd: ThreadingHTTPServer

    def handler(self):
        raise NotImplementedError

    def start(self):
        self.httpd = start_server(self.handler())
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


@dataclass
class FakeGitHub(Served):
    repo: git.Repo
    owner: str = "org"
    name: str = "study"
    license: dict | None = None
    created_at: str = "2021-03-04T05:06:07Z"
    default_branch: str = "main"
    truncate_over: int | None = None  # recursive listings longer than this are truncated
    extra_items: list[dict] = field(default_factory=list)  # added to every recursive listing
    faults: list[Fault] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    inflight: int = 0
    max_inflight: int = 0  # most requests being answered at the same time
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self):
        return _make_handler(self)

    @property
    def api(self) -> str:
        return self.base + "/api"

    @property
    def raw(self) -> str:
        return self.base + "/raw"

    def fail(self, pattern: str, **kw) -> Fault:
        f = Fault(pattern, **kw)
        self.faults.append(f)
        return f

    # -- answers from the repository -------------------------------------------
    def _git(self, *args: str) -> str:
        return self.repo.git.execute(["git", *args])

    def resolve(self, rev: str) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        except git.GitCommandError:
            return None

    def tree_json(self, sha: str, recursive: bool) -> dict | None:
        try:
            args = ["ls-tree", "-l", "-z"] + (["-r", "-t"] if recursive else []) + [sha]
            out = self._git(*args)
        except git.GitCommandError:
            return None
        items = []
        for rec in out.split("\0"):
            if not rec:
                continue
            meta, path = rec.split("\t", 1)
            mode, kind, osha, size = meta.split()
            item = {"path": path, "mode": mode, "type": kind, "sha": osha, "url": "x"}
            if kind == "blob":
                item["size"] = int(size)
            items.append(item)
        if recursive:
            items += self.extra_items
        truncated = False
        if recursive and self.truncate_over is not None and len(items) > self.truncate_over:
            items, truncated = items[: self.truncate_over], True
        return {"sha": sha, "url": "x", "tree": items, "truncated": truncated}


class _QuietServer(ThreadingHTTPServer):
    """Clients that give up (timeouts, cut downloads) break pipes: expected here, not printed."""

    def handle_error(self, request, client_address) -> None:
        pass


def start_server(handler) -> ThreadingHTTPServer:
    """``handler`` served on 127.0.0.1 (a free port) from a daemon thread; ``shutdown()`` stops it."""
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return httpd


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no request log; :meth:`send_head` sends a status line and headers."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def send_head(self, status: int, length: int, headers: dict | None, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()


def _make_handler(gh: FakeGitHub):
    class Handler(QuietHandler):
        def _send(self, status: int, body: bytes, headers: dict | None = None,
                  ctype: str = "application/json", drop_after: int | None = None) -> None:
            self.send_head(status, len(body), headers, ctype)
            if drop_after is not None:
                self.wfile.write(body[:drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def _json(self, status: int, obj) -> None:
            self._send(status, json.dumps(obj).encode())

        def do_GET(self) -> None:  # noqa: N802
            with gh.lock:
                gh.inflight += 1
                gh.max_inflight = max(gh.max_inflight, gh.inflight)
            try:
                self._get()
            finally:
                with gh.lock:
                    gh.inflight -= 1

        def _get(self) -> None:
            path = urlsplit(self.path).path
            query = urlsplit(self.path).query
            gh.log.append(self.path)
            gh.auth.append(self.headers.get("Authorization"))
            for f in gh.faults:
                if f.times > 0 and re.search(f.pattern, self.path):
                    f.times -= 1
                    if f.delay:
                        time.sleep(f.delay)
                    if f.status is not None:
                        return self._send(f.status, f.body, f.headers)
                    if f.drop_after is not None:
                        body = self._answer(path, query)
                        return self._send(200, body[1] if body else b"", drop_after=f.drop_after,
                                          ctype="application/octet-stream")
                    if f.replace_body is not None:
                        return self._send(200, f.replace_body, ctype="application/octet-stream")
                    break
            ans = self._answer(path, query)
            if ans is None:
                return self._json(404, {"message": "Not Found"})
            status, body, ctype = ans
            self._send(status, body, ctype=ctype)

        def _answer(self, path: str, query: str):
            repo_prefix = f"/api/repos/{gh.owner}/{gh.name}"
            raw_prefix = f"/raw/{gh.owner}/{gh.name}/"
            if path == repo_prefix:
                meta = {"full_name": f"{gh.owner}/{gh.name}", "default_branch": gh.default_branch,
                        "created_at": gh.created_at, "license": gh.license, "description": "a study"}
                return 200, json.dumps(meta).encode(), "application/json"
            if path.startswith(repo_prefix + "/commits/"):
                rev = unquote(path[len(repo_prefix + "/commits/"):])
                sha = gh.resolve(rev)
                if sha is None:
                    return 422, json.dumps({"message": f"No commit found for SHA: {rev}"}).encode(), "application/json"
                tree = gh._git("rev-parse", f"{sha}^{{tree}}").strip()
                return 200, json.dumps({"sha": sha, "commit": {"tree": {"sha": tree}}}).encode(), "application/json"
            if path.startswith(repo_prefix + "/git/trees/"):
                sha = path.rsplit("/", 1)[1]
                data = gh.tree_json(sha, "recursive=1" in query)
                return None if data is None else (200, json.dumps(data).encode(), "application/json")
            if path.startswith(raw_prefix):
                rest = unquote(path[len(raw_prefix):])
                commit, _, rel = rest.partition("/")
                try:
                    data = gh.repo.git.execute(["git", "cat-file", "blob", f"{commit}:{rel}"],
                                               stdout_as_string=False,
                                               strip_newline_in_stdout=False)
                except git.GitCommandError:
                    return None
                return 200, data, "text/plain"
            return None

    return Handler
