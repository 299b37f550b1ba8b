"""Collection config, items file, retry policy and the seeded plan (no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from replicate.collect.config import RetryPolicy, load_config, load_items
from replicate.collect.plan import make_plan, pending, phase_order
from replicate.errors import BadInput
from replicate.retry import parse_retry_after

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"


def write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


BASE = '[endpoint]\nbase_url = "http://x/v1"\napi_key_env = "K"\n[collection]\nmodels = ["a"]\nk = 2\n'


def test_fixture_config_loads():
    c = load_config(FIX / "config.toml")
    assert c.models == ("sim-a", "sim-b") and c.k == 5 and c.concurrency == 8 and c.seed == 20260730
    assert c.retry == RetryPolicy(0, 0.05, 1.0) and dict(c.params) == {"reasoning_effort": "medium"}
    assert c.public()["endpoint"] == {"base_url": "http://127.0.0.1:8765/v1", "api_key_env": "SIM_API_KEY"}


def test_inline_key_refused_without_echoing_it(tmp_path):
    p = write(tmp_path, BASE.replace('api_key_env = "K"', 'api_key_env = "K"\napi_key = "sk-LEAK-42"'))
    with pytest.raises(BadInput, match=r"\[endpoint\] api_key: the API key must not be written in the config") as ei:
        load_config(p)
    assert "sk-LEAK-42" not in str(ei.value)


@pytest.mark.parametrize(
    "text, message",
    [
        (BASE + "colour = 1\n", r"\[collection\] unknown key\(s\) colour; allowed: backoff_base, backoff_max, "
         r"batch_deadline, batch_max_bytes, batch_max_lines, batch_poll, batch_window, concurrency, connect_timeout, give_up_after, k, "
         r"max_retries, mode, models, retry_after_max, seed, seed_per_trial, timeout"),
        (BASE.replace("k = 2\n", ""), r"\[collection\] k is required"),
        (BASE.replace("k = 2", "k = 0"), r"k must be an integer >= 1, got 0"),
        (BASE + "max_retries = -1\n", r"max_retries must be an integer >= 0 \(0 = until success\), got -1"),
        (BASE + "max_retries = true\n", r"max_retries must be an integer >= 0 \(0 = until success\), got True"),
        (BASE + "timeout = true\n", r"timeout must be a number of seconds > 0, got True"),
        (BASE + "backoff_max = false\n", r"backoff_max must be a number of seconds >= 0, got False"),
        (BASE + "[params]\nmodel = 'x'\n", r"\[params\] may not set model"),
        (BASE.replace('["a"]', '["a", "a"]'), r"models lists a more than once"),
        ("[endpoint\n", r"not valid TOML"),
    ],
)
def test_config_errors(tmp_path, text, message):
    with pytest.raises(BadInput, match=message):
        load_config(write(tmp_path, text))


def test_items_errors_name_file_and_line(tmp_path):
    good = {"id": 1, "benchmark": "b", "prompt": "p", "reference": "r", "scorer": "final-answer-line@1"}
    p = write(tmp_path, json.dumps(good) + "\n\n" + json.dumps({**good, "id": "1"}) + "\n", "i.jsonl")
    with pytest.raises(BadInput, match=r"i\.jsonl:3: duplicate item id '1' \(first on line 1\)"):
        load_items(p)
    p = write(tmp_path, json.dumps({**good, "messages": []}) + "\n", "i.jsonl")
    with pytest.raises(BadInput, match=r"i\.jsonl:1: an item needs exactly one of 'messages' or 'prompt'"):
        load_items(p)
    p = write(tmp_path, json.dumps({**good, "scorer": "exact"}) + "\n", "i.jsonl")
    with pytest.raises(BadInput, match=r"scorer must be a versioned name like 'final-answer-line@1', got 'exact'"):
        load_items(p)


def test_retry_delay_policy():
    r = RetryPolicy(0, backoff_base=0.5, backoff_max=4.0)
    assert [r.delay(n, retry_after=None, jitter=0.999999) for n in (1, 2, 3, 4, 5)] == pytest.approx(
        [0.5, 1.0, 2.0, 4.0, 4.0], rel=1e-5)
    assert r.delay(1, retry_after=None, jitter=0.0) == 0.25  # jitter scales into [0.5, 1]
    assert r.delay(1, retry_after=3.0, jitter=0.0) == 3.0  # Retry-After honoured when longer
    assert parse_retry_after("2") == 2.0 and parse_retry_after("0.05") == 0.05
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_plan_is_seeded_and_resume_keeps_order():
    items = load_items(FIX / "items.jsonl")
    a = phase_order(items, "sim-a", k=3, seed=1)
    assert a == phase_order(items, "sim-a", k=3, seed=1) and sorted(a) == sorted((i.id, t) for i in items
                                                                                    for t in range(3))
    assert a != phase_order(items, "sim-b", k=3, seed=1) and a != phase_order(items, "sim-a", k=3, seed=2)
    done = {("sim-a", i, t) for i, t in a[::2]}
    assert pending(items, "sim-a", k=3, seed=1, done=done) == a[1::2]
    cfg = load_config(FIX / "config.toml")
    plan = make_plan(cfg, items, done={("sim-a", "q01", 0)})
    assert [(p.model, p.requests, p.already_done) for p in plan.phases] == [("sim-a", 99, 1), ("sim-b", 100, 0)]


def test_sim_server_cli_prints_url_and_serves(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "replicate", "sim-server", "--config", str(FIX / "sim.toml"),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "SIM_API_KEY": "k1", "PYTHONUNBUFFERED": ""})
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert requests.get(url + "/models", headers={"Authorization": "Bearer k1"}, timeout=5).json()["data"][0][
            "id"] == "sim-a"
        r = requests.get(url + "/models", headers={"Authorization": "Bearer nope"}, timeout=5)
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
        r = requests.post(url + "/chat/completions", json={"model": "gpt-x", "messages": []},
                          headers={"Authorization": "Bearer k1"}, timeout=5)
        assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
    finally:
        proc.terminate()
        proc.wait()


def test_sim_server_port_in_use_is_a_clean_error():
    import socket

    from typer.testing import CliRunner

    from replicate.cli.app import app

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = CliRunner().invoke(app, ["sim-server", "--port", str(port)])
    assert res.exit_code == 2
    assert f"Error: cannot listen on 127.0.0.1:{port}:" in res.stderr
    assert "Traceback" not in res.output


def test_retry_after_is_honoured_up_to_its_cap():
    from replicate.collect.config import RetryPolicy

    policy = RetryPolicy(backoff_base=0.01, backoff_max=0.02, retry_after_max=30.0)
    assert policy.delay(1, retry_after=7.5, jitter=0.0) == 7.5  # longer than the backoff: honoured
    assert policy.delay(1, retry_after=86400.0, jitter=0.0) == 30.0  # a day: capped
    assert policy.delay(1, retry_after=None, jitter=1.0) == 0.01 * (0.5 + 0.5 * 1.0)


@pytest.mark.parametrize(
    "text,message",
    [
        ('[models.a]\np = true\n', r"\[models\.a\] p must be a number, got True"),
        ('[models.a]\np = "0.5"\n', r"\[models\.a\] p must be a number, got '0\.5'"),
        ('seed = 1.5\n[models.a]\np = 0.5\n', r"seed must be an integer, got 1\.5"),
        ('[models.a]\np = 0.5\n[faults]\nrate_500 = false\n', r"\[faults\] rate_500 must be a number, got False"),
    ],
)
def test_sim_config_numbers_are_numbers(tmp_path, text, message):
    from replicate.collect.simserver import load_sim_config

    p = tmp_path / "sim.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput, match=message):
        load_sim_config(p)
