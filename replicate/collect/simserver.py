"""A simulated OpenAI-compatible chat-completions endpoint for demos, dry runs and tests.

``POST /v1/chat/completions`` answers in the final-answer-line convention
(``Final answer: X``), correct with a per-model, per-item pass probability;
``GET /v1/models`` lists the models. Unknown model -> 404, wrong key -> 401
(whose message echoes the key sent, as a careless provider might),
an item listed in ``too_long`` -> 400 ``context_length_exceeded``, like a real
provider. Faults are injected at configured rates: 429 with Retry-After, 500,
hangs past the client's timeout, dropped connections, malformed JSON,
truncated outputs (``finish_reason: "length"``), refusals (the ``refusal``
field) and answers without an answer line.

Deterministic given the seed: the n-th request the server sees for a given
(model, prompt) draws its fault from ``(seed, model, prompt, "fault", n)``, and
the j-th fault-free answer draws correctness from ``(seed, model, prompt,
"answer", j)``. So the multiset of outcomes per (model, item) does not depend
on concurrency or timing.

Start it in-process with :func:`start_sim_server` (returns the server, whose
``port`` and ``url`` say where it listens) or as ``replicate sim-server``.
"""

from __future__ import annotations

import hashlib
import math
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import orjson

from replicate.collect.config import Item, load_items
from replicate.errors import BadInput
from replicate.tomlfile import read_toml

FAULTS = ("rate_429", "rate_500", "rate_hang", "rate_drop", "rate_malformed", "rate_truncate",
          "rate_refusal", "rate_no_answer", "rate_reasoning_only")
#: Where a model puts its reasoning text: nowhere, ``message.reasoning`` (vLLM, Ollama),
#: ``message.reasoning_content`` (llama.cpp, LiteLLM, DeepSeek) or a content list of typed parts.
REASONING_STYLES = ("none", "reasoning", "reasoning_content", "content_list")
REASONING_TEXT = "The user asks for a sum. I add the two numbers and check the result."


@dataclass(frozen=True, slots=True)
class SimModel:
    name: str
    p: float = 0.5  # pass probability for items without their own
    items: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    reasoning_tokens: int = 0
    reasoning: str = "none"  # one of REASONING_STYLES
    reject_params: frozenset[str] = frozenset()  # 400 unsupported_parameter when a request sets one
    bad_request: str | None = None  # every request gets a 400 with this message (naming nothing)
    snapshot: str | None = None  # the "model" a response reports (default: the name asked for)
    fingerprint: str | None = None  # system_fingerprint
    swap_after: int = 0  # after this many answered requests, report swap_snapshot / swap_fingerprint
    swap_snapshot: str | None = None
    swap_fingerprint: str | None = None

    def p_for(self, item_id: str | None) -> float:
        return self.items.get(item_id, self.p) if item_id is not None else self.p

    def reported(self, n: int) -> tuple[str, str | None]:
        """The snapshot and fingerprint reported with the ``n``-th answer (0-based)."""
        if self.swap_after and n >= self.swap_after:
            return self.swap_snapshot or self.snapshot or self.name, self.swap_fingerprint or self.fingerprint
        return self.snapshot or self.name, self.fingerprint


@dataclass(frozen=True, slots=True)
class SimConfig:
    """The simulated provider: models, fault rates, seed."""

    models: Mapping[str, SimModel]
    seed: int = 0
    latency: float = 0.0
    faults: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    retry_after: float = 1.0  # seconds sent in Retry-After with a 429
    hang_seconds: float = 30.0  # how long a hang lasts (set it past the client's timeout)
    too_long: frozenset[str] = frozenset()
    items: tuple[Item, ...] = ()
    api_key_env: str | None = None
    unknown_model: str = "openai"  # "openai": 404 model_not_found; "litellm": 400 "Invalid model name passed in"

    def __post_init__(self) -> None:
        if self.unknown_model not in ("openai", "litellm"):
            raise ValueError(f"unknown_model must be 'openai' or 'litellm', got {self.unknown_model!r}")
        for m in self.models.values():
            if m.reasoning not in REASONING_STYLES:
                raise ValueError(f"[models.{m.name}] reasoning must be one of {', '.join(REASONING_STYLES)}, "
                                 f"got {m.reasoning!r}")
        for name, rate in self.faults.items():
            if name not in FAULTS:
                raise ValueError(f"unknown fault {name!r}; allowed: {', '.join(FAULTS)}")
            if not 0 <= rate <= 1:
                raise ValueError(f"fault rate {name} must lie in [0, 1], got {rate}")
        if sum(self.faults.values()) > 1:
            raise ValueError("fault rates must sum to at most 1")


