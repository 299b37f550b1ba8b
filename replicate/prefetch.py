"""Importing modules a command will need, in a background thread, while it waits on something else.

A command that will show exact McNemar p-values needs ``scipy.special``
(about 0.14 s to import), but only at its last step. :func:`prefetch` starts
that import in a daemon thread while the command waits on its worker
processes or runs numpy code that releases the GIL, so the import is paid
for in time that was idle.

Safe by construction:

- a process forked while a prefetch is under way would inherit a
  half-taken module lock; a fork first waits for every prefetch to finish
  (``os.register_at_fork``), and the callers start prefetches after their
  worker processes have started;
- an import that fails here is ignored: the command's own import of the
  module raises the error where it is needed, as without a prefetch;
- the command's own import of a module being prefetched waits for it (the
  import system's module locks), and the modules prefetched never import
  replicate's own, so the two threads never wait on each other.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading

_running: list[threading.Thread] = []
_hooked = False


def prefetch(*modules: str) -> None:
    """Import ``modules`` (those not imported yet) in a background thread; returns at once."""
    missing = [m for m in modules if m not in sys.modules]
    if not missing:
        return
    global _hooked
    if not _hooked and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=wait)
        _hooked = True
    thread = threading.Thread(target=_import, args=(missing,), name="replicate-prefetch", daemon=True)
    _running.append(thread)
    thread.start()


def wait() -> None:
    """Block until every prefetch has finished."""
    while _running:
        _running.pop().join()


def _import(modules: list[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the command's own import raises it where it is needed
            pass
