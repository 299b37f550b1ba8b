"""Conventions of real deployments: proxy and CA variables are honoured (a test proxy on 127.0.0.1 sees
the requests), OPENAI_BASE_URL / OPENAI_API_KEY are the defaults (flags > config > environment), and
seed_per_trial sends seed + trial index and is recorded in the archive header."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
import requests

from replicate.collect.archive import read_archive
from replicate.collect.client import ChatClient
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import collect
from replicate.collect.simserver import load_sim_config, start_sim_server
from replicate.errors import BadInput, UsageError

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"


class ForwardProxy(ThreadingHTTPServer):
    """A plain HTTP forward proxy: records every absolute-URI request and its body, then forwards it."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.seen: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.upstream = requests.Session()
        self.upstream.trust_env = False
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ForwardProxy

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.seen.append((self.path, body))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection")}
        r = self.server.upstream.post(self.path, data=body, headers=headers, timeout=10)
        self.send_response(r.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(r.content)))
        self.end_headers()
        self.wfile.write(r.content)


@pytest.fixture
def proxy():
    p = ForwardProxy()
    yield p
    p.close()


@pytest.fixture
def env(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SIM_API_KEY", "sk-sim")
    return monkeypatch


def config_for(url, **over):
    cfg = load_config(FIX / "config.toml", base_url=url)
    return replace(cfg, retry=replace(cfg.retry, backoff_base=0.001), **over)


def test_http_proxy_variable_is_honoured_and_no_proxy_exempts(env, proxy, tmp_path):
    items = load_items(FIX / "items.jsonl")[:3]
    sim = replace(load_sim_config(FIX / "sim.toml"), faults={}, api_key_env=None)
    with start_sim_server(sim) as srv:
        env.setenv("HTTP_PROXY", proxy.url)
        collect(config_for(srv.url, models=("sim-a",), k=2), items, tmp_path / "a.jsonl")
        assert len(proxy.seen) == 6
        assert {p for p, _ in proxy.seen} == {srv.url + "/chat/completions"}
        env.setenv("NO_PROXY", "127.0.0.1")
        collect(config_for(srv.url, models=("sim-b",), k=2), items, tmp_path / "b.jsonl")
        assert len(proxy.seen) == 6  # exempted: straight to the server
    assert len(read_archive(tmp_path / "b.jsonl").records) == 6


def test_ca_bundle_variables(env, tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    cfg = config_for("https://gateway.example/v1")
    assert ChatClient.from_config(cfg).session.verify is True
    env.setenv("CURL_CA_BUNDLE", str(bundle))
    assert ChatClient.from_config(cfg).session.verify == str(bundle)
    env.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "other.pem"))
    assert ChatClient.from_config(cfg).session.verify == str(tmp_path / "other.pem")
    env.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    assert ChatClient.from_config(cfg).session.proxies == {"https": "http://proxy.corp:3128"}


MINIMAL = '[collection]\nmodels = ["sim-a"]\nk = 1\n'


def test_openai_environment_is_the_default_endpoint(env, tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(MINIMAL)
    with pytest.raises(BadInput, match="base_url is required .*OPENAI_BASE_URL"):
        load_config(p)
    env.setenv("OPENAI_BASE_URL", "http://env.example/v1")
    c = load_config(p)
    assert (c.base_url, c.api_key_env) == ("http://env.example/v1", "OPENAI_API_KEY")
    p.write_text('[endpoint]\nbase_url = "http://config.example/v1"\napi_key_env = "MY_KEY"\n' + MINIMAL)
    c = load_config(p)
    assert (c.base_url, c.api_key_env) == ("http://config.example/v1", "MY_KEY")  # config beats environment
    assert load_config(p, base_url="http://flag.example/v1").base_url == "http://flag.example/v1"  # flag beats both


def test_openai_api_key_is_read_when_the_config_names_no_variable(env, tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(MINIMAL)
    env.setenv("OPENAI_API_KEY", "sk-openai-env")
    sim = replace(load_sim_config(FIX / "sim.toml"), faults={}, api_key_env=None)
    with start_sim_server(sim, api_key="sk-openai-env") as srv:
        env.setenv("OPENAI_BASE_URL", srv.url)
        s = collect(load_config(p), load_items(FIX / "items.jsonl")[:2], tmp_path / "a.jsonl")
    assert s.trials_recorded == 2 and s.api_errors == 0


def test_seed_per_trial_sends_seed_plus_trial_and_is_recorded(env, proxy, tmp_path):
    items = load_items(FIX / "items.jsonl")[:2]
    sim = replace(load_sim_config(FIX / "sim.toml"), faults={}, api_key_env=None)
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim) as srv:
        env.setenv("HTTP_PROXY", proxy.url)
        cfg = config_for(srv.url, models=("sim-a",), k=3, seed_per_trial=True,
                         params={"seed": 100, "temperature": 1})
        collect(cfg, items, arch)
        sent = Counter(orjson.loads(b)["seed"] for _, b in proxy.seen)
        assert sent == {100: 2, 101: 2, 102: 2}
        c = read_archive(arch)
        assert c.header["config"]["collection"]["seed_per_trial"] is True
        assert {(r["trial"], r["request_seed"]) for _, r in c.records} == {(0, 100), (1, 101), (2, 102)}
        with pytest.raises(UsageError, match="changed seed_per_trial: true -> false"):
            collect(replace(cfg, seed_per_trial=False), items, arch)
        # without [params] seed, the collection seed is the base
        proxy.seen.clear()
        collect(replace(cfg, params={}), items, tmp_path / "b.jsonl")
        assert Counter(orjson.loads(b)["seed"] for _, b in proxy.seen) == {cfg.seed + t: 2 for t in range(3)}
