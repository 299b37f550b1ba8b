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


needs_fork = pytest.mark.skipif(
    not hasattr(__import__("os"), "fork") or len(getattr(__import__("os"), "sched_getaffinity", lambda _: ())(0)) < 2,
    reason="a fork beside needs os.fork and two CPUs",
)


@needs_fork
def test_beside_process_computes_in_a_forked_child_and_returns_its_value(tmp_path):
    p = run(tmp_path, """
        import os
        import numpy as np
        from replicate.background import Forked, beside_process
        parent = os.getpid()
        h = beside_process(lambda a: (os.getpid(), np.cumsum(a)), np.arange(5))
        pid, value = h.result()
        print(type(h).__name__, pid != parent, value.tolist(), h.result()[1].tolist())
        """)
    assert p.stdout.split() == ["Forked", "True", "[0,", "1,", "3,", "6,", "10]", "[0,", "1,", "3,", "6,", "10]"], p.stderr


@needs_fork
def test_the_childs_exception_is_raised_in_the_parent_and_one_that_does_not_pickle_as_its_text(tmp_path):
    p = run(tmp_path, """
        import threading
        from replicate.background import beside_process
        def bad():
            raise ValueError("no such edge: 3 -> 3")
        class Odd(Exception):
            def __reduce__(self):
                raise TypeError("cannot pickle")
        def odd():
            raise Odd("held a lock")
        for fn in (bad, odd):
            try:
                beside_process(fn).result()
            except Exception as exc:
                print(type(exc).__name__, "|", exc)
        """)
    assert p.stdout.splitlines() == ["ValueError | no such edge: 3 -> 3", "RuntimeError | Odd: held a lock"], p.stderr


@needs_fork
def test_a_child_that_dies_has_its_work_done_again_in_the_parent(tmp_path):
    p = run(tmp_path, """
        import os, signal
        from replicate.background import Forked, beside_process
        parent = os.getpid()
        def work():
            if os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)  # killed (out of memory, say) before it sends anything
            return os.getpid()
        h = beside_process(work)
        print(type(h).__name__, h.result() == parent)
        """)
    assert p.stdout.split() == ["Forked", "True"], p.stderr


@needs_fork
def test_no_fork_beside_another_thread_or_when_the_environment_says_so(tmp_path):
    p = run(tmp_path, """
        import os, threading
        from replicate.background import beside_process
        print(type(beside_process(os.getpid)).__name__)
        stop = threading.Event()
        t = threading.Thread(target=stop.wait, name="someone-elses"); t.start()
        h = beside_process(os.getpid)
        print(type(h).__name__, h.result() == os.getpid())
        stop.set(); t.join()
        os.environ["REPLICATE_NO_FORK"] = "1"
        print(type(beside_process(os.getpid)).__name__)
        """)
    assert p.stdout.split() == ["Forked", "Beside", "True", "Beside"], p.stderr


@needs_fork
def test_the_child_neither_repeats_the_parents_buffered_output_nor_runs_its_exit_handlers(tmp_path):
    p = run(tmp_path, """
        import atexit, sys
        from replicate.background import beside_process
        atexit.register(lambda: print("exit handler"))
        sys.stdout.write("buffered before the fork; ")
        print(beside_process(lambda: 6 * 7).result())
        """)
    assert p.stdout == "buffered before the fork; 42\nexit handler\n", p.stderr


@needs_fork
def test_a_matrix_is_the_same_whether_its_refits_ran_in_a_child_or_a_thread(tmp_path):
    """The library's matrix with intervals over the bundled example (4+ runs, query clusters): the refits
    fork where they may; with REPLICATE_NO_FORK they run in a thread. The JSON is the same, byte for byte."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = f"""
        import os, sys, hashlib
        import replicate.background as bg
        forks = []
        real = bg.Forked.__init__
        def counted(self, *a):
            forks.append(1)
            real(self, *a)
        bg.Forked.__init__ = counted
        from replicate.cli.app import app
        from typer.testing import CliRunner
        os.chdir({str(root)!r})
        res = CliRunner().invoke(app, ["matrix", "--runs", "fixtures/example/runs.toml", "-p", "umbrela-fallback@1",
                                       "-f", "json", "--replicates", "300"])
        assert res.exit_code == 0, res.output
        print(len(forks), hashlib.sha256(res.stdout.encode()).hexdigest())
        """
    forked = run(tmp_path, code)
    assert forked.returncode == 0, forked.stderr
    code_threads = "import os; os.environ['REPLICATE_NO_FORK'] = '1'\n" + textwrap.dedent(code)
    threaded = run(tmp_path, code_threads)
    assert threaded.returncode == 0, threaded.stderr
    n_forked, digest_forked = forked.stdout.split()
    n_threaded, digest_threaded = threaded.stdout.split()
    assert (int(n_forked), int(n_threaded)) == (1, 0)
    assert digest_forked == digest_threaded


@needs_fork
def test_a_child_whose_value_is_never_asked_for_is_stopped_and_reaped(tmp_path):
    p = run(tmp_path, """
        import gc, os, time
        from replicate.background import beside_process
        h = beside_process(time.sleep, 30)
        pid = h._pid
        t0 = time.monotonic()
        del h
        gc.collect()
        try:
            os.waitpid(pid, os.WNOHANG)
            print("not reaped")
        except ChildProcessError:
            print("reaped", time.monotonic() - t0 < 5)
        """)
    assert p.stdout.split() == ["reaped", "True"], p.stderr
