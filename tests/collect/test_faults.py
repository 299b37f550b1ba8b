"""Every fault the simulated endpoint injects, as the collector and scorer see it; retry waits; Ctrl-C;
progress output; secrets in odd places. Real HTTP against servers on 127.0.0.1."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import ArchiveLock, read_archive
from replicate.collect.client import ChatClient
from replicate.collect.config import load_config
from replicate.collect.plan import phase_order
from replicate.collect.runner import CollectionStopped, Progress, collect
from replicate.collect.simserver import load_sim_config, start_sim_server
from replicate.scoring.pipeline import score_archive_to_file

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
KEY = "sk-test-PLANTED-91c2e0"
ENV = "REPLICATE_TEST_KEY"



def sim(**faults):
    return replace(load_sim_config(FIX / "sim.toml"), hang_seconds=2.0, retry_after=0.0,
                   faults=MappingProxyType(faults))


def cfg_for(url, **over):
    cfg = load_config(FIX / "config.toml")
    retry = replace(cfg.retry, backoff_base=0.001, backoff_max=0.01, max_retries=over.pop("max_retries", 0))
    return replace(cfg, base_url=url, api_key_env=ENV, timeout=0.2, retry=retry, **over)


# (fault, error kind of the recorded trial or None, category after scoring)
FAULTS = [
    ("rate_429", "http_429", "api_error"),
    ("rate_500", "http_500", "api_error"),
    ("rate_hang", "timeout", "api_error"),
    ("rate_drop", "connection", "api_error"),
    ("rate_malformed", "invalid_json", "api_error"),
    ("rate_truncate", None, "truncation"),
    ("rate_refusal", None, "refusal"),
    ("rate_no_answer", None, "format_failure"),
    ("rate_reasoning_only", None, "format_failure"),  # reasoning but no content, finish_reason stop
]


def test_fault_table_covers_every_sim_fault():
    from replicate.collect.simserver import FAULTS as SIM_FAULTS

    assert sorted(f for f, _, _ in FAULTS) == sorted(SIM_FAULTS)


@pytest.mark.parametrize("fault, kind, category", FAULTS)
def test_each_sim_fault_end_to_end(items, tmp_path, fault, kind, category):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(**{fault: 1.0}), api_key=KEY) as srv:
        s = collect(cfg_for(srv.url, models=("sim-a",), k=1, max_retries=1), items[:1], arch)
        assert srv.stats[fault] >= 1
    (rec,) = [r for _, r in read_archive(arch).records]
    assert rec["error_kind"] == kind
    if kind is not None:  # transient: retried once (the cap), then recorded as the trial's api_error
        assert rec["attempts"] == 2 and rec["retries"] == {kind: 1} and s.retries == {kind: 1}
        assert rec["error_message"].startswith("gave up after 2 attempts (max_retries=1); last: ")
    else:
        assert rec["attempts"] == 1 and rec["retries"] == {}
    if fault == "rate_truncate":
        assert rec["finish_reason"] == "length"
    if fault == "rate_refusal":
        assert rec["refusal"] and rec["text"] is None
    score_archive_to_file(arch, FIX / "items.jsonl", tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().splitlines()[1].split(",")[4] == category


class RecordingStop(threading.Event):
    """A stop event whose wait() returns at once and records how long the client asked to wait."""

    def __init__(self):
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        return False


def test_retry_after_is_honoured_beyond_backoff_max():
    s = replace(sim(rate_429=1.0), retry_after=7.5)
    with start_sim_server(s, api_key=KEY) as srv:
        cfg = cfg_for(srv.url, max_retries=2)
        stop = RecordingStop()
        client = ChatClient.from_config(cfg, stop=stop)
        out = client.complete("sim-a", [{"role": "user", "content": "hi"}], {})
        client.close()
    assert stop.waits == [7.5, 7.5]  # backoff alone would wait <= 0.01 s
    assert out.attempts == 3 and out.retries == {"http_429": 2} and out.error_kind == "http_429"


def test_backoff_doubles_with_jitter_up_to_the_cap():
    with start_sim_server(sim(rate_500=1.0), api_key=KEY) as srv:
        cfg = cfg_for(srv.url, max_retries=4)
        cfg = replace(cfg, retry=replace(cfg.retry, backoff_base=0.4, backoff_max=1.0))
        stop = RecordingStop()
        client = ChatClient.from_config(cfg, stop=stop)
        client.complete("sim-a", [{"role": "user", "content": "hi"}], {})
        client.close()
    bounds = [(0.2, 0.4), (0.4, 0.8), (0.5, 1.0), (0.5, 1.0)]  # [0.5, 1] x min(1.0, 0.4 * 2**(n-1))
    assert len(stop.waits) == 4
    assert all(lo <= w <= hi for w, (lo, hi) in zip(stop.waits, bounds)), stop.waits


def test_requests_go_in_the_seeded_order_phase_by_phase(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg = cfg_for(srv.url, concurrency=1, k=2)
        collect(cfg, items[:6], arch)
    recs = [r for _, r in read_archive(arch).records]
    sent = [(r["model"], r["item"], r["trial"]) for r in recs]
    expected = [(m, i, t) for m in ("sim-a", "sim-b") for i, t in phase_order(items[:6], m, k=2, seed=cfg.seed)]
    assert sent == expected
    assert expected != [(m, i, t) for m in ("sim-a", "sim-b") for i, t in phase_order(items[:6], m, k=2, seed=1)]


# -- progress ------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal(items, tmp_path):
    term = FakeTerminal()
    p = Progress(term)
    assert p.tty
    p.start_phase("m", 8, 2)
    p.update(2, 1, 0, final=False)
    p.update(4, 3, 1, final=True)
    out = term.getvalue()
    assert out.startswith("phase m: 8 requests to send (2 already in the archive)\n")
    frames = out.split("\n", 1)[1].split("\r")[1:]
    assert len(frames) == 2
    assert re.fullmatch(r"m \[#{6}\.{18}\] 2/8 \d+\.\d req/s ETA \d+:\d\d retries 1 errors 0\x1b\[K", frames[0])
    assert re.fullmatch(r"m \[#{12}\.{12}\] 4/8 \d+\.\d req/s ETA \d+:\d\d retries 3 errors 1\x1b\[K\n", frames[1])


def test_progress_per_phase_counts_in_a_real_run(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    term = FakeTerminal()
    with start_sim_server(sim(rate_500=0.2), api_key=KEY) as srv:
        collect(cfg_for(srv.url, k=2), items, arch, progress=Progress(term))
    recs = [r for _, r in read_archive(arch).records]
    out = term.getvalue()
    assert "\r" in out and "\x1b[K" in out
    for model in ("sim-a", "sim-b"):
        retries = sum(sum(r["retries"].values()) for r in recs if r["model"] == model)
        errors = sum(1 for r in recs if r["model"] == model and r["error_kind"])
        final = re.search(rf"\r{model} \[#{{24}}\] 40/40 [^\r]* retries (\d+) errors (\d+)"
                          r"(?: \(last retried: [^\r]*\))?\x1b\[K\n", out)
        assert final and (int(final[1]), int(final[2])) == (retries, errors)
    assert sum(sum(r["retries"].values()) for r in recs if r["model"] == "sim-b") > 0


def test_progress_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    p = Progress(stream, interval=3600)
    assert not p.tty
    p.start_phase("m", 4, 0)
    p.update(1, 0, 0)  # the first line is due at once
    p.update(2, 0, 0)  # within the interval: nothing
    p.update(4, 0, 0, final=True)
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and len(lines) == 3
    assert re.fullmatch(r"m: 4/4 \d+\.\d req/s ETA 0:00 retries 0 errors 0", lines[2])


# -- secrets in odd places -----------------------------------------------------------


@pytest.mark.parametrize("bad", [KEY + "\n", " " + KEY, KEY + "\u2019"])
def test_key_an_http_header_cannot_carry_stops_without_showing_it(items, tmp_path, monkeypatch, bad):
    monkeypatch.setenv(ENV, bad)
    cfg_path = tmp_path / "c.toml"
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg_path.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", srv.url)
                            .replace('"SIM_API_KEY"', f'"{ENV}"'))
        r = CliRunner().invoke(app, ["collect", str(cfg_path), "--items", str(FIX / "items.jsonl"),
                                     "--archive", str(tmp_path / "a.jsonl"), "--no-progress"])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (
        f"Error: collection stopped: the environment variable {ENV} (api_key_env) holds whitespace, control or "
        "non-ASCII characters, which an HTTP header cannot carry (a trailing newline from a key file?); the "
        "value is not shown — nothing was recorded for that request; 0 trials recorded in this run; fix the "
        "cause and rerun the same command to resume")
    assert KEY not in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_unexpected_worker_error_stops_with_a_scrubbed_line(items, tmp_path):
    class Broken(ChatClient):
        def _attempt(self, body, model, params=None):
            raise RuntimeError(f"bug while holding {os.environ[ENV]}")

    with start_sim_server(sim(), api_key=KEY) as srv:
        with pytest.raises(CollectionStopped, match=r"^collection stopped: unexpected RuntimeError: bug while "
                                                    r"holding \[API key\] — nothing was recorded") as ei:
            collect(cfg_for(srv.url), items, tmp_path / "a.jsonl",
                    client_factory=lambda c, s: Broken.from_config(c, stop=s))
    assert KEY not in str(ei.value) and ei.value.__cause__ is None and ei.value.__context__ is None


# -- Ctrl-C --------------------------------------------------------------------------


def test_ctrl_c_stops_at_once_without_waiting_for_requests_in_flight(items, tmp_path):
    s = replace(sim(rate_hang=1.0), hang_seconds=120.0)
    with start_sim_server(s, api_key=KEY) as srv:
        cfg_path = tmp_path / "c.toml"
        cfg_path.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", srv.url)
                            .replace('"SIM_API_KEY"', f'"{ENV}"').replace("timeout = 2.0", "timeout = 120"))
        arch = tmp_path / "a.jsonl"
        proc = subprocess.Popen(
            [sys.executable, "-m", "replicate", "collect", str(cfg_path), "--items", str(FIX / "items.jsonl"),
             "--archive", str(arch), "--no-progress"],
            env={**os.environ, ENV: KEY}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            # A test runner started as a background job inherits SIGINT as ignored, and Python then
            # never installs its Ctrl-C handler; give the child the disposition a terminal user has.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            while srv.stats["rate_hang"] < 8 and proc.poll() is None:  # all 8 workers blocked in a read
                threading.Event().wait(0.01)
            proc.send_signal(signal.SIGINT)
            # without the immediate exit this would wait the 120 s read timeout of the hanging requests
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    recs = [r for _, r in read_archive(arch).records]
    assert {r["item"] for r in recs} <= {"q13"}  # only the "too long" 400s got an answer
    assert err.splitlines()[-1] == (f"interrupted: {len(recs)} trials recorded in this run are safe in {arch}; "
                                    "requests in flight were abandoned. Rerun the same command to resume.")
    assert KEY not in out + err
    ArchiveLock(arch).acquire().release()  # the lock went with the process
    assert Counter(srv.stats)["ok"] == 0
