"""Failures that cannot be mistaken for data: a 400 naming a parameter or the model, or the same 400 on
the first distinct items, stops the run with nothing recorded; a model with mostly api_error trials
ends the run non-zero; --retry-errors asks those trials again. Real HTTP against sim-server."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from replicate.collect.client import ErrorInfo, classify_bad_request
from replicate.collect.config import load_config
from replicate.collect.runner import SAME_ERROR_STOP, CollectionStopped, collect
from replicate.collect.simserver import SimModel, load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"
KEY = "sk-test-PLANTED-77aa01"
ENV = "REPLICATE_TEST_KEY"



def sim(models=None, **over):
    base = load_sim_config(FIX / "sim.toml")
    base = replace(base, faults=MappingProxyType(over.pop("faults", {})),
                   too_long=over.pop("too_long", frozenset()), **over)
    if models is not None:
        base = replace(base, models=MappingProxyType({m.name: m for m in models}))
    return base


def cfg_for(url, **over):
    cfg = load_config(FIX / "config.toml")
    retry = replace(cfg.retry, backoff_base=0.001, backoff_max=0.01, max_retries=over.pop("max_retries", 0))
    return replace(cfg, base_url=url, api_key_env=ENV, timeout=2.0, retry=retry, **over)


def trials(path):
    return [r for _, r in read_archive(path).records]


def test_unsupported_parameter_stops_naming_the_parameter_and_its_alternative(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    models = [SimModel("sim-a", reject_params=frozenset({"max_tokens"})), SimModel("sim-b")]
    with start_sim_server(sim(models), api_key=KEY) as srv:
        cfg = cfg_for(srv.url, params=MappingProxyType({"max_tokens": 64}))
        with pytest.raises(CollectionStopped) as ei:
            collect(cfg, items, arch)
    msg = str(ei.value)
    assert "'max_tokens'" in msg and "max_completion_tokens" in msg and "unsupported_parameter" in msg
    assert KEY not in msg
    assert trials(arch) == []  # nothing recorded for those requests (and the second phase never started)


def test_unsupported_parameter_cli_exits_non_zero(items, tmp_path):
    models = [SimModel("sim-a", reject_params=frozenset({"reasoning_effort"})), SimModel("sim-b")]
    with start_sim_server(sim(models), api_key=KEY) as srv:
        cfg = tmp_path / "c.toml"
        cfg.write_text((FIX / "config.toml").read_text().replace("http://127.0.0.1:8765/v1", srv.url)
                       .replace('"SIM_API_KEY"', f'"{ENV}"'))
        res = CliRunner().invoke(app, ["collect", str(cfg), "--items", str(FIX / "items.jsonl"),
                                       "--archive", str(tmp_path / "a.jsonl"), "--no-progress"])
    assert res.exit_code == 2
    assert "'reasoning_effort'" in res.output and "remove or change [params] reasoning_effort" in res.output
    assert KEY not in res.output


def test_litellm_invalid_model_name_stops(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(unknown_model="litellm"), api_key=KEY) as srv:
        with pytest.raises(CollectionStopped, match="Invalid model name passed in model=sim-c") as ei:
            collect(cfg_for(srv.url, models=("sim-a", "sim-c")), items, arch)
    assert "sim-c" in str(ei.value)
    recs = trials(arch)
    assert {r["model"] for r in recs} == {"sim-a"} and len(recs) == len(items) * 5


def test_same_400_on_the_first_distinct_items_stops_with_nothing_recorded(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    models = [SimModel("sim-a", bad_request="Invalid request: the JSON schema in response_format is invalid")]
    with start_sim_server(sim(models), api_key=KEY) as srv:
        with pytest.raises(CollectionStopped) as ei:
            collect(cfg_for(srv.url, models=("sim-a",), concurrency=2), items, arch)
        sent = srv.stats["400"]
    assert f"the first {SAME_ERROR_STOP} distinct items asked of sim-a all got the same error" in str(ei.value)
    assert "response_format is invalid" in str(ei.value)
    assert trials(arch) == []
    assert sent < len(items) * 5  # it stopped early


def test_a_request_specific_400_stays_that_trials_api_error(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    with start_sim_server(sim(too_long=frozenset({"q13"})), api_key=KEY) as srv:
        s = collect(cfg_for(srv.url, models=("sim-a",), k=2), items, arch)
    recs = trials(arch)
    errs = [r for r in recs if r["error_kind"]]
    assert {r["item"] for r in errs} == {"q13"} and len(errs) == 2 and all(r["error_kind"] == "http_400" for r in errs)
    assert len(recs) == len(items) * 2 and s.mostly_errors == []


def test_mostly_api_errors_exit_1_then_retry_errors_asks_them_again(items, tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = tmp_path / "c.toml"
    base = (FIX / "config.toml").read_text().replace('"SIM_API_KEY"', f'"{ENV}"').replace(
        "max_retries = 0", "max_retries = 1").replace("backoff_base = 0.05", "backoff_base = 0.001")
    args = ["collect", str(cfg), "--items", str(FIX / "items.jsonl"), "--archive", str(arch), "--no-progress",
            "--models", "sim-a", "--k", "2"]
    with start_sim_server(sim(faults={"rate_500": 1.0}), api_key=KEY) as srv:
        cfg.write_text(base.replace("http://127.0.0.1:8765/v1", srv.url))
        res = CliRunner().invoke(app, args)
    n = len(items) * 2
    assert res.exit_code == 1, res.output
    assert f"model sim-a: {n} of {n} recorded trials are api_error (http_500 {n})" in res.output
    with start_sim_server(sim(), api_key=KEY) as srv:
        cfg.write_text(base.replace("http://127.0.0.1:8765/v1", srv.url))
        plain = CliRunner().invoke(app, args)  # without the flag: nothing left to ask, still mostly errors
        assert plain.exit_code == 1 and srv.stats["ok"] == 0
        res = CliRunner().invoke(app, [*args, "--retry-errors", "--format", "json"])
        assert srv.stats["ok"] == n
    assert res.exit_code == 0, res.output
    contents = read_archive(arch)
    assert contents.superseded == n and contents.errors == set()
    assert Counter((r["item"]) for _, r in contents.records) == {it.id: 2 for it in items}


@pytest.mark.parametrize("info, params, label, needle", [
    (ErrorInfo("HTTP 400: Unsupported parameter: 'max_tokens' is not supported with this model. Use "
               "'max_completion_tokens' instead. [unsupported_parameter]", "unsupported_parameter", "max_tokens"),
     {"max_tokens": 5}, "unsupported_parameter", "wants 'max_completion_tokens' instead of 'max_tokens'"),
    (ErrorInfo("HTTP 400: Unsupported value: 'temperature' does not support 0.2 with this model.",
               "unsupported_value", "temperature"), {"temperature": 0.2}, "unsupported_parameter",
     "remove or change [params] temperature"),
    (ErrorInfo("HTTP 400: [{'type': 'extra_forbidden', 'loc': ('body', 'reasoning_effort'), "
               "'msg': 'Extra inputs are not permitted'}]"), {"reasoning_effort": "low"}, "unsupported_parameter",
     "'reasoning_effort'"),
    (ErrorInfo("HTTP 400: litellm.BadRequestError: Invalid model name passed in model=gpt-x"), {}, "unknown_model",
     "model=gpt-x"),
    (ErrorInfo("HTTP 400: This model's maximum context length is 128 tokens. [context_length_exceeded]",
               "context_length_exceeded", "messages"), {"max_tokens": 5}, None, None),
    (ErrorInfo("HTTP 400: Invalid prompt: your prompt was flagged as potentially violating our usage policy.",
               "invalid_prompt", None), {}, None, None),
])
def test_classify_bad_request(info, params, label, needle):
    fault = classify_bad_request(info, params)
    if label is None:
        assert fault is None
    else:
        assert fault is not None and fault.label == label and needle in fault.message
