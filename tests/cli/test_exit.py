"""Leaving the process: a read-and-compute command skips the interpreter's teardown, losing nothing.

Each case runs in a fresh interpreter, since :func:`replicate.cli.entry.leave`
ends the process it runs in.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from replicate.cli.entry import read_and_compute
from support.cachecli import MATRIX, env_for, invoke, replicate


def python(code: str, tmp_path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env_for(tmp_path / "cache"), cwd=tmp_path)


def test_a_matrix_leaves_early_with_every_byte_written_and_its_atexit_functions_run(example_copy, tmp_path):
    # the output (many times a pipe's buffer) arrives whole; atexit functions run once, as on a normal exit
    code = f"""
        import atexit, os, runpy, sys
        atexit.register(lambda: os.write(2, b"ATEXIT\\n"))
        sys.argv = ["replicate", "--no-cache", *{MATRIX!r}]
        os.chdir({str(example_copy)!r})
        runpy.run_module("replicate", run_name="__main__")
        """
    p = python(code, tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("ATEXIT") == 1
    assert json.loads(p.stdout) == json.loads(invoke(example_copy, tmp_path / "c2", *MATRIX).stdout)


def test_an_error_keeps_its_exit_code_and_message(example_copy, tmp_path):
    p = replicate(example_copy, tmp_path / "cache", "matrix", "--runs", "missing.toml", "-p", "umbrela-fallback@1")
    assert p.returncode == 2
    assert "missing.toml" in p.stderr and p.stdout == ""


@pytest.mark.parametrize(("argv", "expected"), [
    (["matrix", "--runs", "r.toml"], True),
    (["--no-cache", "--verbose", "chain", "a", "b"], True),
    (["parsers", "audit", "-p", "x@1"], True),
    (["parsers", "list"], False),
    (["fetch", "x"], False),
    (["collect", "run"], False),
    (["--version"], False),
    ([], False),
])
def test_only_read_and_compute_commands_leave_early(argv, expected):
    assert read_and_compute(argv) is expected


def test_a_live_thread_gets_the_normal_exit_which_joins_it(tmp_path):
    p = python("""
        import sys, threading, time
        from replicate.cli.entry import leave
        t = threading.Thread(target=lambda: (time.sleep(0.3), print("THREAD DONE", flush=True)))
        t.start()
        leave(3)
        print("RETURNED", flush=True)
        sys.exit(3)
        """, tmp_path)
    assert p.returncode == 3
    assert p.stdout.split() == ["RETURNED", "THREAD", "DONE"]


def test_a_stream_that_cannot_be_flushed_gets_the_normal_exit(tmp_path):
    p = python("""
        import os, sys
        from replicate.cli.entry import leave
        class Broken:
            def write(self, s): return len(s)
            def flush(self): raise BrokenPipeError(32, "Broken pipe")
        real, sys.stdout = sys.stdout, Broken()
        leave(0)
        os.write(2, b"RETURNED\\n")
        """, tmp_path)
    assert "RETURNED" in p.stderr


def test_leave_exits_with_the_code_given(tmp_path):
    p = python("""
        from replicate.cli.entry import leave
        print("before")
        leave(7)
        print("not reached")
        """, tmp_path)
    assert (p.returncode, p.stdout) == (7, "before\n")


def test_the_command_line_runs_blas_on_one_thread_unless_told_and_the_output_does_not_depend_on_it(tmp_path):
    # a release big enough for threaded products (8 runs, about 3,000 items in 30 queries): the bootstrap's
    # weights x counts product and the difficulty refits give the same bytes on 1 and on 4 BLAS threads
    from replicate.examples.judge_release import Split, Version, make_release, runs_toml

    release = make_release(
        tmp_path / "rel", [Version(f"v{k}", accuracy=0.5 + 0.03 * k) for k in range(8)],
        splits=[Split("results", queries=30, docs_per_query=100, first_query_id=1)], seed=3,
    )
    (tmp_path / "rel" / "runs.toml").write_text(runs_toml(release), encoding="utf-8")
    args = ["--no-cache", "matrix", "--runs", "runs.toml", "-p", "umbrela-fallback@1", "-f", "json", "--jobs", "1"]
    outs = {}
    for threads in (None, "1", "4"):
        env = {k: v for k, v in env_for(tmp_path / "cache").items() if k != "OPENBLAS_NUM_THREADS"}
        if threads is not None:
            env["OPENBLAS_NUM_THREADS"] = threads
        code = ("import os, runpy, sys; sys.argv = ['replicate', *sys.argv[1:]]; import atexit; "
                "atexit.register(lambda: os.write(2, ('BLAS=' + os.environ['OPENBLAS_NUM_THREADS']).encode())); "
                "runpy.run_module('replicate', run_name='__main__')")
        p = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path / "rel", env=env, capture_output=True,
                           text=True)
        assert p.returncode == 0, p.stderr
        assert p.stderr.endswith(f"BLAS={threads or '1'}")
        outs[threads] = p.stdout
    assert outs[None] == outs["1"] == outs["4"]
    assert len(json.loads(outs[None])["pairs"]) == 56
