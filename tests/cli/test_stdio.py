"""`-` stands for standard input where a command reads a file and for standard output
where it writes one (the report then goes to stderr)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.config import load_config, load_items
from replicate.collect.runner import collect
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "example"
JUDGE_FILE = EXAMPLE / "results" / "alpha-2024-08_annotations.jsonl"
TRIALS_GZ = ROOT / "fixtures" / "trials-study" / "release" / "trials.jsonl.gz"
COLLECT = ROOT / "fixtures" / "collect"
P = "umbrela-fallback@1"


def run(*args, input: bytes | None = None):
    r = CliRunner().invoke(app, [str(a) for a in args], input=input)
    return r


def test_parse_reads_standard_input_like_the_file():
    data = JUDGE_FILE.read_bytes()
    from_file = json.loads(run("parse", JUDGE_FILE, "-p", P, "-f", "json").stdout)["runs"][0]
    from_stdin = run("parse", "-", "-p", P, "-f", "json", input=data)
    assert from_stdin.exit_code == 0, from_stdin.output
    got = json.loads(from_stdin.stdout)["runs"][0]
    assert got["run"] == "stdin"
    assert got["files"][0]["path"] == "-" and "release" not in got["files"][0]
    assert got["files"][0]["sha256"] == from_file["files"][0]["sha256"]
    for key in ("lines", "records", "parsed", "unparsed", "labels", "gold"):
        assert got[key] == from_file[key], key


def test_standard_input_comes_from_no_release(release, cache, tmp_path, monkeypatch):
    from replicate.fetch import fetch
    from replicate.provenance import find_release

    fetch(release.url, include=["README.md"], dest=tmp_path / "rel")
    monkeypatch.chdir(tmp_path / "rel")  # "-" is no file of the fetched release around it
    assert find_release("README.md") is not None and find_release("-") is None


def test_bad_standard_input_is_named_as_such():
    r = run("parse", "-", "-p", P, input=b'{"query_id": "1"\n')
    assert r.exit_code == 2 and r.stderr.startswith("Error: <stdin>:1: ")


def test_parse_labels_to_standard_output(tmp_path):
    r_file = run("parse", JUDGE_FILE, "-p", P, "--labels", tmp_path / "l.jsonl")
    r = run("parse", JUDGE_FILE, "-p", P, "--labels", "-")
    assert r.exit_code == 0, r.output
    assert r.stdout.encode() == (tmp_path / "l.jsonl").read_bytes()  # only the labels on stdout
    assert r.stderr.endswith(r_file.stdout)  # the report moved to stderr


def _trials_bytes() -> bytes:
    return gzip.decompress(TRIALS_GZ.read_bytes())


def _as_csv(jsonl: bytes) -> bytes:
    rows = [orjson.loads(line) for line in jsonl.splitlines() if line.strip()]
    cols = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else ("true" if r.get(k) is True else "false" if r.get(k) is False else r.get(k)))
                    for k in cols})
    return buf.getvalue().encode()


@pytest.mark.parametrize("shape", ["jsonl", "gzip", "csv"])
def test_items_reads_standard_input(tmp_path, shape):
    data = _trials_bytes()
    stdin = {"jsonl": data, "gzip": gzip.compress(data), "csv": _as_csv(data)}[shape]
    args = ["--edge", "mini-1:mini-2", "--null", "20", "-f", "json"]
    expected = json.loads(run("items", TRIALS_GZ, *args).stdout)
    got = run("items", "-", *args, input=stdin)
    assert got.exit_code == 0, got.output
    js = json.loads(got.stdout)
    assert js["cells"] == expected["cells"]


def test_items_per_item_rows_to_standard_output(tmp_path):
    args = ["--edge", "mini-1:mini-2", "--null", "0"]
    shown = run("items", TRIALS_GZ, *args, "--per-item", tmp_path / "rows.jsonl")
    r = run("items", TRIALS_GZ, *args, "--per-item", "-")
    assert r.exit_code == 0, r.output
    assert r.stdout.encode() == (tmp_path / "rows.jsonl").read_bytes()
    assert shown.stdout in r.stderr


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stdio")
    with start_sim_server(load_sim_config(COLLECT / "sim.toml")) as srv:
        cfg = load_config(COLLECT / "config.toml").with_overrides(base_url=srv.url, api_key_env="PATH")
        cfg = replace(cfg, retry=replace(cfg.retry, backoff_base=0.001))
        collect(cfg, load_items(COLLECT / "items.jsonl"), tmp / "a.jsonl")
    return tmp / "a.jsonl"


def test_score_out_to_standard_output_and_archive_from_standard_input(archive, tmp_path):
    items = COLLECT / "items.jsonl"
    run("score", archive, "--items", items, "--out", tmp_path / "t.jsonl")
    r = run("score", archive, "--items", items, "--out", "-")
    assert r.exit_code == 0, r.output
    assert r.stdout.encode() == (tmp_path / "t.jsonl").read_bytes()
    assert "trials written to standard output" in r.stderr
    r = run("score", "-", "--items", items, "--out", "-", input=archive.read_bytes())
    assert r.exit_code == 0, r.output
    assert r.stdout.encode() == (tmp_path / "t.jsonl").read_bytes()


def test_collect_refuses_standard_output_as_archive():
    r = run("collect", COLLECT / "config.toml", "--items", COLLECT / "items.jsonl", "--archive", "-")
    assert r.exit_code == 2
    assert "--archive must name a file" in r.stderr


def test_verify_note_to_standard_output():
    claims = EXAMPLE / "claims.toml"
    md = run("verify", claims, "--root", EXAMPLE, "--no-fail", "-f", "markdown", "--date", "2026-01-01")
    r = run("verify", claims, "--root", EXAMPLE, "--no-fail", "--out", "-", "--date", "2026-01-01")
    assert r.exit_code == 0, r.output
    assert r.stdout == md.stdout  # the note, as -f markdown prints it
    table = run("verify", claims, "--root", EXAMPLE, "--no-fail", "--date", "2026-01-01")
    assert table.stdout in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "-", "-"),
        ("compare", "--old", "-", "--old", JUDGE_FILE, "--new", "-"),
        ("chain", "-", "-"),
    ],
)
def test_standard_input_given_twice_is_refused_not_read_twice(args):
    # One stream cannot be both sides: reading it "again" would compare a run with itself.
    r = run(*args, "-p", P, input=JUDGE_FILE.read_bytes())
    assert r.exit_code == 2, r.output
    assert "standard input" in r.stderr or "'-' is given twice" in r.stderr
    assert "compared" not in r.stdout
