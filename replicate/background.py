"""Work in a background thread while this one does something else: imports, and numpy work beside numpy work.

:func:`beside` runs a function in a thread and gives a handle whose
:meth:`Beside.result` joins it and returns its value or raises its
exception: for two computations that need each other's inputs only (e.g. an
edge bootstrap and the difficulty refits of the same edges), mostly numpy
code that releases the GIL, so a second core runs the second.

:func:`prefetch` imports modules a command will need. A command that will show exact McNemar p-values needs ``scipy.special``
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
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Beside(Generic[T]):
    """A function running in a thread of its own; :meth:`result` waits for it."""

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self._value: list[T] = []
        self._error: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(fn, args), name="replicate-beside", daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            self._value.append(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread by result()
            self._error.append(exc)

    def result(self) -> T:
        """The function's value, once it has returned; its exception, raised here, if it raised."""
        self._thread.join()
        if self._error:
            raise self._error[0]
        return self._value[0]


def beside(fn: Callable[..., T], *args: Any) -> Beside[T]:
    """Start ``fn(*args)`` in a thread; ``.result()`` gives its value (or raises its exception)."""
    return Beside(fn, *args)

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
