"""replicate.background: imports in a background thread, never half-done at a fork, never hiding an error.

Each case runs in a fresh interpreter with a module of its own on the path
whose import is slow (a sleep), so a fork or an import in the main thread
lands while the prefetch is under way.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from replicate.background import beside

SLOW = """
import time
STARTED = time.monotonic()
time.sleep(0.4)
DONE = True
"""


def run(tmp_path, code: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "slow_mod.py").write_text(SLOW, encoding="utf-8")
    (tmp_path / "broken_mod.py").write_text("raise RuntimeError('broken at import')\n", encoding="utf-8")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tmp_path), "PATH": ""})


def test_prefetch_returns_at_once_and_the_import_completes_in_the_background(tmp_path):
    p = run(tmp_path, """
        import sys, time
        from replicate.background import prefetch, wait
        t0 = time.monotonic()
        prefetch("slow_mod")
        print(time.monotonic() - t0 < 0.2)
        wait()
        print(sys.modules["slow_mod"].DONE)
        """)
    assert p.stdout.split() == ["True", "True"], p.stderr


def test_the_commands_own_import_waits_for_the_module_to_be_whole(tmp_path):
    p = run(tmp_path, """
        import time
        from replicate.background import prefetch
        prefetch("slow_mod")
        time.sleep(0.05)
        import slow_mod
        print(slow_mod.DONE)
        """)
    assert p.stdout.split() == ["True"], p.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_fork_waits_for_the_prefetch_so_the_child_never_sees_a_half_imported_module(tmp_path):
    p = run(tmp_path, """
        import os, sys
        from replicate.background import prefetch
        prefetch("slow_mod")
        pid = os.fork()
        if pid == 0:
            mod = sys.modules.get("slow_mod")
            os.write(1, f"child {getattr(mod, 'DONE', False)}\\n".encode())
            os._exit(0)
        os.waitpid(pid, 0)
        print("parent", sys.modules["slow_mod"].DONE)
        """)
    assert sorted(p.stdout.splitlines()) == ["child True", "parent True"], p.stderr


def test_a_failed_prefetch_is_silent_and_the_commands_import_raises_it(tmp_path):
    p = run(tmp_path, """
        from replicate.background import prefetch, wait
        prefetch("broken_mod", "slow_mod")
        wait()
        import slow_mod  # the modules after a failed one are still prefetched
        print(slow_mod.DONE)
        try:
            import broken_mod
        except RuntimeError as exc:
            print("raised:", exc)
        """)
    assert p.stdout.splitlines() == ["True", "raised: broken at import"], p.stderr
    assert p.stderr == ""


def test_modules_already_imported_start_no_thread(tmp_path):
    p = run(tmp_path, """
        import threading
        from replicate.background import prefetch
        import json
        prefetch("json", "os")
        print(threading.active_count())
        """)
    assert p.stdout.split() == ["1"], p.stderr


def test_beside_runs_at_the_same_time_and_gives_the_value():
    started, go = threading.Event(), threading.Event()

    def work(x):
        started.set()
        assert go.wait(5), "the caller's thread was not free while this ran"
        return x * 2

    job = beside(work, 21)
    assert started.wait(5)  # running while this thread goes on
    go.set()
    assert job.result() == 42
    assert job.result() == 42  # asked again: the same value


def test_beside_raises_the_functions_own_error_in_the_caller():
    def work():
        raise ValueError("bad counts")

    job = beside(work)
    with pytest.raises(ValueError, match="bad counts"):
        job.result()
