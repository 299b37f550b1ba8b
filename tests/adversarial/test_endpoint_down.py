"""Issue 30, item 9: with the endpoint down and max_retries = 0, the progress line shows the retries and the
last error as they happen, and the run stops after give_up_after seconds without an answer (a rerun resumes)."""

from __future__ import annotations

import io
import socket
from dataclasses import replace

import pytest

from replicate.collect.archive import read_archive
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import CollectionStopped, Progress, collect
from replicate.collect.simserver import load_sim_config, start_sim_server
from support.paths import ROOT

FIX = ROOT / "fixtures" / "collect"
KEY = "sk-test-DOWN-0123456789"
ENV = "REPLICATE_ADV_DOWN_KEY"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)


def _closed_port() -> int:
    """A port nothing listens on (bound, then closed: connections are refused at once)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _config(url: str, give_up: float):
    cfg = replace(load_config(FIX / "config.toml"), base_url=url, api_key_env=ENV, concurrency=2, timeout=5.0,
                  connect_timeout=1.0, k=1)
    return replace(cfg, retry=replace(cfg.retry, max_retries=0, backoff_base=0.01, backoff_max=0.05,
                                      give_up_after=give_up))


def test_an_endpoint_down_is_shown_retrying_and_given_up_on_then_resumed(tmp_path):
    items = load_items(FIX / "items.jsonl")[:4]
    arch = tmp_path / "a.jsonl"
    err = io.StringIO()
    down = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(CollectionStopped, match=r"no request has had an answer for \d+ s \(give_up_after = 0\.5\), "
                                                r"only transient faults, the last: connection error: ConnectionError "
                                                r".*rerun the same command once it is up to resume") as ei:
        collect(_config(down, 0.5), items, arch, progress=Progress(err, tty=False, interval=0))
    assert ei.value.summary.trials_recorded == 0
    lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("sim-a: ")]
    assert lines and any("retries 0" not in ln and "(last retried: connection error: ConnectionError)" in ln
                         for ln in lines), err.getvalue()
    assert read_archive(arch).records == ()
    # once the endpoint is up, the same command resumes and finishes
    sim = replace(load_sim_config(FIX / "sim.toml"), faults={})
    with start_sim_server(sim, api_key=KEY) as srv:
        s = collect(_config(srv.url, 0.5), items, arch)
    assert s.resumed and s.trials_recorded == 2 * len(items)
    assert len(read_archive(arch).records) == 2 * len(items)


def test_give_up_after_zero_keeps_the_old_retry_for_ever_setting(tmp_path):
    cfg = load_config(FIX / "config.toml")
    assert cfg.retry.give_up_after == 1800.0  # the documented default
    text = (FIX / "config.toml").read_text().replace("max_retries = 0", "max_retries = 0\ngive_up_after = 0")
    (tmp_path / "c.toml").write_text(text)
    assert load_config(tmp_path / "c.toml").retry.give_up_after == 0
