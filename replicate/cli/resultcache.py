"""The result cache: a command run again over unchanged inputs prints its stored output without computing it.

This module is the command line's fast path: it imports only the standard
library, so a hit costs the interpreter's start-up and a few hundred
``stat`` calls, not typer, numpy or scipy.

What is cached: the standard output and standard error bytes of a command of
:data:`COMMANDS` (pure read-and-compute commands: no file written, no network,
no clock in the output) that exited 0. An entry is found by an *invocation
key*, the sha256 of: the entry format, the interpreter (``sys.executable``,
its version), the working directory, the arguments (without ``--verbose``),
the environment variables that can change output (``REPLICATE_*``,
locale, terminal, ``PYTHON*``) and whether each stream is a terminal and its
encoding. It is trusted only when every *input* it records is unchanged:

- every file the command opened for reading (run files, runs TOML, gold,
  claims, package metadata: anything through ``open``), by its stat
  (size, ``mtime_ns``, ``ctime_ns``, inode, device);
- every path whose existence or stat it looked at, and every folder it
  listed (a file added to a folder changes the folder's stat);
- the source file of every module loaded outside the standard library
  (replicate itself, plugins, numpy, ...): a new version or an edited
  plugin misses.

Nothing under the cache root counts as an input (the run and label caches
are themselves keyed by these inputs). A run that wrote a file outside the
cache root, read standard input, met a damaged cache entry, or whose inputs
changed while it ran is not stored. ``--no-cache`` neither reads nor writes an
entry; ``--verbose`` says on stderr whether it was a hit.

Layout: ``results/ab/abcdef....result`` under the cache root: the key line
(:func:`replicate.cachedir.keyed`: an entry is served only under the key it was
stored with), ``MAGIC``, the
body length (8 bytes, little-endian), the sha256 of the body (32 bytes), then
the body: a JSON header length (8 bytes), the JSON header (inputs, exit code,
stream lengths), the stdout bytes and the stderr bytes. Written to a temporary
file and renamed into place; a damaged entry is ignored and rebuilt, and so is one
that is a link, a FIFO or a device, or larger than :data:`MAX_ENTRY` (never followed
or read: see :func:`replicate.cachedir.read_entry`).
"""

from __future__ import annotations

import builtins
import importlib
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from replicate.cachedir import BadEntry, keyed, read_entry, root_path, write_atomic


def _builtin_sha256() -> Callable[..., Any]:
    """The built-in sha256 (hashlib would load OpenSSL, which costs start-up time on a hit); the same digests."""
    for name in ("_sha2", "_sha256"):
        try:
            return importlib.import_module(name).sha256
        except (ImportError, AttributeError):
            continue
    from hashlib import sha256 as openssl_sha256

    return openssl_sha256


sha256 = _builtin_sha256()
#: From this size on, an entry's body is hashed by hashlib's sha256 (OpenSSL: about 0.6 ms a megabyte against
#: 3-5 ms built in), whose import (about 2.5 ms) a large body repays; smaller ones by the built-in. Same digests.
LARGE_BODY = 1 << 20


def body_digest(body: bytes) -> bytes:
    """The sha256 of an entry's body (whichever implementation is faster for its size)."""
    if len(body) < LARGE_BODY:
        return bytes(sha256(body).digest())
    import hashlib

    return hashlib.sha256(body).digest()


MAGIC = b"RPLRES1\n"
#: The largest result entry read (a command's stored output); a larger file is not an entry.
MAX_ENTRY = 1 << 30
_HEAD = len(MAGIC) + 8 + 32

#: Commands (the words before the options) whose output is a function of their inputs alone.
COMMANDS = frozenset({
    ("parse",), ("compare",), ("chain",), ("cells",), ("floor",), ("matrix",),
    ("parsers", "audit"), ("items",), ("screen",),
})
#: Root options (before the command): those that take no value.
_ROOT_FLAGS = frozenset({"--no-cache", "--verbose"})
#: Environment variables besides REPLICATE_* whose value can change what a command prints.
_ENV = (
    "COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "LANG", "LANGUAGE",
    "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC", "TZ", "HOME", "XDG_CACHE_HOME",
    "PYTHONPATH", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED", "PYTHONWARNINGS",
)
#: The standard library's folder (its site-packages are not standard library).
_STDLIB = os.path.join(os.path.dirname(os.path.abspath(os.__file__)), "")
_SKIP = ("/proc/", "/dev/", "/sys/")
_os_stat = os.stat  # the recorder replaces os.stat; the cache's own stat calls are not inputs

