"""Issue 43, item 2: an API key given as a path segment of --base-url (``http://host/<key>/v1``) is in no byte
the tool prints or stores: stdout, stderr, the archive, the trials table, the per-item rows, the caches."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.secrets import scrub
from support.httpstub import JsonHandler, serving
from support.paths import ROOT

KEY = "sk-proj-PATHSEG-0123456789abcdef"
ENV = "REPLICATE_ADV_PATH_SECRET"
ITEMS = ROOT / "fixtures" / "collect" / "items.jsonl"


class _PathEcho(JsonHandler):
    """A proxy that serves under any path and repeats the path it was asked for; 404 under /missing/."""

    def do_POST(self) -> None:
        self.body()
        if "/missing/" in self.path:
            self.reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        self.reply(200, {
            "id": f"chatcmpl-{self.path}", "model": "sim-a", "system_fingerprint": self.path,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"you asked {self.path}\nFinal answer: 8"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4},
        })


@pytest.fixture
def server():
    with serving(_PathEcho) as url:
        yield url


def _config(tmp_path: Path) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(f'[endpoint]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "{ENV}"\n'
                 '[collection]\nmodels = ["sim-a"]\nk = 2\nconcurrency = 2\ntimeout = 5.0\n')
    return p


def _every_byte(*roots: Path) -> bytes:
    return b"".join(p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file())


def test_a_key_in_the_url_path_is_in_nothing_printed_or_stored(tmp_path, server):
    cache = Path(os.environ["REPLICATE_CACHE_DIR"])
    runner = CliRunner()
    arch = tmp_path / "a.jsonl"
    printed = []
    for base, into in ((f"{server}/{KEY}/v1", arch), (f"{server}/missing/{KEY}/v1", tmp_path / "b.jsonl")):
        # a success, then the collector's own stop line (a 404 under the key's path)
        res = runner.invoke(app, ["collect", str(_config(tmp_path)), "--items", str(ITEMS), "--archive", str(into),
                                  "--base-url", base, "--no-progress"], env={ENV: KEY})
        printed.append(res.stdout + res.stderr)
        assert "Traceback" not in res.output
    assert "[API key]" in printed[1] and "collection stopped: HTTP 404" in printed[1]
    for argv in (["score", str(arch), "--items", str(ITEMS), "--out", str(tmp_path / "t.jsonl"), "--format", "json"],
                 ["items", str(tmp_path / "t.jsonl"), "--edge", "sim-a:sim-a", "--null", "0",
                  "--per-item", str(tmp_path / "per-item.jsonl")]):
        res = runner.invoke(app, argv)
        printed.append(res.stdout + res.stderr)
    everything = "".join(printed).encode() + _every_byte(tmp_path, cache)
    assert b"/[API key]/v1" in arch.read_bytes()  # the echoed path, scrubbed in the records
    for form in {KEY, quote(KEY, safe="")}:
        assert form.encode() not in everything


def test_scrub_finds_the_key_wherever_it_sits():
    url = f"http://user:{KEY}@host/{quote(KEY, safe='')}/v1?api_key={KEY}"
    assert scrub(url, KEY) == "http://user:[API key]@host/[API key]/v1?api_key=[API key]"
    assert scrub(f"Authorization: Bearer {KEY}\r\n", f" {KEY}\n") == "Authorization: Bearer [API key]\r\n"
    assert scrub("short", "abc") == "short"  # a value too short to be a key is left alone
