"""Work in a background thread while this one does something else: imports, and numpy work beside numpy work.

:func:`beside` runs a function in a thread and gives a handle whose
:meth:`Beside.result` joins it and returns its value or raises its
exception: for two computations that need each other's inputs only (e.g. an
edge bootstrap and the difficulty refits of the same edges), mostly numpy
code that releases the GIL, so a second core runs the second.

:func:`beside_process` does the same in a forked child process where that is safe (Linux, two
or more CPUs, no thread of this process running but prefetches): for numpy work made of many
small operations, which holds the GIL between them, so that a thread beside it only takes turns.
The child computes ``fn(*args)`` on a copy-on-write image of this process and sends back the
pickled value; where a fork is not safe, or the child dies, the same function runs in a thread or
here, so the value never depends on where it was computed.

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
import pickle
import signal
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


class Forked(Generic[T]):
    """``fn(*args)`` computed in a forked child; :meth:`result` reads its pickled value (or exception).

    A child that sends nothing (killed, out of memory) has its work done again here, in the caller.
    """

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self._fn, self._args = fn, args
        read, write = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the child: compute, send, leave without running the parent's exit handlers
            code = 0
            try:
                os.close(read)
                try:
                    payload = pickle.dumps((True, fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException as exc:  # noqa: BLE001 - raised again in the parent by result()
                    payload = _pickled_error(exc)
                with os.fdopen(write, "wb") as out:
                    out.write(payload)
            except BaseException:  # noqa: BLE001 - nothing sent: the parent computes it itself
                code = 1
            finally:
                os._exit(code)
        os.close(write)
        self._read = read
        self._done: list[T] = []
        self._reaped = False

    def __del__(self) -> None:  # never collected (the caller raised first): stop the child, reap it
        if not getattr(self, "_reaped", True):
            self._reaped = True
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
                os.close(self._read)
            except OSError:
                pass

    def result(self) -> T:
        """The child's value; its exception, raised here; computed here if the child sent nothing."""
        if self._done:
            return self._done[0]
        with os.fdopen(self._read, "rb", closefd=False) as got:
            data = got.read()  # interrupted here (Ctrl-C), __del__ still stops and reaps the child
        os.waitpid(self._pid, 0)
        self._reaped = True
        os.close(self._read)
        sent: tuple[bool, Any] | None = None
        try:
            sent = pickle.loads(data) if data else None
        except Exception:  # noqa: BLE001 - a child killed while writing sent a torn value: not trusted
            sent = None
        if sent is None:
            value: T = self._fn(*self._args)
        elif not sent[0]:
            raise sent[1]
        else:
            value = sent[1]
        self._done.append(value)
        return value


def _pickled_error(exc: BaseException) -> bytes:
    try:
        return pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that does not pickle is sent as its text
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")), protocol=pickle.HIGHEST_PROTOCOL)


def fork_is_safe() -> bool:
    """Whether :func:`beside_process` may fork: Linux-like fork, two or more CPUs, and no thread of this
    process running but the main one and prefetches (which a fork waits for; see :func:`prefetch`).

    ``REPLICATE_NO_FORK`` set to a non-empty value (``REPLICATE_NO_FORK=1``) keeps everything in threads.
    """
    if not hasattr(os, "fork") or os.environ.get("REPLICATE_NO_FORK") or sys.platform == "darwin":
        return False
    try:
        if len(os.sched_getaffinity(0)) < 2:
            return False
    except AttributeError:
        return False
    return all(t is threading.main_thread() or t.name == PREFETCH_THREAD for t in threading.enumerate())


def beside_process(fn: Callable[..., T], *args: Any) -> Forked[T] | Beside[T]:
    """Start ``fn(*args)`` in a forked child where :func:`fork_is_safe`, else in a thread; ``.result()`` as for :func:`beside`.

    ``fn``'s value must pickle (its arguments are not sent: the child has them); ``fn`` must not write to files or streams
    the parent writes to (the child's writes are its own) and must not start threads or processes.
    """
    if fork_is_safe() and threading.current_thread() is threading.main_thread():
        return Forked(fn, *args)
    return Beside(fn, *args)


_running: list[threading.Thread] = []
PREFETCH_THREAD = "replicate-prefetch"
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
    thread = threading.Thread(target=_import, args=(missing,), name=PREFETCH_THREAD, daemon=True)
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