Stat = tuple[int, int, int, int, int] | None


def _stdlib(path: str) -> bool:
    return path.startswith(_STDLIB) and "-packages" not in path[len(_STDLIB):]


def _stat(path: str) -> Stat:
    try:
        st = _os_stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _split(argv: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """(root options, the command and its arguments) of a command of :data:`COMMANDS`, else None."""
    args = list(argv)
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] not in _ROOT_FLAGS:
            return None  # --version, --help, completion options, or an unknown option
        i += 1
    root, rest = args[:i], args[i:]
    if not rest:
        return None
    words = tuple(rest[:2]) if rest[0] == "parsers" else (rest[0],)
    return (root, rest) if words in COMMANDS else None


def read_and_compute(argv: Sequence[str]) -> bool:
    """Whether ``argv`` runs a command of :data:`COMMANDS` (cached or not: ``--no-cache`` too)."""
    return _split(argv) is not None


def invocation(argv: Sequence[str]) -> tuple[list[str], bool] | None:
    """(the arguments that key the entry, whether ``--verbose`` was given), or None when the command is not cached."""
    split = _split(argv)
    if split is None or "--no-cache" in split[0]:
        return None
    root, rest = split
    if any(a in ("--help", "-h", "-") for a in rest):
        return None  # help depends on the terminal; '-' is standard input
    return rest, "--verbose" in root


def invocation_key(args: Sequence[str]) -> str:
    h = sha256(MAGIC)
    env = {k: v for k, v in os.environ.items() if k.startswith("REPLICATE_") or k in _ENV}
    streams = [(s.isatty(), getattr(s, "encoding", None), getattr(s, "errors", None)) for s in (sys.stdout, sys.stderr)]
    h.update(json.dumps({
        "python": [sys.executable, sys.version, sys.flags.utf8_mode],
        "cwd": os.getcwd(),
        "args": list(args),
        "env": sorted(env.items()),
        "streams": streams,
    }).encode())
    return h.hexdigest()


class ResultCache:
    """Result entries under ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, key: str) -> str:
        return os.path.join(self.root, "results", key[:2], f"{key}.result")

    def get(self, key: str) -> tuple[int, bytes, bytes] | None:
        """(exit code, stdout, stderr) of an intact entry whose inputs are all unchanged, else None."""
        try:
            data = read_entry(self.path(key), key, max_size=MAX_ENTRY)
        except BadEntry:
            return None  # a link, a FIFO, a device, too large or another key's entry: a miss, rewritten
        if data is None:
            return None
        entry = decode(data)
        if entry is None:
            return None
        inputs, code, out, err = entry
        for path, stat in inputs:
            if _stat(path) != (tuple(stat) if stat is not None else None):
                return None
        return code, out, err

    def put(self, key: str, inputs: dict[str, Stat], code: int, out: bytes, err: bytes) -> None:
        write_atomic(self.path(key), keyed(key, encode(inputs, code, out, err)))


def encode(inputs: dict[str, Stat], code: int, out: bytes, err: bytes) -> bytes:
    header = json.dumps({"inputs": sorted(inputs.items()), "code": code, "out": len(out), "err": len(err)}).encode()
    body = len(header).to_bytes(8, "little") + header + out + err
    return MAGIC + len(body).to_bytes(8, "little") + body_digest(body) + body


def decode(data: bytes) -> tuple[list[tuple[str, Any]], int, bytes, bytes] | None:
    """The inputs, exit code, stdout and stderr of an entry's bytes, or None when it is damaged."""
    if len(data) < _HEAD or not data.startswith(MAGIC):
        return None
    body = data[_HEAD:]
    if int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little") != len(body):
        return None
    if body_digest(body) != data[len(MAGIC) + 8 : _HEAD]:
        return None
    try:
        hlen = int.from_bytes(body[:8], "little")
        header = json.loads(body[8 : 8 + hlen])
        pos = 8 + hlen
        out, err = body[pos : pos + header["out"]], body[pos + header["out"] :]
        if len(err) != header["err"]:
            return None
        return [(p, s) for p, s in header["inputs"]], int(header["code"]), out, err
    except (ValueError, KeyError, TypeError):
        return None


