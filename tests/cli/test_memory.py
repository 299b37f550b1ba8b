"""The command line's malloc settings: applied on glibc, skipped elsewhere, the numbers unchanged."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from replicate.cli import entry


def fresh(code: str) -> str:
    """stdout of ``code`` in a fresh interpreter (the settings are process-wide)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return p.stdout


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_glibc_takes_every_setting_and_freed_arrays_are_reused():
    # arrays of 1, 2, ..., 20 MB, each filled and freed: with the settings each one grows the last one's
    # memory, so the pages faulted in come to about the largest array's (glibc's defaults fault in more
    # than half as much again, giving each array past its last threshold fresh pages)
    out = fresh("""
        import resource
        import numpy as np
        from replicate.cli.entry import keep_freed_memory
        print(keep_freed_memory())
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for k in range(1, 21):
            np.ones(k << 17).sum()
        print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        """)
    applied, faults = out.split()
    assert applied == "True"
    largest = (20 << 20) // 4096
    assert int(faults) < 1.25 * largest


def test_elsewhere_nothing_is_asked(monkeypatch):
    monkeypatch.setattr(entry.sys, "platform", "darwin")
    assert entry.keep_freed_memory() is False
