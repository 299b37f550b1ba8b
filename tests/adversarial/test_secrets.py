"""Issue 30, items 10-12: the API key is never written down, whichever way it reaches the collector."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from support.httpstub import JsonHandler, serving
from support.paths import ROOT

KEY = "sk-proj-ECHOED-0123456789abcdef"
ENV = "REPLICATE_ADV_SECRET"
ITEMS = ROOT / "fixtures" / "collect" / "items.jsonl"


class _Echo(JsonHandler):
    """A careless proxy: a successful completion that repeats the Authorization header everywhere it can."""

    def do_POST(self) -> None:
        self.body()
        sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
        self.reply(200, {
            "id": f"chatcmpl-{sent}", "model": "sim-a", "system_fingerprint": sent,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"your key is {sent}\nFinal answer: 8",
                                     "reasoning_content": f"{{\"k\": \"{sent}\"}}"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, sent: 1},
        })


@pytest.fixture
def echo_url():
    with serving(_Echo) as url:
        yield f"{url}/v1"


def _config(tmp_path: Path, base_url: str, api_key_env: str = ENV) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(f'[endpoint]\nbase_url = {orjson.dumps(base_url).decode()}\n'
                 f'api_key_env = {orjson.dumps(api_key_env).decode()}\n'
                 '[collection]\nmodels = ["sim-a"]\nk = 2\nconcurrency = 2\ntimeout = 5.0\n')
    return p


def _collect(tmp_path: Path, config: Path, *extra: str):
    return CliRunner().invoke(app, ["collect", str(config), "--items", str(ITEMS), "--archive",
                                    str(tmp_path / "a.jsonl"), "--no-progress", *extra], env={ENV: KEY})


def test_a_key_echoed_in_a_successful_reply_is_scrubbed_from_the_archive(tmp_path, echo_url):
    res = _collect(tmp_path, _config(tmp_path, echo_url))
    assert res.exit_code == 0, res.output
    data = (tmp_path / "a.jsonl").read_bytes()
    assert KEY.encode() not in data and b"[API key]" in data
    recs = [r for _, r in read_archive(tmp_path / "a.jsonl").records]
    assert len(recs) == 40
    assert all(r["text"] == "your key is [API key]\nFinal answer: 8" for r in recs)
    assert KEY not in res.output


def test_a_key_pasted_into_api_key_env_is_refused_without_echoing_it(tmp_path, echo_url):
    res = _collect(tmp_path, _config(tmp_path, echo_url, api_key_env=KEY), "--dry-run")
    assert res.exit_code == 2
    assert "api_key_env must be the name of the environment variable" in res.output
    assert KEY not in res.output
    assert not (tmp_path / "a.jsonl").exists()


@pytest.mark.parametrize("url", [f"http://user:{KEY}@127.0.0.1:9/v1", f"http://{KEY}@127.0.0.1:9/v1",
                                 f"http://127.0.0.1:9/v1?api_key={KEY}", f"http://127.0.0.1:9/v1?x=1&access-token={KEY}",
                                 f"htp://user:{KEY}@host/v1"])
def test_credentials_in_base_url_are_refused_without_echoing_them(tmp_path, url):
    for args in ((), ("--dry-run",)):
        res = _collect(tmp_path, _config(tmp_path, url), *args)
        assert res.exit_code == 2, res.output
        assert "base_url must" in res.output and KEY not in res.output
    res = _collect(tmp_path, _config(tmp_path, "http://127.0.0.1:9/v1"), "--base-url", url)
    assert res.exit_code == 2 and KEY not in res.output
    assert not (tmp_path / "a.jsonl").exists()


def test_a_plain_query_string_is_kept(tmp_path):
    res = _collect(tmp_path, _config(tmp_path, "http://127.0.0.1:9/v1?api-version=2024-10-21"), "--dry-run")
    assert res.exit_code == 0, res.output