class _TextTee:
    """A text stream that writes through to ``stream`` and keeps the encoded bytes of what went through."""

    def __init__(self, stream: Any, sink: list[bytes]) -> None:
        self._stream = stream
        self._sink = sink
        self.encoding = stream.encoding
        self.errors = stream.errors
        self.buffer = _BinaryTee(stream, sink)

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self._sink.append(s.encode(self.encoding or "utf-8", self.errors or "strict"))
        return self._stream.write(s)

    def writelines(self, lines: Any) -> None:
        for s in lines:
            self.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _BinaryTee:
    def __init__(self, stream: Any, sink: list[bytes]) -> None:
        self._stream = stream
        self._sink = sink

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._stream.flush()
        self._sink.append(data)
        return self._stream.buffer.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream.buffer, name)


class Recorder:
    """While active: every input the command looks at, and whether it did something that must not be replayed."""

    def __init__(self, cache_root: str) -> None:
        self.inputs: dict[str, Stat] = {}
        self.refused: str | None = None  # why this run is not stored
        self._root = os.path.join(os.path.abspath(cache_root), "")
        self._saved: list[tuple[Any, str, Any]] = []
        self.out: list[bytes] = []
        self.err: list[bytes] = []

    def refuse(self, why: str) -> None:
        if self.refused is None:
            self.refused = why

    def _path(self, p: Any) -> str | None:
        if isinstance(p, int):
            return None
        try:
            path = os.path.abspath(os.fsdecode(p))
        except (TypeError, ValueError):
            return None
        if path.startswith(_SKIP) or (path + os.sep).startswith(self._root) or self._root.startswith(path.rstrip(os.sep) + os.sep):
            return None  # the cache, or a folder above it (looked at when the cache is created)
        return path

    def _saw(self, p: Any) -> None:
        path = self._path(p)
        if path is not None and path not in self.inputs:
            self.inputs[path] = _stat(path)

    def _wrote(self, p: Any) -> None:
        if self._path(p) is not None:
            self.refuse(f"wrote {os.fsdecode(p)}")

    def _patch(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        orig = getattr(owner, name)
        self._saved.append((owner, name, orig))
        setattr(owner, name, make(orig))

    def start(self) -> None:
        rec = self

        def open_(orig: Any) -> Any:
            def opened(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
                if any(c in mode for c in "wax+"):
                    rec._wrote(file)
                else:
                    rec._saw(file)
                return orig(file, mode, *args, **kwargs)
            return opened

        def os_open(orig: Any) -> Any:
            def opened(path: Any, flags: int, *args: Any, **kwargs: Any) -> Any:
                if kwargs.get("dir_fd") is not None:
                    rec.refuse("opened a path relative to a folder descriptor")
                elif flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
                    rec._wrote(path)
                else:
                    rec._saw(path)
                return orig(path, flags, *args, **kwargs)
            return opened

        def seeing(orig: Any) -> Any:
            def seen(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
                if kwargs.get("dir_fd") is not None:
                    rec.refuse("looked at a path relative to a folder descriptor")
                else:
                    rec._saw(path)
                return orig(path, *args, **kwargs)
            return seen

        def moving(orig: Any) -> Any:
            def moved(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
                rec._wrote(dst)
                return orig(src, dst, *args, **kwargs)
            return moved

        opener = open_(builtins.open)
        self._saved.append((builtins, "open", builtins.open))
        self._saved.append((io, "open", io.open))
        builtins.open = io.open = opener
        self._patch(os, "open", os_open)
        for name in ("stat", "scandir", "listdir"):
            self._patch(os, name, seeing)
        for name in ("replace", "rename"):
            self._patch(os, name, moving)
        self._saved.append((sys, "stdout", sys.stdout))
        self._saved.append((sys, "stderr", sys.stderr))
        self._saved.append((sys, "stdin", sys.stdin))
        sys.stdout = _TextTee(sys.stdout, self.out)
        sys.stderr = _TextTee(sys.stderr, self.err)
        sys.stdin = _Refusing(sys.stdin, self)

    def stop(self) -> None:
        for owner, name, orig in reversed(self._saved):
            setattr(owner, name, orig)
        self._saved.clear()

    def modules(self) -> None:
        """Add the source file of every loaded module outside the standard library to the inputs."""
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if isinstance(f, str) and not _stdlib(os.path.abspath(f)):
                self._saw(f)
        for p in sys.path:  # a package added to or removed from a folder on sys.path
            if p and not _stdlib(os.path.join(os.path.abspath(p), "")):
                self._saw(p)

    def changed(self) -> str | None:
        """An input whose stat is not the one it had when it was first seen, if any."""
        return next((path for path, stat in self.inputs.items() if _stat(path) != stat), None)


class _Refusing:
    """Standard input: a run that reads it is not stored."""

    def __init__(self, stream: Any, rec: Recorder) -> None:
        self._stream = stream
        self._rec = rec

    def __getattr__(self, name: str) -> Any:
        if name in ("read", "readline", "readlines", "buffer", "__iter__", "__next__", "fileno"):
            self._rec.refuse("read standard input")
        return getattr(self._stream, name)

    def __iter__(self) -> Any:
        self._rec.refuse("read standard input")
        return iter(self._stream)


#: The recorder of the command being run, if any (the CLI tells it about damaged cache entries).
ACTIVE: list[Recorder] = []


def refuse(why: str) -> None:
    """Do not store the running command's result (e.g. it met a damaged cache entry, so its stderr says so)."""
    for rec in ACTIVE:
        rec.refuse(why)


def real_stderr() -> Any:
    """Standard error past the recorder: for lines that must not be replayed (``--verbose`` cache lines)."""
    for owner, name, orig in ACTIVE[0]._saved if ACTIVE else ():
        if owner is sys and name == "stderr":
            return orig
    return sys.stderr


def run(argv: Sequence[str], main: Callable[[], Any]) -> int:
    """Run ``main`` (the command line) for ``argv`` through the result cache; the exit code."""
    found = invocation(argv)
    if found is None:
        return _exit_code(main)
    args, verbose = found
    root = root_path()
    cache = ResultCache(root)
    key = invocation_key(args)
    hit = cache.get(key)
    if hit is not None:
        stored, out, err = hit
        sys.stdout.flush()
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stderr.buffer.write(err)
        if verbose:
            sys.stderr.buffer.write(f"result cache: hit ({key[:16]}): the output of an earlier run over unchanged "
                                    "inputs\n".encode())
        sys.stderr.flush()
        return stored
    rec = Recorder(root)
    ACTIVE.append(rec)
    rec.start()
    try:
        code = _exit_code(main)
    finally:
        rec.stop()
        ACTIVE.remove(rec)
    if code != 0:
        rec.refuse(f"exit code {code}")
    if rec.refused is None:
        rec.modules()
        changed = rec.changed()
        if changed is not None:
            rec.refuse(f"{changed} changed while the command ran")
        else:
            cache.put(key, rec.inputs, code, b"".join(rec.out), b"".join(rec.err))
    if verbose:
        sys.stderr.write(f"result cache: miss ({key[:16]})" + (f"; not stored: {rec.refused}" if rec.refused else "") + "\n")
    return code


def _exit_code(main: Callable[[], Any]) -> int:
    try:
        main()
    except SystemExit as exc:
        c = exc.code
        if c is None:
            return 0
        if isinstance(c, int):
            return c
        print(c, file=sys.stderr)
        return 1
    return 0
