"""Issue 30, item 5: a device is refused where a file is needed, and a stream's line is bounded."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading

import pytest

from replicate.command_input import MAX_LINE_BYTES, read_input
from replicate.errors import BadInput
from support.paths import ROOT


def _limited() -> None:  # before the fix these read for ever: stop the child at 2 GB, not the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", [["parse"], ["score", "--items", "ITEMS", "--out", "OUT"],
                                     ["collect", "CONFIG", "--items"]])
def test_a_device_is_refused_at_once(tmp_path, device, command):
    args = [a.replace("ITEMS", device).replace("OUT", str(tmp_path / "t.jsonl"))
             .replace("CONFIG", str(ROOT / "fixtures" / "collect" / "config.toml")) for a in command]
    if command[0] != "collect":
        args.append(device)
    else:
        args += [device, "--archive", str(tmp_path / "a.jsonl"), "--dry-run"]
    p = subprocess.run([sys.executable, "-m", "replicate", *args], capture_output=True, text=True, timeout=60,
                       preexec_fn=_limited, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 2, p.stderr[-2000:]
    assert f"Error: {device}: " in p.stderr and "is a device, not a regular file" in p.stderr
    assert "Traceback" not in p.stderr


def _fifo_writer(path, data: bytes) -> threading.Thread:
    def write() -> None:
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except BrokenPipeError:  # the reader stopped at the bound: expected
            pass

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_a_stream_line_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_MAX_LINE_BYTES", str(1 << 20))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    t = _fifo_writer(fifo, b'{"a": 1}\n' + b"0" * (3 << 20))
    with pytest.raises(BadInput, match=r"pipe:2: a line longer than 1,048,576 bytes .*REPLICATE_MAX_LINE_BYTES"):
        read_input(fifo)
    t.join(10)


def test_a_stream_within_the_bound_reads_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLICATE_MAX_LINE_BYTES", str(1 << 20))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = (b"x" * ((1 << 20) - 1) + b"\n") * 3 + b"y" * 1000  # lines at the bound, across read chunks
    t = _fifo_writer(fifo, data)
    assert read_input(fifo) == data
    t.join(10)
    assert MAX_LINE_BYTES == 256 << 20  # the documented default (docs/readers.md)
