"""Issue 43, items 6, 7 and 10: a failing system (a full disk, standard output to /dev/full, an ASCII locale) and
numbers no computation takes end a command with one line 'Error: ...' and exit 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.archive import read_archive
from replicate.collect.simserver import DEFAULT_SIM, start_sim_server
from support.paths import ROOT

EXAMPLE = ROOT / "fixtures" / "example"
RUN = EXAMPLE / "results" / "alpha-2024-05_annotations.jsonl"
TRIALS = ROOT / "fixtures" / "trials-study" / "release" / "trials.jsonl.gz"
ITEMS = ROOT / "fixtures" / "collect" / "items.jsonl"


def _cli(*argv: str, stdout=subprocess.PIPE, env: dict[str, str] | None = None, pre: str = ""):
    """The console script's own entry point (the guard lives there and in the group), in a subprocess."""
    code = f"{pre}\nimport sys\nsys.argv = ['replicate', *sys.argv[1:]]\nfrom replicate.cli.entry import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", code, *argv], stdout=stdout, stderr=subprocess.PIPE, timeout=300,
                          env={**os.environ, **(env or {})})


def _one_error_line(stderr: bytes | str) -> str:
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert "Traceback" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, text
    return errors[0]


@pytest.mark.parametrize("argv", [
    ["parsers", "list"],
    ["cells", "6252", "5776", "1455", "7163"],
    ["parse", str(RUN), "--parser", "umbrela-strict@1"],
    ["items", str(TRIALS), "--edge", "mini-1:mini-2", "--null", "0"],
    ["parsers", "list", "--format", "json"],
])
def test_standard_output_to_dev_full_is_one_line_and_exit_2(argv):
    with open("/dev/full", "wb") as full:
        proc = _cli(*argv, stdout=full)
    assert proc.returncode == 2
    assert _one_error_line(proc.stderr) == "Error: a read or write failed: No space left on device"


def test_a_disk_filling_during_collect_is_one_line_and_the_archive_resumes(tmp_path):
    arch = tmp_path / "a.jsonl"
    cfg = tmp_path / "c.toml"
    with start_sim_server(DEFAULT_SIM) as srv:
        cfg.write_text(f'[endpoint]\nbase_url = "{srv.url}"\napi_key_env = "ADV_SIM_KEY"\n'
                       '[collection]\nmodels = ["sim-a"]\nk = 4\nconcurrency = 2\ntimeout = 5.0\n')
        argv = ["collect", str(cfg), "--items", str(ITEMS), "--archive", str(arch), "--no-progress"]
        limit = "import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n" \
                "resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))"
        proc = _cli(*argv, env={"ADV_SIM_KEY": "sk-sim-0123456789"}, pre=limit)
        assert proc.returncode == 2
        assert _one_error_line(proc.stderr) == "Error: a read or write failed: File too large"
        assert 0 < arch.stat().st_size <= 6000
        again = _cli(*argv, env={"ADV_SIM_KEY": "sk-sim-0123456789"})
        assert again.returncode == 0, again.stderr
    contents = read_archive(arch)
    assert len(contents.done) == 20 * 4 and not contents.torn_bytes


