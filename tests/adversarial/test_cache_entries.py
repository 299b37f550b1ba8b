"""Issue 30, items 3 and 8: a cache entry is served only under the key it was stored with, and an entry that
is a FIFO, a link (to /dev/zero) or a device is never followed or read: a damaged entry, rebuilt."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.cachecli import MATRIX, env_for, invoke


def _entries(cache: Path, kind: str, ext: str) -> list[Path]:
    return sorted((cache / kind).glob(f"*/*.{ext}"))


def _limited() -> None:  # a child that reads /dev/zero for ever is stopped at 4 GB, not the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _run(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replicate", *args], cwd=cwd, env=env_for(cache),
                          capture_output=True, text=True, timeout=90, preexec_fn=_limited)


@pytest.mark.parametrize("kind,ext", [("labels", "labels"), ("runs", "run")])
def test_an_entry_copied_over_another_is_not_served(example_copy, tmp_path, kind, ext):
    cache = tmp_path / "cache"
    cold = invoke(example_copy, cache, *MATRIX)
    assert cold.returncode == 0, cold.stderr
    entries = _entries(cache, kind, ext)
    assert len(entries) == 4
    shutil.copyfile(entries[0], entries[1])  # a valid entry, under another key
    warm = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout  # the run's own labels and outputs, not the other run's
    assert f"{'label' if kind == 'labels' else 'run'} cache: hit" in warm.stderr
    assert entries[1].read_bytes() != entries[0].read_bytes()  # rewritten under its own key
    again = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert again.stdout == cold.stdout and "damaged" not in again.stderr and "corrupt" not in again.stderr


@pytest.mark.parametrize("what", ["fifo", "dev-zero"])
@pytest.mark.parametrize("kind,ext", [("labels", "labels"), ("runs", "run")])
def test_an_entry_that_is_not_a_regular_file_is_not_read(example_copy, tmp_path, kind, ext, what):
    cache = tmp_path / "cache"
    cold = _run(example_copy, cache, *MATRIX)
    assert cold.returncode == 0, cold.stderr
    target = _entries(cache, kind, ext)[0]
    target.unlink()
    if what == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    warm = _run(example_copy, cache, *MATRIX)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout
    assert "damaged" in warm.stderr  # counted as damaged and rewritten as a regular file
    assert target.is_file() and not target.is_symlink()


def test_an_entry_of_the_format_before_keys_is_a_quiet_miss(example_copy, tmp_path):
    from replicate.cachedir import unkeyed

    cache = tmp_path / "cache"
    cold = invoke(example_copy, cache, *MATRIX)
    for p in _entries(cache, "labels", "labels") + _entries(cache, "runs", "run"):
        p.write_bytes(unkeyed(p.read_bytes()))  # as an earlier version wrote them
    warm = invoke(example_copy, cache, "--verbose", *MATRIX)
    assert warm.stdout == cold.stdout and "damaged" not in warm.stderr
    assert warm.stderr.count("label cache: miss") == 4 and warm.stderr.count("run cache: miss") == 4
    again = invoke(example_copy, cache, "--verbose", *MATRIX)  # rewritten with their keys
    assert again.stderr.count("label cache: hit") == 4 and again.stderr.count("run cache: hit") == 4
