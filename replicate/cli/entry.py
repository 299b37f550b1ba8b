"""The ``replicate`` console script: root flags put in front, then the Typer application.

A read-and-compute command (:data:`COMMANDS`) leaves without the
interpreter's teardown, which frees every object and module one by one:
about a tenth of a second after a 22-run matrix (``bench/bench_process.py``).
The standard streams are flushed and the ``atexit`` functions run first, as
on a normal exit; when either cannot be done cleanly (a closed pipe, a thread
still running) the process exits the usual way.

The command line runs BLAS on one thread (:data:`BLAS_THREADS`, unless the
environment sets them): its matrix products are small (the largest, a
bootstrap's weights by the clusters' counts, takes milliseconds), and a
thread pool woken for each costs more than it saves: about 0.5 s of CPU and
0.05 s of wall time in a 22-run matrix, with byte-identical output (the
products are exact integer counts, or split by rows, not by their sums).
The library itself leaves BLAS alone.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from replicate.cli.rootflags import ROOT_FLAGS

#: Commands (the words before the options) that only read files and compute: no file written, no
#: network, nothing left running.
COMMANDS = frozenset({
    ("parse",), ("compare",), ("chain",), ("cells",), ("floor",), ("matrix",), ("agreement",),
    ("parsers", "audit"), ("items",), ("screen",),
})
#: Thread counts of the BLAS libraries numpy may be built with, set before numpy is imported.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def _app() -> None:
    from replicate.cli.app import main

    main()


def main() -> None:
    from replicate.cli.rootflags import hoist

    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")
    _utf8_mode()
    argv = hoist(sys.argv[1:])
    sys.argv[1:] = argv  # typer reads sys.argv
    code = _exit_code(_app)
    try:
        sys.stdout.flush()  # what is still buffered: to /dev/full or a closed pipe, one line, not a traceback
    except (OSError, ValueError) as exc:
        from replicate.cli.pipes import fail_for

        code = fail_for(exc) if isinstance(exc, OSError) else code
    if read_and_compute(argv):
        leave(code)
    sys.exit(code)


def _utf8_mode() -> None:
    """Under a locale whose encoding is ASCII (``LC_ALL=C`` with ``PYTHONUTF8=0``), run again in Python's UTF-8
    mode: file names, files and output are read and written as UTF-8, as under any UTF-8 locale, instead of
    failing on the first non-ASCII name. ``REPLICATE_NO_UTF8=1`` keeps the locale's encoding."""
    import codecs

    if sys.flags.utf8_mode or os.environ.get("REPLICATE_NO_UTF8") or not getattr(sys, "orig_argv", None):
        return
    if codecs.lookup(sys.getfilesystemencoding()).name != "ascii":
        return
    os.environ["REPLICATE_NO_UTF8"] = "1"  # once only
    try:
        os.execv(sys.executable, [sys.executable, "-X", "utf8", *sys.orig_argv[1:]])
    except OSError:
        return


def _exit_code(main: Callable[[], Any]) -> int:
    """Run the command line; its exit code (``SystemExit``'s, 0 when it returns)."""
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def read_and_compute(argv: Sequence[str]) -> bool:
    """Whether ``argv`` (root flags in front) runs a command of :data:`COMMANDS`."""
    args = list(argv)
    while args and args[0] in ROOT_FLAGS:
        args.pop(0)
    if not args or args[0].startswith("-"):
        return False  # --version, --help, completion options, or an unknown option
    words = tuple(args[:2]) if args[0] == "parsers" else (args[0],)
    return words in COMMANDS


def leave(code: int) -> None:
    """Exit with ``code`` now, skipping the teardown, unless a live thread or an unflushable stream needs the normal exit.

    Returns (having done nothing irreversible) when the normal exit is needed.
    """
    import atexit
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return  # the normal exit joins it
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # e.g. a closed pipe: the normal exit reports it as Python does
    atexit._run_exitfuncs()  # run once: they are cleared, so a normal exit after this does not repeat them
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
