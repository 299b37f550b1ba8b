"""Root flags after the command, and a closed pipe: the command line as a shell user meets it (issue 32)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from replicate.cli.pipes import PIPE_CLOSED
from replicate.cli.rootflags import hoist
from support.cachecli import MATRIX, env_for, invoke, replicate


def test_hoist_moves_root_flags_in_front_and_stops_at_double_dash():
    assert hoist(["matrix", "--runs", "r.toml", "--no-cache", "-f", "json", "--verbose"]) == [
        "--no-cache", "--verbose", "matrix", "--runs", "r.toml", "-f", "json"]
    assert hoist(["parse", "--", "--verbose"]) == ["parse", "--", "--verbose"]
    assert hoist(["--no-cache", "floor"]) == ["--no-cache", "floor"]


def test_no_cache_and_verbose_after_the_command_are_accepted(example_copy, tmp_path):
    before = invoke(example_copy, tmp_path / "c", "--no-cache", *MATRIX)
    after = invoke(example_copy, tmp_path / "c", *MATRIX, "--no-cache")
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout


def test_no_cache_after_the_command_bypasses_the_caches_in_a_process(example_copy, tmp_path):
    cache = tmp_path / "c"
    first = replicate(example_copy, cache, *MATRIX)
    assert first.returncode == 0, first.stderr
    hit = replicate(example_copy, cache, *MATRIX, "--verbose")
    assert hit.stderr.count("run cache: hit") == 4
    bypass = replicate(example_copy, cache, *MATRIX, "--no-cache", "--verbose")
    assert bypass.returncode == 0, bypass.stderr
    assert "cache:" not in bypass.stderr
    assert bypass.stdout == first.stdout


def _closed_after_a_few_bytes(cwd, cache, *args: str) -> int:
    """Run the command with stdout and stderr on one pipe whose reader leaves after 10 bytes; the exit code."""
    p = subprocess.Popen([sys.executable, "-m", "replicate", *args], cwd=cwd, env=env_for(cache),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.stdout is not None
    p.stdout.read(10)
    p.stdout.close()
    return p.wait(timeout=60)


@pytest.mark.parametrize("cached", [False, True], ids=["cold", "warm"])
def test_a_closed_pipe_ends_quietly_with_its_own_code(example_copy, tmp_path, cached):
    # the matrix JSON (about 120 kB) is many times a pipe's buffer, so the writer meets the closed pipe
    cache = tmp_path / "c"
    if cached:
        assert replicate(example_copy, cache, *MATRIX).returncode == 0
    args = MATRIX if cached else ["--no-cache", *MATRIX]
    assert _closed_after_a_few_bytes(example_copy, cache, *args) == PIPE_CLOSED