DEFAULT_SIM = SimConfig(models=MappingProxyType({"sim-a": SimModel("sim-a", 0.5), "sim-b": SimModel("sim-b", 0.8)}))


def _num(value: object, name: str, path: Path, *, integer: bool = False, high: float | None = None) -> float:
    """A TOML number for ``name``, finite, >= 0 and at most ``high`` (a probability: 1); true/false, strings,
    nan, inf and numbers out of range are bad input naming the key."""
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not isinstance(value, (int, float)):
        kind = "an integer" if integer else "a number"
        raise BadInput(f"{name} must be {kind}, got {value!r}", path=path)
    if not math.isfinite(value) or value < 0 or (high is not None and value > high):
        where = f"in [0, {high:g}]" if high is not None else "finite and >= 0"
        raise BadInput(f"{name} must be {where}, got {value!r}", path=path)
    return value if integer else float(value)


_MODEL_KEYS = {"p", "items", "reasoning_tokens", "reasoning", "reject_params", "bad_request", "snapshot",
               "fingerprint", "swap_after", "swap_snapshot", "swap_fingerprint"}


def _str(value: object, name: str, path: Path) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{name} must be a string, got {value!r}", path=path)
    return value


def load_sim_config(path: str | Path) -> SimConfig:
    """Read a sim-server TOML (see ``fixtures/collect/sim.toml``)."""
    path = Path(path)
    data = read_toml(path, what="sim config")
    allowed = {"seed", "latency", "items", "too_long", "api_key_env", "models", "faults", "unknown_model"}
    unknown = set(data) - allowed
    if unknown:
        raise BadInput(f"unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(allowed))}", path=path)
    models = {}
    for name, spec in (data.get("models") or {}).items():
        if not isinstance(spec, dict):
            raise BadInput(f"[models.{name}] must be a table", path=path)
        where = f"[models.{name}]"
        unknown = set(spec) - _MODEL_KEYS
        if unknown:
            raise BadInput(f"{where} unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                           f"{', '.join(sorted(_MODEL_KEYS))}", path=path)
        models[name] = SimModel(
            name,
            _num(spec.get("p", 0.5), f"{where} p", path, high=1),
            MappingProxyType({
                str(k): _num(v, f"{where} items.{k}", path, high=1) for k, v in (spec.get("items") or {}).items()
            }),
            int(_num(spec.get("reasoning_tokens", 0), f"{where} reasoning_tokens", path, integer=True)),
            reasoning=_str(spec.get("reasoning", "none"), f"{where} reasoning", path) or "none",
            reject_params=frozenset(_str(x, f"{where} reject_params", path) or "" for x in
                                    spec.get("reject_params", [])),
            bad_request=_str(spec.get("bad_request"), f"{where} bad_request", path),
            snapshot=_str(spec.get("snapshot"), f"{where} snapshot", path),
            fingerprint=_str(spec.get("fingerprint"), f"{where} fingerprint", path),
            swap_after=int(_num(spec.get("swap_after", 0), f"{where} swap_after", path, integer=True)),
            swap_snapshot=_str(spec.get("swap_snapshot"), f"{where} swap_snapshot", path),
            swap_fingerprint=_str(spec.get("swap_fingerprint"), f"{where} swap_fingerprint", path),
        )
    if not models:
        raise BadInput("no [models.NAME] tables", path=path)
    faults = {k: _num(v, f"[faults] {k}", path, high=None if k in ("retry_after", "hang_seconds") else 1)
              for k, v in (data.get("faults") or {}).items()}
    retry_after = faults.pop("retry_after", 1.0)
    hang_seconds = faults.pop("hang_seconds", 30.0)
    items: tuple[Item, ...] = ()
    if "items" in data:
        items = load_items(path.parent / data["items"])
    try:
        return SimConfig(
            models=MappingProxyType(models),
            seed=int(_num(data.get("seed", 0), "seed", path, integer=True)),
            latency=_num(data.get("latency", 0.0), "latency", path),
            faults=MappingProxyType(faults),
            retry_after=retry_after,
            hang_seconds=hang_seconds,
            too_long=frozenset(str(x) for x in data.get("too_long", [])),
            items=items,
            api_key_env=data.get("api_key_env"),
            unknown_model=str(data.get("unknown_model", "openai")),
        )
    except ValueError as exc:
        raise BadInput(str(exc), path=path) from None


def _err(message: str, type_: str, code: str | None, *, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _u(*parts: object) -> float:
    """A uniform [0, 1) draw determined by its parts."""
    h = hashlib.blake2b("\0".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64


def wrong_answer(reference: Any) -> str:
    """A plausible wrong answer: the next letter, the next integer, or a negation."""
    ref = str(reference).strip()
    if len(ref) == 1 and "A" <= ref.upper() <= "J":
        return "B" if ref.upper() == "A" else "A"
    try:
        return str(int(ref) + 1)
    except ValueError:
        return f"not {ref}" if ref else "unknown"


class SimServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, addr: tuple[str, int], config: SimConfig, api_key: str | None) -> None:
        super().__init__(addr, _Handler)
        self.config = config
        self.api_key = api_key
        self.by_hash = {it.request_hash: it for it in config.items}
        self.counts: Counter = Counter()  # (model, prompt hash, stream) -> draws so far
        self.stats: Counter = Counter()  # outcome -> times served
        self.lock = threading.Lock()
        self.closing = threading.Event()
        from replicate.collect.simbatch import SimBatchState

        self.batch = SimBatchState()  # the Files and Batches endpoints' state; set .batch.faults in tests
        self._thread: threading.Thread | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # the client hung up (e.g. after its timeout): expected with injected faults
        super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{str(self.server_address[0])}:{self.port}/v1"

    def next_draw(self, model: str, key: str, stream: str) -> float:
        with self.lock:
            n = self.counts[(model, key, stream)]
            self.counts[(model, key, stream)] = n + 1
        return _u(self.config.seed, model, key, stream, n)

    def count(self, outcome: str) -> None:
        with self.lock:
            self.stats[outcome] += 1

    def _fault(self, u: float) -> str | None:
        acc = 0.0
        for name in FAULTS:
            acc += self.config.faults.get(name, 0.0)
            if u < acc:
                return name
        return None

    def answer(self, req: Mapping[str, Any], *, transport: bool) -> tuple[int, Any, Mapping[str, str]]:
        """(status, JSON body, headers) for one chat-completions request body.

        Status 0 means a transport fault (``body`` names it: hang, drop,
        malformed), only drawn when ``transport`` (not inside a batch, where the
        provider retries those itself).
        """
        cfg = self.config
        model, messages = req["model"], req["messages"]
        if model not in cfg.models:
            self.count("404")
            if cfg.unknown_model == "litellm":
                return 400, _err(f"litellm.BadRequestError: Invalid model name passed in model={model}. Call "
                                 "`/v1/models` to view available models for your key.", "invalid_request_error",
                                 "400"), {}
            return 404, _err(f"The model `{model}` does not exist or you do not have access to it.",
                             "invalid_request_error", "model_not_found"), {}
        spec = cfg.models[model]
        rejected = sorted(p for p in spec.reject_params if p in req)
        if rejected:
            self.count("400")
            p = rejected[0]
            alt = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}.get(p)
            hint = f" Use '{alt}' instead." if alt else ""
            return 400, _err(f"Unsupported parameter: '{p}' is not supported with this model.{hint}",
                             "invalid_request_error", "unsupported_parameter", param=p), {}
        if spec.bad_request is not None:
            self.count("400")
            return 400, _err(spec.bad_request, "invalid_request_error", None), {}
        key = hashlib.sha256(orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
        item = self.by_hash.get(key)
        if item is not None and item.id in cfg.too_long:
            self.count("400")
            return 400, _err("This model's maximum context length is 128 tokens. Please reduce the length "
                             "of the messages.", "invalid_request_error", "context_length_exceeded",
                             param="messages"), {}
        if cfg.latency and transport:
            time.sleep(cfg.latency)
        fault = self._fault(self.next_draw(model, key, "fault"))
        if not transport and fault in ("rate_429", "rate_500", "rate_hang", "rate_drop", "rate_malformed"):
            fault = None
        self.count(fault or "ok")
        if fault == "rate_429":
            return 429, _err("Rate limit reached. Please try again later.", "requests", "rate_limit_exceeded"), \
                {"Retry-After": f"{cfg.retry_after:g}"}
        if fault == "rate_500":
            return 500, _err("The server had an error while processing your request.", "server_error", None), {}
        if fault in ("rate_hang", "rate_drop", "rate_malformed"):
            return 0, fault, {}
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages if isinstance(m, dict))
        reference = item.reference if item is not None else "yes"
        refusal = None
        finish = "stop"
        reasoning: str | None = REASONING_TEXT if spec.reasoning != "none" else None
        if fault == "rate_refusal":
            text, refusal = None, "I'm sorry, but I can't help with that."
        elif fault == "rate_truncate":
            text, finish = "Let me think about this step by step. First, we consider", "length"
            if reasoning is not None:  # a thinking model runs out of tokens while still thinking
                text = None
        elif fault == "rate_no_answer":
            text = "I considered the question carefully but could not settle on an answer."
        elif fault == "rate_reasoning_only":
            text, reasoning = None, REASONING_TEXT
        else:
            correct = self.next_draw(model, key, "answer") < spec.p_for(item.id if item else None)
            self.count("correct" if correct else "wrong")
            answer = reference if correct else wrong_answer(reference)
            text = f"Working through the question.\nFinal answer: {answer}"
        with self.lock:
            n = self.counts[(model, "", "answered")]
            self.counts[(model, "", "answered")] = n + 1
        snapshot, fingerprint = spec.reported(n)
        completion = len(text or refusal or "") // 4 + 1
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": refusal}
        style = spec.reasoning if spec.reasoning != "none" or reasoning is None else "reasoning"
        if reasoning is not None and style == "content_list":
            parts = [{"type": "thinking", "thinking": reasoning}]
            if text is not None:
                parts.append({"type": "text", "text": text})
            message["content"] = parts
        elif reasoning is not None:
            message[style] = reasoning
        body = {
            "id": f"chatcmpl-sim-{key[:8]}-{n}",
            "object": "chat.completion",
            "created": 1_760_000_000 + n,
            "model": snapshot,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_chars // 4 + 4,
                "completion_tokens": completion + spec.reasoning_tokens,
                "total_tokens": prompt_chars // 4 + 4 + completion + spec.reasoning_tokens,
                "completion_tokens_details": {"reasoning_tokens": spec.reasoning_tokens},
            },
        }
        if fingerprint is not None:
            body["system_fingerprint"] = fingerprint
        return 200, body, {}

    def stop(self) -> None:
        """Shut down (releases hanging requests) and close the socket."""
        self.closing.set()
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "SimServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_sim_server(
    config: SimConfig = DEFAULT_SIM, *, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None
) -> SimServer:
    """Start the simulated endpoint in a background thread; ``port=0`` picks a free port.

    ``api_key``: the only key accepted (``None`` accepts any). Stop it with
    :meth:`SimServer.stop` or use it as a context manager.
    """
    server = SimServer((host, port), config, api_key)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="sim-server")
    server._thread = t
    t.start()
    return server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: SimServer
    server_version = "replicate-sim/1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet; never logs headers
        pass

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] = MappingProxyType({})) -> None:
        self.send_response(status)
        if "Content-Type" not in headers:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        # headers and body in one write (no Nagle / delayed-ACK stall between them)
        self._headers_buffer.extend([b"\r\n", body])  # type: ignore[attr-defined]  # private, not in typeshed
        self.flush_headers()

    def _error(self, status: int, message: str, type_: str, code: str | None = None,
               headers: Mapping[str, str] = MappingProxyType({})) -> None:
        self._send(status, orjson.dumps({"error": {"message": message, "type": type_, "code": code}}), headers)

    def _authorised(self) -> bool:
        key = self.server.api_key
        if key is None:
            return True
        sent = self.headers.get("Authorization", "")
        if sent == f"Bearer {key}":
            return True
        self.server.count("401")
        # echoes the key it was sent, as a careless provider might: the client must scrub it
        self._error(401, f"Incorrect API key provided: {sent.removeprefix('Bearer ')}.", "invalid_request_error",
                    "invalid_api_key")
        return False

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_GET(self) -> None:
        route = self.path.rstrip("/")
        if route.startswith(("/v1/files/", "/v1/batches")):
            if self._authorised():
                from replicate.collect.simbatch import handle_get

                handle_get(self, route)
            return
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}", "invalid_request_error")
            return
        if not self._authorised():
            return
        data = [{"id": m, "object": "model", "owned_by": "replicate-sim"} for m in self.server.config.models]
        self._send(200, orjson.dumps({"object": "list", "data": data}))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        route = self.path.rstrip("/")
        if route in ("/v1/files", "/v1/batches") or (route.startswith("/v1/batches/") and route.endswith("/cancel")):
            if self._authorised():
                from replicate.collect.simbatch import handle_post

                handle_post(self, route, raw)
            return
        if route != "/v1/chat/completions":
            self._error(404, f"no route {self.path}", "invalid_request_error")
            return
        if not self._authorised():
            return
        try:
            req = orjson.loads(raw)
            req["model"], req["messages"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            self._error(400, "the request body must be JSON with 'model' and 'messages'", "invalid_request_error")
            return
        status, body, headers = self.server.answer(req, transport=True)
        if status == 0:  # a transport fault
            if body == "rate_hang":
                self.server.closing.wait(self.server.config.hang_seconds)
                self._drop()
            elif body == "rate_drop":
                self._drop()
            else:
                self._send(200, b'{"id": "chatcmpl-sim", "choices": [{"message": {"content": "Final ans')
            return
        try:
            self._send(status, orjson.dumps(body), headers)
        except (BrokenPipeError, ConnectionResetError):
            pass



def sim_items_note(items: Sequence[Item]) -> str:
    return f"{len(items)} items known" if items else "no items file: answers 'yes' to every prompt"