def test_an_ascii_locale_with_non_ascii_names_reads_and_prints_them(tmp_path):
    name = tmp_path / "résultats-日本.jsonl"
    name.write_bytes(RUN.read_bytes())
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    proc = _cli("parse", str(name), "--parser", "umbrela-strict@1", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr.decode()
    assert "résultats-日本: read with umbrela-strict@1".encode() in proc.stdout  # in UTF-8, as under a UTF-8 locale
    kept = _cli("parse", str(name), "--parser", "umbrela-strict@1", env={**env, "REPLICATE_NO_UTF8": "1"})
    assert kept.returncode == 2
    assert _one_error_line(kept.stderr).startswith("Error: text that the locale's encoding cannot hold")


@pytest.mark.parametrize(("argv", "says"), [
    (["cells", "1", "1", "1", "1", "--seed", "-1"], "'--seed': -1: a seed is a whole number from 0 to"),
    (["compare", str(RUN), str(RUN), "--seed", "-1"], "'--seed': -1: a seed is a whole number from 0 to"),
    (["items", str(TRIALS), "--edge", "mini-1:mini-2", "--seed", "-1"], "a seed is a whole number"),
    (["cells", str(10**23), "1", "1", "1"], "'BOTH': 100000000000000000000000 is larger than 9007199254740991"),
    (["sim-server", "--port", "70000"], "'--port'"),
    (["plan", "-n", "10", "--alpha", "nan"], "'--alpha': nan is not a finite number"),
    (["plan", "-n", "10", "--base-rate", "inf"], "'--base-rate': inf is not a finite number"),
    (["collect", "c.toml", "--items", "i", "--archive", "a", "--batch-deadline", "nan"], "not a finite number"),
])
def test_a_number_no_computation_takes_is_one_error_line(argv, says):
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2
    line = _one_error_line(res.stderr)
    assert says in line, line


def test_numbers_at_the_bounds_still_work():
    res = CliRunner().invoke(app, ["cells", *[str(2**53 - 1)] * 4, "--seed", str(2**64 - 1), "--replicates", "10",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    assert str(2**64 - 1) in res.stdout  # the seed recorded


@pytest.mark.parametrize(("toml", "says"), [
    ("[models.a]\np = 1.5\n", "[models.a] p must be in [0, 1], got 1.5"),
    ("[models.a]\np = 0.5\n[models.a.items]\nq1 = -0.1\n", "[models.a] items.q1 must be in [0, 1], got -0.1"),
    ("[models.a]\np = 0.5\n[faults]\nhang_seconds = nan\n", "[faults] hang_seconds must be finite and >= 0, got nan"),
    ("[models.a]\np = 0.5\n[faults]\nretry_after = inf\n", "[faults] retry_after must be finite and >= 0, got inf"),
    ("latency = -1\n[models.a]\np = 0.5\n", "latency must be finite and >= 0, got -1"),
])
def test_sim_server_refuses_probabilities_out_of_range_and_non_finite_numbers(tmp_path, toml, says):
    cfg = tmp_path / "sim.toml"
    cfg.write_text(toml)
    res = CliRunner().invoke(app, ["sim-server", "--config", str(cfg)])
    assert res.exit_code == 2
    assert _one_error_line(res.stderr) == f"Error: {cfg}: {says}"


def test_a_cache_path_that_is_not_a_folder_is_one_line(tmp_path, monkeypatch):
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file")
    monkeypatch.setenv("REPLICATE_CACHE_DIR", str(not_a_folder))
    res = CliRunner().invoke(app, ["fetch", "org/study", "--offline", "--dest", str(tmp_path / "d")])
    assert res.exit_code == 2
    assert _one_error_line(res.stderr) == (f"Error: the cache {not_a_folder} is not a folder (REPLICATE_CACHE_DIR "
                                           "names it): name a folder, or unset REPLICATE_CACHE_DIR")
    assert not (tmp_path / "d").exists()  # the destination made for the fetch is removed again


def _usage_table(tmp_path: Path) -> Path:
    rows = [{"model": m, "item": f"i{i}", "trial": t, "benchmark": "b", "category": "correct" if (i + t) % 2 else "wrong",
             "prompt_tokens": 10 + i, "completion_tokens": 5 + t} for m in ("a", "b") for i in range(4) for t in range(2)]
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return p


def test_costs_plots_at_a_path_that_cannot_be_made_is_one_line(tmp_path):
    pytest.importorskip("matplotlib")
    table = _usage_table(tmp_path)
    (tmp_path / "file").write_text("x")
    res = CliRunner().invoke(app, ["costs", str(table), "--edge", "a:b", "--replicates", "0",
                                   "--plots", str(tmp_path / "file" / "sub")])
    assert res.exit_code == 2
    assert _one_error_line(res.stderr) == (f"Error: --plots: cannot make the folder {tmp_path / 'file' / 'sub'}: "
                                           "Not a directory")
    res = CliRunner().invoke(app, ["costs", str(table), "--replicates", "0", "--plots", str(tmp_path / "file")])
    assert res.exit_code == 2
    assert _one_error_line(res.stderr) == f"Error: --plots {tmp_path / 'file'} is not a folder: name a folder to write into"
