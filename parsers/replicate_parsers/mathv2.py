"""Math answer equivalence, second version: more true equivalences, and a hard time limit.

``math-equivalence@1`` hands a safe subset of text to sympy in the scorer's
own process: ``Final answer: 9^9^9`` makes sympy build a number with 369
million digits, and the scorer never returns. Version 2 (frozen once released):

1. refuses power towers (``a^b^c``, ``a^(b^c)``) and exponents above 10,000
   before sympy sees them (not shown equivalent);
2. runs every sympy comparison in a worker process with a hard time limit
   (default 2 s per answer); a comparison past it is killed, the worker is
   restarted, and the answer is not shown equivalent;
3. accepts these true equivalences before sympy: ``\\frac12`` and ``1/2``
   (brace-less ``\\frac``), ``50\\%`` and ``50``, ``90^\\circ`` and ``90``,
   ``\\{1,2\\}`` and ``{2,1}`` (sets and comma lists compare as multisets,
   element by element), ``\\pm3`` and ``3, -3``.
"""

from __future__ import annotations

import multiprocessing
import re
import threading
from multiprocessing.connection import Connection
from typing import Any

from replicate.errors import UsageError
from replicate_parsers.answers import strip_math, to_sympy_text

DEFAULT_TIME_LIMIT = 2.0
_MAX_EXPONENT = 10_000

_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree")
_PERCENT = re.compile(r"\\?%$")
_FRAC_SHORT = re.compile(r"\\frac\s*(\{[^{}]*\}|\d)\s*(\{[^{}]*\}|\d)")
_SET = re.compile(r"^(?:\\\{|\{|\\left\\\{)(?P<body>.*?)(?:\\\}|\}|\\right\\\})$")


def _brace(x: str) -> str:
    return x if x.startswith("{") else "{" + x + "}"


def clean_v2(s: str) -> str:
    """Degrees, a trailing percent sign and brace-less ``\\frac12`` normalised away; then :func:`strip_math`."""
    s = s.strip()
    s = _DEGREES.sub("", s)
    s = _FRAC_SHORT.sub(lambda m: "\\frac" + _brace(m[1]) + _brace(m[2]), s)
    s = s.replace("\\text{ }", "")
    s = strip_math(s)
    s = _PERCENT.sub("", s)
    return s


def _elements(s: str) -> list[str] | None:
    """The elements of a set ``{a,b}`` / ``\\{a,b\\}``, a comma list ``a, b``, or ``\\pm a``; else ``None``."""
    s = s.strip().replace("$", "").replace("\\left", "").replace("\\right", "").strip().rstrip(".")
    m = _SET.match(s)
    body = m["body"] if m else s
    if body.startswith("\\pm") and "," not in body:
        v = body[3:].strip()
        return [v, "-" + v] if v else None
    if "," not in body or re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", body):
        return None
    parts = _split_top(body)
    return parts if len(parts) > 1 else None


def _split_top(body: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in body:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [p for p in out if p]


_CHAIN = re.compile(r"\*\*\s*\(?[^()]*?\*\*")
_EXP = re.compile(r"\*\*\s*\(?\s*(\d+)")


def too_costly(sympy_text: str) -> bool:
    """A power tower or an exponent above 10,000: refused before sympy sees it."""
    if _CHAIN.search(sympy_text):
        return True
    return any(int(m[1]) > _MAX_EXPONENT for m in _EXP.finditer(sympy_text))


def _sympy_equal(sa: str, sb: str) -> bool:
    import sympy
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    tr = standard_transformations + (implicit_multiplication_application, convert_xor)
    try:
        ea = parse_expr(sa, transformations=tr, evaluate=True)
        eb = parse_expr(sb, transformations=tr, evaluate=True)
        return bool(sympy.simplify(ea - eb) == 0)
    except Exception:  # unparseable or unsupported: not shown equivalent
        return False


#: How long a fresh worker may take to start and import sympy (not counted in any comparison's time limit).
START_LIMIT = 120.0
_READY = "ready"


def _serve(conn: Connection) -> None:  # pragma: no cover - runs in the worker process
    try:  # imported before the first question: start-up is not a comparison's time
        import sympy  # noqa: F401
        from sympy.parsing import sympy_parser  # noqa: F401
    except ImportError as exc:
        conn.send(f"cannot import sympy: {exc}")
        return
    conn.send(_READY)
    while True:
        try:
            sa, sb = conn.recv()
        except EOFError:
            return
        conn.send(_sympy_equal(sa, sb))


class SympyWorker:
    """One worker process answering sympy comparisons, killed and restarted past the time limit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: Any = None
        self._conn: Connection | None = None
        self.timeouts = 0

    def _start(self) -> None:
        # forkserver, not fork: a fork taken while another thread of this process
        # (an HTTP server, a thread pool) holds a lock can leave the child stuck,
        # which reads as a timeout; the fork server is single-threaded.
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child,), daemon=True,  # type: ignore[attr-defined]
                                 name="replicate-sympy")
        self._proc.start()
        child.close()
        self._conn = parent
        # wait for sympy to be imported: a slow start (a busy machine) must not read as a comparison's timeout
        try:
            said = parent.recv() if parent.poll(START_LIMIT) else f"no answer within {START_LIMIT:.0f} s"
        except (EOFError, OSError):
            said = "it exited while starting"
        if said != _READY:
            self._kill()
            raise UsageError(f"math-equivalence@2 needs a sympy worker process and it did not start ({said}); "
                             "install sympy: pip install 'replicate-audit[math]'")

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def equal(self, sa: str, sb: str, time_limit: float) -> bool | None:
        """``sympy.simplify(a - b) == 0``, or ``None`` when it did not finish within ``time_limit`` seconds."""
        with self._lock:
            if self._proc is None or not self._proc.is_alive():
                self._kill()
                self._start()
            assert self._conn is not None
            try:
                self._conn.send((sa, sb))
                if self._conn.poll(time_limit):
                    return bool(self._conn.recv())
            except (EOFError, OSError):
                self._kill()
                return None
            self.timeouts += 1
            self._kill()
            return None

    def close(self) -> None:
        with self._lock:
            self._kill()


WORKER = SympyWorker()


def _scalar_equivalent(a: str, b: str, time_limit: float) -> bool:
    ca, cb = clean_v2(a), clean_v2(b)
    if ca == cb:
        return True
    sa, sb = to_sympy_text(ca), to_sympy_text(cb)
    if sa is None or sb is None or too_costly(sa) or too_costly(sb):
        return False
    return WORKER.equal(sa, sb, time_limit) is True


def math_equivalent_v2(answer: str, reference: str, *, time_limit: float = DEFAULT_TIME_LIMIT) -> bool:
    """Equivalence under the rules of this module's docstring; never runs past ``time_limit`` per comparison."""
    ea, eb = _elements(answer), _elements(str(reference))
    if ea is not None or eb is not None:
        if ea is None or eb is None or len(ea) != len(eb):
            return False
        rest = list(eb)
        for x in ea:  # multiset match, element by element
            j = next((i for i, y in enumerate(rest) if _scalar_equivalent(x, y, time_limit)), None)
            if j is None:
                return False
            rest.pop(j)
        return True
    return _scalar_equivalent(answer, str(reference), time_limit)
