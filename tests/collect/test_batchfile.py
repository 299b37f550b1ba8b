"""--export-batch / --import-batch: request JSONL for a server driven by hand (vLLM run-batch reads the
same format), results appended to the crash-safe archive; a second import records nothing twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import orjson
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from replicate.collect.batchfile import parse_custom_id
from replicate.collect.config import load_items
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "collect"


def run_batch_by_hand(requests_path: Path, results_path: Path, keep=lambda n: True) -> None:
    """What vLLM run-batch does: answer each request line with a result line (here through sim-server's
    own answering logic, no transport faults)."""
    sim = load_sim_config(FIX / "sim.toml")
    with start_sim_server(sim) as srv:
        out = []
        for n, line in enumerate(requests_path.read_bytes().splitlines()):
            req = orjson.loads(line)
            assert req["method"] == "POST" and req["url"] == "/v1/chat/completions"
            status, body, _ = srv.answer(req["body"], transport=False)
            if keep(n):
                out.append({"id": f"r{n}", "custom_id": req["custom_id"],
                            "response": {"status_code": status, "request_id": f"q{n}", "body": body},
                            "error": None})
    results_path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in out))


def test_export_then_import_then_resume_exactly_k_per_item(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_API_KEY", "unused")
    cfg, items = FIX / "config.toml", FIX / "items.jsonl"
    arch, req, res = tmp_path / "a.jsonl", tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    base = ["collect", str(cfg), "--items", str(items), "--archive", str(arch)]
    r = CliRunner().invoke(app, [*base, "--export-batch", str(req), "--format", "json"])
    assert r.exit_code == 0, r.output
    n_items = len(load_items(items))
    assert json.loads(r.stdout)["lines"] == n_items * 5 * 2
    lines = [orjson.loads(x) for x in req.read_bytes().splitlines()]
    assert lines[0]["body"]["reasoning_effort"] == "medium" and lines[0]["body"]["model"] == "sim-a"
    assert len({x["custom_id"] for x in lines}) == len(lines)
    run_batch_by_hand(req, res, keep=lambda n: n % 3 != 0)  # a partial result file
    r = CliRunner().invoke(app, [*base, "--import-batch", str(res), "--format", "json"])
    assert r.exit_code == 0, r.output
    first = json.loads(r.stdout)
    assert first["recorded"] == len(lines) - len(range(0, len(lines), 3))
    # importing the same file again records nothing twice
    r = CliRunner().invoke(app, [*base, "--import-batch", str(res), "--format", "json"])
    assert json.loads(r.stdout) == {**first, "recorded": 0, "api_errors": 0, "already_recorded": first["lines"]}
    # the next export asks only for what is missing; answering it completes the collection
    r = CliRunner().invoke(app, [*base, "--export-batch", str(req), "--format", "json"])
    assert json.loads(r.stdout)["lines"] == len(range(0, len(lines), 3))
    run_batch_by_hand(req, res)
    CliRunner().invoke(app, [*base, "--import-batch", str(res)])
    recs = [r for _, r in read_archive(arch).records]
    per = Counter((r["model"], r["item"]) for r in recs)
    assert set(per.values()) == {5} and len(per) == n_items * 2
    q13 = [r for r in recs if r["item"] == "q13"]  # too_long in sim.toml: a request-specific 400
    assert all(r["error_kind"] == "http_400" for r in q13)
    ok = [r for r in recs if not r["error_kind"]]
    assert all(r["response_id"] and r["response_model"] for r in ok)


def test_bad_result_line_names_its_line(tmp_path, monkeypatch):
    res = tmp_path / "res.jsonl"
    res.write_text(json.dumps({"custom_id": "sim-a|q01|0", "response": None, "error": None}) + "\n"
                   + json.dumps({"custom_id": "nope|q01|0"}) + "\n")
    r = CliRunner().invoke(app, ["collect", str(FIX / "config.toml"), "--items", str(FIX / "items.jsonl"),
                                 "--archive", str(tmp_path / "a.jsonl"), "--import-batch", str(res)])
    assert r.exit_code == 2 and "res.jsonl:1" in r.output


def test_parse_custom_id():
    assert parse_custom_id("a|b|c|3", ["a", "a|b"]) == ("a|b", "c", 3)
    assert parse_custom_id("m|item|with|bars|0", ["m"]) == ("m", "item|with|bars", 0)
    assert parse_custom_id("m|x|y", ["m"]) is None and parse_custom_id("z|x|1", ["m"]) is None

